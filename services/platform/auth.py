"""Auth for every public gRPC service: one server interceptor, a typed
:class:`Principal` for handlers, and the helpers :func:`require_principal`
and :func:`require_scope`.

Callers send one metadata entry:

* ``authorization: Bearer rh_...``: a personal API token (``Accounts.CreateToken``).
  The interceptor hashes it (SHA-256), looks the hash up in the store, and
  refuses it if unknown, expired or revoked. Verified tokens are cached in
  process for at most ``ROUNDHOUSE_TOKEN_CACHE_SECONDS`` (300 s); a revocation
  is pushed to every server's cache at once (:mod:`services.accounts.revocations`).
* ``authorization: Internal <ROUNDHOUSE_INTERNAL_SECRET>`` plus
  ``x-roundhouse-service: <name>`` (``dispatcher``, ``bots``, ``archiver``...):
  an internal service; the secret is compared in constant time. An empty
  secret setting disables internal calls.

No token, or a bad one, on a method that needs one: UNAUTHENTICATED with the
reason ``token_missing``, ``token_invalid``, ``token_expired``,
``token_revoked``, ``bad_authorization`` or ``internal_auth_disabled``. A bad
token is refused even on an anonymous method (a client should know its token
is dead). The methods callable without a token are listed once, in
:data:`ANONYMOUS_METHODS`.

Handlers::

    principal = await require_principal(context)          # UNAUTHENTICATED if anonymous
    await require_scope(context, "tables:write")          # PERMISSION_DENIED scope_missing
    await require_scope(context, "play", "bot:play")      # any one of them
    if principal.account_id != table.owner_id and not principal.is_admin:
        await abort(context, PERMISSION_DENIED, "not_owner", ...)  # the handler decides

Internal principals pass every scope check. ``Principal.is_admin`` needs an
admin account *and* a token with the ``admin`` scope.

Attaching it to a server (the lobby, say)::

    from services.accounts.verifier import StoreVerifier
    from services.platform.auth import AuthInterceptor
    from services.accounts.store import AccountStore
    from services.platform import db

    engine = db.create_engine(db.database_url(settings))
    verifier = StoreVerifier(AccountStore(db.session_factory(engine)), settings.token_cache_seconds)
    server = GrpcServer(..., interceptors=[AuthInterceptor(verifier, settings.internal_secret)])

``GrpcServer`` puts it inside the error interceptor, so a database outage
during verification is answered UNAVAILABLE. Clients build the metadata with
:func:`bearer` and :func:`internal`.
"""

from __future__ import annotations

import contextlib
import contextvars
import hmac
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import grpc

from services.platform.grpc_errors import abort
from services.platform.interceptors import WrappedHandlers, wrap_handler

HUMAN, BOT, SYSTEM = "human", "bot", "system"
"""The kinds of an account (``services.accounts.models``)."""
INTERNAL = "internal"
"""The kind of a principal that is an internal service."""
SERVICE_HEADER = "x-roundhouse-service"
SERVICE_NAME_RE = re.compile(r"[a-z][a-z0-9-]{0,31}")

ANONYMOUS_METHODS = frozenset(
    {
        # accounts: signing up and signing in, public profiles
        "/roundhouse.v1.Accounts/CreateAccount",
        "/roundhouse.v1.Accounts/CreateToken",
        "/roundhouse.v1.Accounts/GetAccount",
        # spectating a public table (the lobby)
        "/roundhouse.v1.Lobby/GetTable",
        "/roundhouse.v1.Lobby/WatchTable",
        "/roundhouse.v1.Lobby/GetTableResult",
        "/roundhouse.v1.Lobby/GetReview",
        "/roundhouse.v1.Lobby/ListTables",
        # infrastructure
        "/grpc.health.v1.Health/Check",
        "/grpc.health.v1.Health/Watch",
        "/grpc.health.v1.Health/List",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    }
)
"""Full method names callable without a token (a valid token still identifies the caller)."""


@dataclass(frozen=True)
class Principal:
    """Who is calling.

    Attributes:
        kind: ``human``, ``bot``, ``system`` (an account) or ``internal`` (a service).
        account_id, username: the account ("" for internal services).
        scopes: the token's scopes.
        is_admin: an admin account calling with an ``admin``-scoped token.
        service: the internal service's name ("" for accounts).
        token_id: the public id of the token used ("" for internal services).
        expires_at: when the token expires (None: never).
        bot_owner: the owner's username for bot accounts.
    """

    kind: str
    account_id: str = ""
    username: str = ""
    scopes: frozenset[str] = field(default_factory=frozenset)
    is_admin: bool = False
    service: str = ""
    token_id: str = ""
    expires_at: datetime | None = None
    bot_owner: str = ""

    @property
    def is_internal(self) -> bool:
        return self.kind == INTERNAL

    @property
    def is_bot(self) -> bool:
        return self.kind in (BOT, SYSTEM)

    def has_scope(self, *scopes: str) -> bool:
        """Whether the caller holds one of ``scopes`` (internal services hold all)."""
        return self.is_internal or any(s in self.scopes for s in scopes)


_principal: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "roundhouse_principal", default=None
)


def current_principal() -> Principal | None:
    """The caller of the call being handled (None: anonymous or no interceptor)."""
    return _principal.get()


class AuthError(Exception):
    """A credential was refused; ``reason`` is the ErrorInfo reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


class TokenVerifier(Protocol):
    async def verify(self, token: str) -> Principal:
        """The principal of ``token``. Raises AuthError."""


class AuthInterceptor(grpc.aio.ServerInterceptor):
    """Authenticates every call (see the module docstring).

    Args:
        verifier: checks bearer tokens (a :class:`TokenVerifier`: the accounts'
            ``services.accounts.verifier.StoreVerifier``; this layer never imports it).
        internal_secret: the shared secret of internal services ("" = none accepted).
        anonymous: full method names callable without a token.
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        internal_secret: str = "",
        anonymous: frozenset[str] = ANONYMOUS_METHODS,
    ) -> None:
        self.verifier = verifier
        self.internal_secret = internal_secret.encode()
        self.anonymous = anonymous
        self._wrapped = WrappedHandlers()

    async def authenticate(self, method: str, metadata) -> Principal | None:
        """The principal of a call's metadata (None: anonymous, allowed).

        Raises:
            AuthError: see the module docstring.
        """
        values = dict(metadata or ())
        header = values.get("authorization", "")
        if not header:
            if method in self.anonymous:
                return None
            raise AuthError(
                "token_missing", "this call needs the metadata 'authorization: Bearer <token>'"
            )
        scheme, _, credential = header.partition(" ")
        scheme, credential = scheme.lower(), credential.strip()
        if scheme == "bearer" and credential:
            return await self.verifier.verify(credential)
        if scheme == "internal" and credential:
            return self._internal(credential, values.get(SERVICE_HEADER, ""))
        raise AuthError(
            "bad_authorization", "the authorization metadata is 'Bearer <token>' or 'Internal ...'"
        )

    def _internal(self, secret: str, service: str) -> Principal:
        if not self.internal_secret:
            raise AuthError("internal_auth_disabled", "internal calls are not accepted here")
        if not hmac.compare_digest(secret.encode(), self.internal_secret):
            raise AuthError("token_invalid", "wrong internal secret")
        if not SERVICE_NAME_RE.fullmatch(service):
            raise AuthError(
                "bad_authorization", f"internal calls name their service in {SERVICE_HEADER}"
            )
        return Principal(kind=INTERNAL, service=service)

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        metadata = handler_call_details.invocation_metadata
        if method in self.anonymous and not any(k == "authorization" for k, _ in metadata or ()):
            return handler  # nothing to check (health, reflection, spectators)
        return self._wrapped.get(method, handler, lambda: self._wrap(method, handler))

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """``handler`` run with the principal of each call's own metadata (the wrapper is
        kept per method: :class:`services.platform.interceptors.WrappedHandlers`)."""

        @contextlib.asynccontextmanager
        async def authenticated(request, context):
            try:
                principal = await self.authenticate(method, context.invocation_metadata())
            except AuthError as exc:
                await abort(context, grpc.StatusCode.UNAUTHENTICATED, exc.reason, exc.message)
            token = _principal.set(principal)
            try:
                yield principal
            finally:
                _reset(token)

        return wrap_handler(handler, authenticated)


def _reset(token: contextvars.Token) -> None:
    # every RPC runs in its own task (its own context copy), so this is tidiness;
    # a stream closed from another context must not fail because of it
    with contextlib.suppress(ValueError):
        _principal.reset(token)


async def require_principal(context: grpc.aio.ServicerContext) -> Principal:
    """The caller; UNAUTHENTICATED ``token_missing`` when the call is anonymous."""
    principal = _principal.get()
    if principal is None:
        await abort(
            context,
            grpc.StatusCode.UNAUTHENTICATED,
            "token_missing",
            "this call needs the metadata 'authorization: Bearer <token>'",
        )
    return principal


async def require_scope(context: grpc.aio.ServicerContext, *scopes: str) -> Principal:
    """The caller, if its token holds one of ``scopes``; else PERMISSION_DENIED
    ``scope_missing`` with the scope(s) in the ErrorInfo metadata ``scope``
    (UNAUTHENTICATED when anonymous)."""
    principal = await require_principal(context)
    if not principal.has_scope(*scopes):
        names = " or ".join(scopes)
        await abort(
            context,
            grpc.StatusCode.PERMISSION_DENIED,
            "scope_missing",
            f"this call needs a token with the scope {names}",
            scope=" ".join(scopes),
        )
    return principal


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """Call metadata for a personal API token: ``stub.X(req, metadata=bearer(t))``."""
    return (("authorization", f"Bearer {token}"),)


def internal(secret: str, service: str) -> tuple[tuple[str, str], ...]:
    """Call metadata of an internal service."""
    return (("authorization", f"Internal {secret}"), (SERVICE_HEADER, service))


CLIENT_ADDRESS_HEADER = "x-roundhouse-client-address"
CLIENT_PROOF_HEADER = "x-roundhouse-client-proof"
CLIENT_ADDRESS_MAX = 64
"""Longest forwarded client address taken (an IPv6 address with a zone is under 50)."""


def _address_proof(secret: str, address: str) -> str:
    return hmac.new(secret.encode(), address.encode(), "sha256").hexdigest()


def client_address_metadata(secret: str, address: str) -> tuple[tuple[str, str], ...]:
    """Call metadata by which the HTTP gateway passes on the address of its own client
    (the HTTP peer, or the one a trusted proxy forwarded), with a proof that the gateway
    sent it: an HMAC-SHA256 of the address keyed with the internal secret. None without
    a secret (the service then counts the gateway's own address)."""
    if not secret or not address:
        return ()
    address = address[:CLIENT_ADDRESS_MAX]
    return (
        (CLIENT_ADDRESS_HEADER, address),
        (CLIENT_PROOF_HEADER, _address_proof(secret, address)),
    )


def client_address(metadata, secret: str, peer: str) -> str:
    """The address a call is on behalf of: the one forwarded in :func:`client_address_metadata`
    when its proof is right, else ``peer`` (a forged or unproven one is ignored)."""
    values = dict(metadata or ())
    address, proof = values.get(CLIENT_ADDRESS_HEADER, ""), values.get(CLIENT_PROOF_HEADER, "")
    if (
        secret
        and address
        and len(address) <= CLIENT_ADDRESS_MAX
        and hmac.compare_digest(proof.encode(), _address_proof(secret, address).encode())
    ):
        return address
    return peer
