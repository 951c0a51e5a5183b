"""Integration fixtures: the real processes (rules services, lobby, accounts,
bot dispatcher, a Celery worker) started against a real Redis and a fresh
PostgreSQL database, gRPC over loopback.

``lobby`` is signed in as the organiser (``people.organiser``: scopes
``tables:write``, ``play``, ``bots:write``): every call carries its token unless
the call sets its own ``authorization``. ``anonymous_lobby`` sends none.
``people.sign_up(name)`` makes more accounts."""

from __future__ import annotations

import collections
import dataclasses
import uuid

import grpc
import pytest
import redis

from roundhouse.v1 import accounts_pb2, accounts_pb2_grpc, game_pb2_grpc, lobby_pb2_grpc
from services.accounts.auth import bearer, internal
from services.cli.launcher import Stack
from services.common.registry import available_titles

pytestmark = pytest.mark.integration

PASSWORD = "integration password"


@pytest.fixture(scope="session")
def stack(redis_url, session_database_url, tmp_path_factory):
    """One running stack for the whole session (fresh key prefix, a fresh
    PostgreSQL database)."""
    with Stack(
        available_titles(),
        redis_url=redis_url,
        database_url=session_database_url,
        workers=2,
        run_dir=tmp_path_factory.mktemp("stack"),
        log_level="INFO",
    ) as s:
        yield s


class _Details(
    collections.namedtuple(
        "_Details",
        ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression"),
    ),
    grpc.ClientCallDetails,
):
    pass


class DefaultCredentials(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds the metadata ``md`` (an ``authorization``) to calls that carry none."""

    def __init__(self, md) -> None:
        self.md = tuple(md)

    def _details(self, details):
        metadata = list(details.metadata or ())
        if not any(k == "authorization" for k, _ in metadata):
            metadata.extend(self.md)
        return _Details(
            details.method,
            details.timeout,
            metadata,
            details.credentials,
            getattr(details, "wait_for_ready", None),
            getattr(details, "compression", None),
        )

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._details(details), request)


@dataclasses.dataclass
class Person:
    username: str
    token: str

    @property
    def md(self):
        return bearer(self.token)


class People:
    def __init__(self, accounts: accounts_pb2_grpc.AccountsStub) -> None:
        self.accounts = accounts
        self.organiser = self.sign_up("organiser", ("tables:write", "play", "bots:write"))

    def sign_up(self, name: str | None = None, scopes=("play", "tables:write")) -> Person:
        """A new person (a unique name when none is given) and a token."""
        name = name or f"p-{uuid.uuid4().hex[:10]}"
        self.accounts.CreateAccount(
            accounts_pb2.CreateAccountRequest(username=name, password=PASSWORD)
        )
        token = self.accounts.CreateToken(
            accounts_pb2.CreateTokenRequest(username=name, password=PASSWORD, scopes=list(scopes))
        ).token
        return Person(name, token)


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
        signed_in = grpc.intercept_channel(channel, DefaultCredentials(people.organiser.md))
        yield lobby_pb2_grpc.LobbyStub(signed_in)


@pytest.fixture(scope="session")
def anonymous_lobby(stack):
    with grpc.insecure_channel(stack.lobby_address) as channel:
        yield lobby_pb2_grpc.LobbyStub(channel)


@pytest.fixture(scope="session")
def internal_md(stack):
    """Internal-service credentials (rules services refuse writes without them)."""
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
