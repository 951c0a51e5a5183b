"""The accounts' token verifier: bearer tokens checked against the accounts store.

:class:`StoreVerifier` is the :class:`services.platform.auth.TokenVerifier` that the public
services hand to :class:`services.platform.auth.AuthInterceptor` (the platform layer defines
the interceptor and the protocol, and never imports the accounts).
"""

from __future__ import annotations

from cachetools import TTLCache

from services.accounts.credentials import looks_like_token, token_hash
from services.accounts.models import BOT, HUMAN, SYSTEM
from services.accounts.store import AccountStore, TokenRecord
from services.platform.auth import AuthError, Principal
from services.platform.db import utcnow


def principal_of(record: TokenRecord) -> Principal:
    """The principal a token stands for (no validity checks)."""
    token, account = record.token, record.account
    scopes = frozenset(token.scope_list)
    return Principal(
        kind=account.kind if account.kind in (HUMAN, BOT, SYSTEM) else HUMAN,
        account_id=account.id,
        username=account.username,
        scopes=scopes,
        is_admin=account.is_admin and "admin" in scopes,
        token_id=token.id,
        expires_at=token.expires_at,
        bot_owner=record.owner_username,
    )


class StoreVerifier:
    """Verifies tokens against the accounts store, caching good ones.

    Args:
        store: the accounts store.
        cache_seconds: how long a verified token is trusted without a lookup
            (bounds how late a revocation takes effect); 0 = no cache.
        cache_size: tokens cached at most.
    """

    def __init__(self, store: AccountStore, cache_seconds: float = 5.0, cache_size: int = 10_000):
        self.store = store
        self._cache: TTLCache | None = (
            TTLCache(maxsize=cache_size, ttl=cache_seconds) if cache_seconds > 0 else None
        )

    async def verify(self, token: str) -> Principal:
        """The principal of ``token``.

        Raises:
            AuthError: ``token_invalid`` (malformed or unknown), ``token_expired``,
                ``token_revoked``.
        """
        if not looks_like_token(token):
            raise AuthError(
                "token_invalid",
                "not a Roundhouse API token (one starts with rh_ and has 20 to 100 characters)",
            )
        digest = token_hash(token)
        principal = self._cache.get(digest) if self._cache is not None else None
        if principal is None:
            record = await self.store.token_by_hash(digest)
            if record is None:
                raise AuthError("token_invalid", "unknown API token")
            if record.token.revoked_at is not None:
                raise AuthError("token_revoked", "this API token was revoked")
            principal = principal_of(record)
        if principal.expires_at is not None and principal.expires_at <= utcnow():
            raise AuthError("token_expired", "this API token has expired")
        if self._cache is not None:
            self._cache.setdefault(digest, principal)
        return principal

    def cached(self, token_id: str) -> bool:
        """Whether this process's cache trusts the token ``token_id`` now."""
        return self._cache is not None and any(
            p.token_id == token_id for p in list(self._cache.values())
        )

    def clear(self) -> None:
        """Drops every cached token (e.g. revocations may have been missed)."""
        if self._cache is not None:
            self._cache.clear()

    def forget(self, token_id: str) -> None:
        """Drops ``token_id`` from this process's cache (after a revocation)."""
        if self._cache is None:
            return
        for digest, principal in list(self._cache.items()):
            if principal.token_id == token_id:
                self._cache.pop(digest, None)
