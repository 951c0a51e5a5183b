"""Integration fixtures: the real processes (rules services, lobby, accounts,
bot dispatcher, a Celery worker) started against a real Redis and a fresh
PostgreSQL database, gRPC over loopback.

``lobby`` is signed in as the organiser (``people.organiser``: scopes
``tables:write``, ``play``, ``bots:write``): every call carries its token unless
the call sets its own ``authorization``. ``anonymous_lobby`` sends none.
``people.sign_up(name)`` makes more accounts. A test that starts its own stack
signs in with ``tests.integration.signin.signed_in_lobby``."""

from __future__ import annotations

import grpc
import pytest
import redis

from roundhouse.v1 import accounts_pb2_grpc, game_pb2_grpc, lobby_pb2_grpc
from services.cli.launcher import Stack
from services.platform.auth import internal
from services.rules.titles import available_titles
from tests.integration.signin import DefaultCredentials, People, lobby_stub

pytestmark = pytest.mark.integration


QUOTAS = {
    "ROUNDHOUSE_TABLES_PER_ACCOUNT": "100000",
    "ROUNDHOUSE_TABLES_CREATED_PER_ACCOUNT": "100000/minute",
    "ROUNDHOUSE_MOVES_PER_ACCOUNT": "100000/second",
}
"""The session's organiser creates tables and plays moves far faster than a
person: the quotas (tested in services/lobby/tests/test_limits.py) are lifted."""


@pytest.fixture(scope="session")
def stack(redis_url, session_database_url, tmp_path_factory):
    """One running stack for the whole session (fresh key prefix, a fresh
    PostgreSQL database, quotas lifted: :data:`QUOTAS`)."""
    with pytest.MonkeyPatch.context() as env:
        for name, value in QUOTAS.items():
            env.setenv(name, value)
        yield from _stack(redis_url, session_database_url, tmp_path_factory)


def _stack(redis_url, session_database_url, tmp_path_factory):
    with Stack(
        available_titles(),
        redis_url=redis_url,
        database_url=session_database_url,
        workers=2,
        run_dir=tmp_path_factory.mktemp("stack"),
        log_level="INFO",
        gateway=True,
    ) as s:
        yield s


@pytest.fixture(scope="session")
def accounts(stack):
    with grpc.insecure_channel(stack.accounts_address) as channel:
        yield accounts_pb2_grpc.AccountsStub(channel)


@pytest.fixture(scope="session")
def people(accounts):
    return People(accounts)


@pytest.fixture(scope="session")
def lobby(stack, people):
    """The lobby, signed in as the organiser by default."""
    with grpc.insecure_channel(stack.lobby_address) as channel:
        yield lobby_stub(channel, people.organiser)


@pytest.fixture(scope="session")
def anonymous_lobby(stack):
    with grpc.insecure_channel(stack.lobby_address) as channel:
        yield lobby_pb2_grpc.LobbyStub(channel)


@pytest.fixture(scope="session")
def internal_md(stack):
    """Internal-service credentials (rules services refuse every call but health without them)."""
    return internal(stack.internal_secret, "tests")


@pytest.fixture(scope="session")
def internal_channel(internal_md):
    """``internal_channel(address)``: a channel whose calls carry ``internal_md``
    (close it after use)."""
    opened = []

    def make(address: str) -> grpc.Channel:
        raw = grpc.insecure_channel(address)
        opened.append(raw)
        return grpc.intercept_channel(raw, DefaultCredentials(internal_md))

    yield make
    for c in opened:
        c.close()


@pytest.fixture(scope="session")
def rules(stack, internal_channel):
    """title -> GameRules stub, with internal credentials (as the lobby and the bots)."""
    return {
        t: game_pb2_grpc.GameRulesStub(internal_channel(a))
        for t, a in stack.rules_addresses.items()
    }


@pytest.fixture(scope="session")
def anonymous_rules(stack):
    """title -> GameRules stub without credentials."""
    channels = {t: grpc.insecure_channel(a) for t, a in stack.rules_addresses.items()}
    yield {t: game_pb2_grpc.GameRulesStub(c) for t, c in channels.items()}
    for c in channels.values():
        c.close()


@pytest.fixture(scope="session")
def rdb(stack):
    client = redis.Redis.from_url(stack.redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def rdb_for():
    """A function: a Redis client (decoding) for a stack the test started itself."""
    clients = []

    def make(stack):
        client = redis.Redis.from_url(stack.redis_url, decode_responses=True)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
