"""The accounts service: ``roundhouse.v1.Accounts`` (proto/roundhouse/v1/accounts.proto).

People create accounts and sign in for personal API tokens (argon2 passwords,
failed sign-ins rate-limited in Redis); a person's token with ``bots:write``
creates bot accounts (lichess-style: owned, irreversible, playing through the
same calls with their own ``bot:play`` tokens) and may bind them to a hosted
policy instead. Hosted policies also exist as system bot accounts
(``random-bot``, ``greedy-bot``), made by the migration and on start.

Every call passes through :class:`services.platform.auth.AuthInterceptor`;
refusals follow the proto's error list and change nothing.

Run: ``roundhouse serve accounts`` (or ``python -m services.accounts.server``).
In embedded SQLite mode the store is migrated on start; on PostgreSQL run
``roundhouse db upgrade`` first.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from roundhouse.v1 import accounts_pb2, accounts_pb2_grpc
from services.accounts import rules
from services.accounts.credentials import hash_password, verify_password
from services.accounts.limiter import SigninLimiter, peer_host
from services.accounts.models import BOT, HUMAN, SYSTEM, Account, ApiToken
from services.accounts.revocations import follow_revocations, publish_revocation
from services.accounts.store import AccountStore, UsernameTaken
from services.accounts.verifier import StoreVerifier
from services.match.botcatalogue import POLICY_NAMES
from services.platform.auth import (
    AuthInterceptor,
    Principal,
    client_address,
    require_principal,
    require_scope,
)
from services.platform.bounds import ACCOUNTS_BOUNDS
from services.platform.db import (
    create_engine,
    database_url,
    is_sqlite,
    ping,
    session_factory,
    upgrade_async,
)
from services.platform.grpc_errors import ServiceError, abort
from services.platform.logging import configure_logging, get_logger
from services.platform.server import redis_client, run_service, service_server
from services.platform.settings import AccountsSettings, get_settings, listen_address
from services.platform.supervise import Supervisor

log = get_logger("accounts")

SERVICE_NAME = accounts_pb2.DESCRIPTOR.services_by_name["Accounts"].full_name
TOKEN_ID_RE = re.compile(r"[0-9a-f]{32}")
SYSTEM_BOTS = {f"{policy}-bot": policy for policy in POLICY_NAMES}
"""The system bot account of each hosted policy (username -> policy)."""

_KIND = {
    HUMAN: accounts_pb2.ACCOUNT_KIND_HUMAN,
    BOT: accounts_pb2.ACCOUNT_KIND_BOT,
    SYSTEM: accounts_pb2.ACCOUNT_KIND_SYSTEM,
}
DENIED = grpc.StatusCode.PERMISSION_DENIED


def _ts(value) -> Timestamp | None:
    if value is None:
        return None
    ts = Timestamp()
    ts.FromDatetime(value)
    return ts


def token_proto(token: ApiToken, username: str) -> accounts_pb2.Token:
    return accounts_pb2.Token(
        token_id=token.id,
        label=token.label,
        scopes=token.scope_list,
        created_at=_ts(token.created_at),
        expires_at=_ts(token.expires_at),
        revoked_at=_ts(token.revoked_at),
        username=username,
    )


class AccountsServicer(accounts_pb2_grpc.AccountsServicer):
    """Handlers of ``roundhouse.v1.Accounts``.

    Args:
        store: accounts and tokens.
        verifier: the auth interceptor's verifier (revocations evict its cache).
        limiter: failed sign-in counter.
        announce_revocation: tells the other servers a token was revoked
            (:func:`services.accounts.revocations.publish_revocation`); None = this
            server only.
    """

    def __init__(
        self,
        store: AccountStore,
        verifier: StoreVerifier,
        limiter: SigninLimiter,
        announce_revocation: Callable[[str], Awaitable[None]] | None = None,
        internal_secret: str = "",
    ):
        self.store = store
        self.verifier = verifier
        self.limiter = limiter
        self.announce_revocation = announce_revocation
        self.internal_secret = internal_secret
        """Proves the client address the HTTP gateway forwards (:func:`client_address`)."""

    async def account_proto(self, account: Account, private: bool = True) -> accounts_pb2.Account:
        """The ``Account`` message; ``private=False`` (public profiles) hides the admin flag."""
        return accounts_pb2.Account(
            account_id=account.id,
            username=account.username,
            kind=_KIND[account.kind],
            created_at=_ts(account.created_at),
            bot_owner=await self.store.username_of(account.owner_id),
            hosted_policy=account.hosted_policy or "",
            is_admin=account.is_admin and private,
        )

    # ----------------------------------------------------------------- sign up, sign in

    async def CreateAccount(self, request, context):
        username = rules.check_username(request.username)
        password = rules.check_password(request.password)
        account = await self._create(username, await hash_password(password), HUMAN)
        log.info("account created", account_id=account.id, kind=HUMAN)
        return await self.account_proto(account)

    async def _create(self, username: str, password_hash: str | None, kind: str, **kw) -> Account:
        try:
            return await self.store.create_account(username, password_hash, kind, **kw)
        except UsernameTaken:
            raise ServiceError(
                grpc.StatusCode.ALREADY_EXISTS,
                "username_taken",
                "this username is taken (usernames are unique regardless of case)",
            ) from None

    async def CreateToken(self, request, context):
        username = rules.check_username(request.username)
        if len(request.password) > rules.PASSWORD_MAX:
            rules.check_password(request.password)  # refuses: no argon2 on huge input
        label = rules.check_label(request.label)
        lifetime = rules.check_lifetime(request.expires_in_seconds)
        peer = client_address(
            context.invocation_metadata(), self.internal_secret, peer_host(context.peer())
        )
        await self.limiter.check(username, peer)
        account = await self.store.by_username(username)
        ok, rehashed = await verify_password(
            account.password_hash if account else None, request.password
        )
        if not ok or account is None:
            await self.limiter.failed(username, peer)
            log.info("sign-in failed", peer=peer)
            await abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                "bad_credentials",
                "wrong username or password",
            )
        await self.limiter.succeeded(username, peer)
        if rehashed:
            await self.store.set_password_hash(account.id, rehashed)
        scopes = rules.check_scopes(list(request.scopes), account.kind, account.is_admin)
        return await self._issue(account, scopes, lifetime, label)

    async def _issue(self, account: Account, scopes, lifetime: int, label: str):
        secret, token = await self.store.create_token(account, scopes, lifetime, label)
        log.info("token created", account_id=account.id, token_id=token.id, scopes=scopes)
        return accounts_pb2.CreateTokenResponse(
            token=secret, info=token_proto(token, account.username)
        )

    async def GetAccount(self, request, context):
        account = await self._named(request.username)
        return await self.account_proto(account, private=False)

    async def _named(self, username: str) -> Account:
        account = await self.store.by_username(rules.check_username(username))
        if account is None:
            raise ServiceError(grpc.StatusCode.NOT_FOUND, "unknown_account", "no such account")
        return account

    # ----------------------------------------------------------------- the caller's account

    async def _caller(self, context) -> tuple[Principal, Account]:
        principal = await require_principal(context)
        if principal.is_internal:
            await abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                "not_an_account",
                "internal services have no account",
            )
        account = await self.store.by_id(principal.account_id)
        if account is None:  # deleted under a cached token
            await abort(context, grpc.StatusCode.UNAUTHENTICATED, "token_invalid", "no account")
        return principal, account

    async def WhoAmI(self, request, context):
        principal, account = await self._caller(context)
        token = await self.store.token_by_id(principal.token_id)
        return accounts_pb2.WhoAmIResponse(
            account=await self.account_proto(account),
            scopes=sorted(principal.scopes, key=rules.SCOPES.index),
            token=token_proto(token, account.username) if token else None,
        )

    def _may_manage(self, principal: Principal, account: Account) -> bool:
        """The account itself, its owner (bots), or an admin."""
        return principal.is_admin or principal.account_id in (account.id, account.owner_id)

    async def ListTokens(self, request, context):
        principal, caller = await self._caller(context)
        target = await self._named(request.username) if request.username else caller
        if not self._may_manage(principal, target):
            await abort(context, DENIED, "not_owner", "these are not your tokens")
        tokens = await self.store.tokens_of(target.id)
        return accounts_pb2.ListTokensResponse(
            tokens=[token_proto(t, target.username) for t in tokens]
        )

    async def RevokeToken(self, request, context):
        """Revokes a token of the caller's, of a bot of theirs (or any, for an admin or an
        internal caller: the gateway ending an OAuth grant, services/web/oauth.py)."""
        principal = await require_principal(context)
        if not principal.is_internal:
            principal, _ = await self._caller(context)
        if not TOKEN_ID_RE.fullmatch(request.token_id):
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_token_id",
                "token_id is 32 hex digits (from ListTokens or CreateToken)",
            )
        token = await self.store.token_by_id(request.token_id)
        if token is None:
            await abort(context, grpc.StatusCode.NOT_FOUND, "unknown_token", "no such token")
        owner = await self.store.by_id(token.account_id)
        if owner is None or not (principal.is_internal or self._may_manage(principal, owner)):
            await abort(context, DENIED, "not_owner", "this is not your token")
        token = await self.store.revoke(token.id)
        self.verifier.forget(token.id)
        if self.announce_revocation is not None:
            await self.announce_revocation(token.id)
        log.info("token revoked", token_id=token.id, by=principal.account_id)
        return token_proto(token, owner.username)

    # ----------------------------------------------------------------- bot accounts

    async def _owner(self, context) -> tuple[Principal, Account]:
        await require_scope(context, rules.BOTS_WRITE)
        principal, account = await self._caller(context)
        if account.kind != HUMAN:
            await abort(context, DENIED, "humans_only", "only people own bot accounts")
        return principal, account

    async def _own_bot(self, context, username: str) -> Account:
        principal, _ = await self._owner(context)
        bot = await self._named(username)
        if bot.kind != BOT:
            await abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                "not_a_bot",
                "this account is not a bot account",
            )
        if bot.owner_id != principal.account_id and not principal.is_admin:
            await abort(context, DENIED, "not_owner", "this bot belongs to another account")
        return bot

    @staticmethod
    def _policy(name: str) -> str | None:
        if name and name not in POLICY_NAMES:
            raise rules.invalid(
                "unknown_policy",
                f"unknown hosted policy; known: {', '.join(POLICY_NAMES)}",
            )
        return name or None

    async def CreateBotAccount(self, request, context):
        principal, owner = await self._owner(context)
        username = rules.check_username(request.username)
        password = rules.check_password(request.password) if request.password else ""
        policy = self._policy(request.hosted_policy)
        password_hash = await hash_password(password) if password else None
        bot = await self._create(
            username, password_hash, BOT, owner_id=owner.id, hosted_policy=policy
        )
        log.info("bot account created", account_id=bot.id, owner=owner.id, policy=policy)
        return await self.account_proto(bot)

    async def SetBotPolicy(self, request, context):
        bot = await self._own_bot(context, request.username)
        policy = self._policy(request.hosted_policy)
        bot = await self.store.set_hosted_policy(bot.id, policy)
        log.info("bot policy set", account_id=bot.id, policy=policy)
        return await self.account_proto(bot)

    async def CreateBotToken(self, request, context):
        bot = await self._own_bot(context, request.username)
        label = rules.check_label(request.label)
        lifetime = rules.check_lifetime(request.expires_in_seconds)
        scopes = rules.check_scopes(list(request.scopes), BOT, False)
        return await self._issue(bot, scopes, lifetime, label)

    async def ListBots(self, request, context):
        _, account = await self._caller(context)
        bots = await self.store.bots_of(account.id)
        return accounts_pb2.ListBotsResponse(bots=[await self.account_proto(b) for b in bots])

    async def IssueAppToken(self, request, context):
        """A token for an OAuth app (internal callers only: the gateway, after the account's
        consent): ``scopes`` as :func:`rules.check_scopes` allows them to the account, never
        ``admin``. Raises PERMISSION_DENIED ``internal_only``, NOT_FOUND ``unknown_account``."""
        principal = await require_principal(context)
        if not principal.is_internal:
            await abort(context, DENIED, "internal_only", "only the platform's services call this")
        account = await self.store.by_id(request.account_id)
        if account is None:
            await abort(context, grpc.StatusCode.NOT_FOUND, "unknown_account", "no such account")
        label = rules.check_label(request.label)
        lifetime = rules.check_lifetime(request.expires_in_seconds)
        scopes = rules.check_scopes(list(request.scopes), account.kind, False)
        return await self._issue(account, scopes, lifetime, label)


async def serve(address: str | None = None) -> None:
    """Run the accounts server until SIGTERM/SIGINT."""
    settings = get_settings(AccountsSettings)
    configure_logging(settings.log_level, settings.log_format)
    address = address or listen_address(settings, settings.accounts_address)
    url = database_url(settings)
    if is_sqlite(url):
        await upgrade_async(url)  # embedded mode: the process keeps its own store current
    engine = create_engine(url, settings)
    store = AccountStore(session_factory(engine))
    created = await store.ensure_system_bots(SYSTEM_BOTS)
    if created:
        log.info("system bot accounts created", names=created)
    verifier = StoreVerifier(store, settings.token_cache_seconds)
    limiter = SigninLimiter(
        settings.redis_url,
        settings.key_prefix,
        settings.signin_failures_per_pair,
        settings.signin_failures_per_peer,
        cluster=settings.redis_cluster,
    )
    client = redis_client(
        settings.redis_url, settings.redis_max_connections, cluster=settings.redis_cluster
    )
    servicer = AccountsServicer(
        store,
        verifier,
        limiter,
        lambda token_id: publish_revocation(client, settings.key_prefix, token_id),
        internal_secret=settings.internal_secret,
    )
    stop = asyncio.Event()
    background = Supervisor("accounts")  # revocations from other accounts replicas
    background.start(
        "token-revocations",
        lambda: follow_revocations(client, settings.key_prefix, verifier, stop),
    )

    async def ready() -> bool:
        await ping(engine)
        return await limiter.storage.check()

    async def close() -> None:
        stop.set()
        await background.wait("token-revocations", 5)
        await client.aclose()
        await engine.dispose()

    server = service_server(
        "accounts",
        settings,
        [SERVICE_NAME],
        lambda s: accounts_pb2_grpc.add_AccountsServicer_to_server(servicer, s),
        address,
        ACCOUNTS_BOUNDS,
        on_stop=close,
        ready=ready,
        interceptors=[AuthInterceptor(verifier, settings.internal_secret)],
        supervisor=background,
    )
    await server.run_until_signal()


def main() -> None:
    run_service(serve())


if __name__ == "__main__":
    main()
