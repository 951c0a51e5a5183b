"""Rate limits on failed sign-ins (``limits``, moving windows kept in Redis, so
every accounts replica counts the same failures).

Failures are counted per username (any case) and per client address; once
either budget (``ROUNDHOUSE_SIGNIN_FAILURES_PER_USERNAME``, default 5 per
5 minutes; ``..._PER_PEER``, default 30 per 5 minutes) is spent, sign-ins are
refused RESOURCE_EXHAUSTED ``too_many_failures`` with ``retry_after_s`` in the
ErrorInfo metadata, before the password is checked. A successful sign-in
clears the username's count. Redis down: the refusal is UNAVAILABLE.
"""

from __future__ import annotations

import math
import time

import grpc
from limits import parse
from limits.aio.storage import RedisClusterStorage, RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter

from services.platform.grpc_errors import ServiceError
from services.platform.hotstore import limits_uri


def peer_host(peer: str) -> str:
    """The client address of a gRPC peer string (``ipv4:1.2.3.4:5678`` ->
    ``1.2.3.4``, ``ipv6:[::1]:5678`` -> ``::1``); behind a proxy this is the proxy."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv6" and rest.startswith("["):
        return rest[1 : rest.find("]")]
    if kind == "ipv4":
        return rest.rsplit(":", 1)[0]
    return peer or "unknown"


class SigninLimiter:
    """Counts failed sign-ins.

    Args:
        redis_url: the Redis holding the counters.
        key_prefix: prefix of the counters' keys (``<prefix>:limits``).
        per_username, per_peer: limits strings such as ``5/5minute``.
        cluster: ``redis_url`` names a node of a Redis Cluster (``redis_cluster``).
    """

    def __init__(
        self,
        redis_url: str,
        key_prefix: str,
        per_username: str,
        per_peer: str,
        cluster: bool = False,
    ):
        storage = RedisClusterStorage if cluster else RedisStorage
        self.storage = storage(
            limits_uri(redis_url, cluster),
            implementation="redispy",
            key_prefix=f"{key_prefix}:limits",
        )
        self.limiter = MovingWindowRateLimiter(self.storage)
        self.per_username = parse(per_username)
        self.per_peer = parse(per_peer)

    def _checks(self, username: str, peer: str):
        return (
            (self.per_username, "signin-user", username.lower()),
            (self.per_peer, "signin-peer", peer),
        )

    async def check(self, username: str, peer: str) -> None:
        """Raises ServiceError RESOURCE_EXHAUSTED ``too_many_failures`` (metadata
        ``retry_after_s``, ``limit``) when a budget is spent."""
        for item, kind, key in self._checks(username, peer):
            if not await self.limiter.test(item, kind, key):
                stats = await self.limiter.get_window_stats(item, kind, key)
                wait = max(1, math.ceil(stats.reset_time - time.time()))
                who = "this username" if kind == "signin-user" else "this address"
                raise ServiceError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "too_many_failures",
                    f"too many failed sign-ins for {who} ({item}); retry in {wait} s",
                    retry_after_s=str(wait),
                    limit=str(item),
                )

    async def failed(self, username: str, peer: str) -> None:
        for item, kind, key in self._checks(username, peer):
            await self.limiter.hit(item, kind, key)

    async def succeeded(self, username: str) -> None:
        await self.limiter.clear(self.per_username, "signin-user", username.lower())
