"""Accounts for tests and benchmarks that talk to a stack's lobby: sign-up,
a token's metadata, and a lobby stub that carries a token by default.
``tests/integration/conftest.py`` builds its fixtures on these; a test or a
benchmark that starts its own :class:`~services.cli.launcher.Stack` signs in
with :func:`signed_in_lobby`."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import uuid
from collections.abc import Iterator

import grpc

from roundhouse.v1 import accounts_pb2, accounts_pb2_grpc, lobby_pb2_grpc
from services.platform.auth import bearer

PASSWORD = "integration password"
ORGANISER_SCOPES = ("tables:write", "play", "bots:write")


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
        self.organiser = self.sign_up("organiser", ORGANISER_SCOPES)

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


def lobby_stub(channel: grpc.Channel, person: Person) -> lobby_pb2_grpc.LobbyStub:
    """A lobby stub on ``channel`` whose calls carry ``person``'s token unless
    they set their own ``authorization``."""
    return lobby_pb2_grpc.LobbyStub(grpc.intercept_channel(channel, DefaultCredentials(person.md)))


@contextlib.contextmanager
def signed_in_lobby(stack) -> Iterator[tuple[People, lobby_pb2_grpc.LobbyStub]]:
    """On a running ``stack``: its ``People`` (an organiser signed up) and a
    lobby stub signed in as the organiser, as the conftest's ``people`` and
    ``lobby`` fixtures."""
    with (
        grpc.insecure_channel(stack.accounts_address) as accounts,
        grpc.insecure_channel(stack.lobby_address) as channel,
    ):
        people = People(accounts_pb2_grpc.AccountsStub(accounts))
        yield people, lobby_stub(channel, people.organiser)
