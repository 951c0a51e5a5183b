"""An accounts server in-process (real gRPC over loopback, the real store and
Redis) for the accounts tests: ``accounts_env`` builds one per test on
``store_url`` (PostgreSQL and SQLite)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator

import grpc
import pytest
import redis.asyncio as aioredis
import sqlalchemy as sa

from roundhouse.v1 import accounts_pb2, accounts_pb2_grpc
from services.accounts.limiter import SigninLimiter
from services.accounts.models import Account, ApiToken
from services.accounts.revocations import publish_revocation
from services.accounts.server import SYSTEM_BOTS, AccountsServicer
from services.accounts.store import AccountStore
from services.accounts.verifier import StoreVerifier
from services.platform.auth import AuthInterceptor, bearer
from services.platform.db import create_engine, session_factory
from services.platform.grpc_errors import ErrorMapping, error_info
from services.platform.settings import StoreSettings

PASSWORD = "correct horse battery"
INTERNAL_SECRET = "test-internal-secret"


@dataclasses.dataclass
class Env:
    stub: accounts_pb2_grpc.AccountsStub
    store: AccountStore
    verifier: StoreVerifier
    address: str

    async def person(self, name: str, scopes=("play", "bots:write")) -> str:
        """Creates the account ``name`` and returns a token with ``scopes``."""
        await self.stub.CreateAccount(
            accounts_pb2.CreateAccountRequest(username=name, password=PASSWORD)
        )
        reply = await self.stub.CreateToken(
            accounts_pb2.CreateTokenRequest(username=name, password=PASSWORD, scopes=list(scopes))
        )
        return reply.token

    async def counts(self) -> tuple[int, int]:
        """(accounts, tokens) in the store."""
        async with self.store.sessions() as s:
            accounts = await s.scalar(sa.select(sa.func.count()).select_from(Account))
            tokens = await s.scalar(sa.select(sa.func.count()).select_from(ApiToken))
        return accounts, tokens


@contextlib.asynccontextmanager
async def running_accounts(
    database_url: str,
    redis_url: str,
    key_prefix: str,
    cache_seconds: float = 5.0,
    per_pair: str = "5/5minute",
    per_peer: str = "30/5minute",
) -> AsyncIterator[Env]:
    """An accounts server on a free loopback port, with the error and auth
    interceptors as in production."""
    engine = create_engine(database_url, StoreSettings(db_timeout_s=2.0))
    store = AccountStore(session_factory(engine))
    await store.ensure_system_bots(SYSTEM_BOTS)
    verifier = StoreVerifier(store, cache_seconds)
    limiter = SigninLimiter(redis_url, key_prefix, per_pair, per_peer)
    server = grpc.aio.server(
        interceptors=[ErrorMapping(), AuthInterceptor(verifier, INTERNAL_SECRET)]
    )
    client = aioredis.Redis.from_url(redis_url)
    accounts_pb2_grpc.add_AccountsServicer_to_server(
        AccountsServicer(
            store,
            verifier,
            limiter,
            lambda token_id: publish_revocation(client, key_prefix, token_id),
            internal_secret=INTERNAL_SECRET,
        ),
        server,
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    address = f"127.0.0.1:{port}"
    channel = grpc.aio.insecure_channel(address)
    try:
        yield Env(accounts_pb2_grpc.AccountsStub(channel), store, verifier, address)
    finally:
        await channel.close()
        await server.stop(None)
        await client.aclose()
        await engine.dispose()


@pytest.fixture
def accounts_env(store_url, redis_url, key_prefix):
    """``run(body)``: runs ``async def body(env)`` against a fresh accounts server."""

    def run(body, **options):
        async def main():
            async with running_accounts(store_url, redis_url, key_prefix, **options) as env:
                return await body(env)

        return asyncio.run(main())

    return run


async def refused(call, code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    """Awaits ``call``, which must fail with ``code``; the error."""
    try:
        await call
    except grpc.aio.AioRpcError as err:
        assert err.code() == code, (err.code(), err.details())
        assert error_info(err) is not None, "every refusal carries an ErrorInfo"
        return err
    raise AssertionError(f"the call succeeded; expected {code}")


def reason(err: grpc.aio.AioRpcError) -> str:
    return error_info(err).reason


def meta(err: grpc.aio.AioRpcError) -> dict[str, str]:
    return dict(error_info(err).metadata)


__all__ = ["PASSWORD", "bearer", "refused", "reason", "meta", "running_accounts"]
