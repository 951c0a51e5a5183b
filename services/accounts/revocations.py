"""Token revocations pushed to every server's token cache over Redis pub/sub.

The channel ``P:tokens:revoked`` (``P`` = key prefix) carries the id of each
revoked token. Every server that verifies tokens (the accounts service, the
lobby) follows it and drops that token from its
:class:`~services.accounts.verifier.StoreVerifier` cache at once. Redis pub/sub
delivers at most once: a server whose subscription was down may miss a message,
so each (re)subscription first empties the cache, and a cached token is trusted
for ``ROUNDHOUSE_TOKEN_CACHE_SECONDS`` at most whatever happens. The store
stays the truth: a revoked token is refused by every lookup.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

import redis.asyncio as aioredis

from services.platform import hotstore
from services.platform.logging import get_logger

log = get_logger("revocations")


class Forgets(Protocol):
    def forget(self, token_id: str) -> None: ...

    def clear(self) -> None: ...


def channel(prefix: str) -> str:
    """The pub/sub channel of revoked token ids."""
    return f"{prefix}:tokens:revoked"


async def publish_revocation(client: aioredis.Redis, prefix: str, token_id: str) -> None:
    """Tell every following server that ``token_id`` was revoked (best effort: a Redis
    outage is logged; the other servers then stop trusting the token within their cache
    time).

    Args:
        client: ``redis.asyncio`` client.
        prefix: the key prefix (``CommonSettings.key_prefix``).
        token_id: the revoked token's id (32 hex digits).
    """
    error = await hotstore.publish_id(client, channel(prefix), token_id)
    if error:
        log.warning("revocation not broadcast", token_id=token_id, error=error)


async def follow_revocations(
    client: aioredis.Redis, prefix: str, verifier: Forgets, stop: asyncio.Event
) -> None:
    """Drop each revoked token from ``verifier``'s cache until ``stop`` is set. Empties the
    cache once subscribed (messages sent before may have been missed). Raises what Redis
    raises (run it under :class:`services.platform.supervise.Supervisor`, which restarts it).
    """
    await hotstore.follow_ids(client, channel(prefix), verifier.forget, verifier.clear, stop)
