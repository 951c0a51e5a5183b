"""Rate limits on failed sign-ins (``limits``, moving windows kept in Redis, so
every accounts replica counts the same failures).

Failures are counted per (username, client address) pair and per client address
(issue 33): never per username alone, so nobody can lock an account's owner out
by failing to sign in as them from elsewhere.

* The pair's budget (``ROUNDHOUSE_SIGNIN_FAILURES_PER_PAIR``, default
  ``3/minute;6/15minute;12/day``) is a list of windows, each longer and larger than
  the last: a backoff. After 3 wrong passwords from one address that address waits a
  minute before it may try that username again, after 6 a quarter of an hour, after
  12 a day. The owner signing in from another address is not affected.
* The address's budget (``..._PER_PEER``, default 30 per 5 minutes) bounds how many
  usernames one address may try.

Once a budget is spent, sign-ins are refused RESOURCE_EXHAUSTED ``too_many_failures``
with ``retry_after_s`` and ``limit`` in the ErrorInfo metadata, before the password
is checked. A successful sign-in clears its pair's counts (not the address's: signing
in to one's own account must not buy more guesses at others). Redis down: the refusal
is UNAVAILABLE.

The client address is the gRPC peer's, unless the call carries one forwarded by the
HTTP gateway (:func:`services.platform.auth.client_address`, proven with the internal
secret); behind the gateway every call's peer is the gateway itself.
"""

from __future__ import annotations

import math
import time

import grpc
from limits import RateLimitItem, parse_many
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
        per_pair: limits string of the (username, address) pair's windows, ``;``-separated
            (``3/minute;6/15minute;12/day``).
        per_peer: limits string(s) of one address (``30/5minute``).
        cluster: ``redis_url`` names a node of a Redis Cluster (``redis_cluster``).
    """

    def __init__(
        self,
        redis_url: str,
        key_prefix: str,
        per_pair: str,
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
        self.per_pair = parse_many(per_pair)
        self.per_peer = parse_many(per_peer)

    def _checks(self, username: str, peer: str) -> list[tuple[RateLimitItem, str, tuple[str, ...]]]:
        pair = ("signin-pair", (username.lower(), peer))
        address = ("signin-peer", (peer,))
        return [(item, *pair) for item in self.per_pair] + [
            (item, *address) for item in self.per_peer
        ]

    async def check(self, username: str, peer: str) -> None:
        """Raises ServiceError RESOURCE_EXHAUSTED ``too_many_failures`` (metadata
        ``retry_after_s``, ``limit``) when a budget is spent (the longest wait of
        the windows spent)."""
        spent = None
        for item, kind, keys in self._checks(username, peer):
            if not await self.limiter.test(item, kind, *keys):
                stats = await self.limiter.get_window_stats(item, kind, *keys)
                wait = max(1, math.ceil(stats.reset_time - time.time()))
                if spent is None or wait > spent[0]:
                    spent = (wait, item, kind)
        if spent is not None:
            wait, item, kind = spent
            who = "this username from your address" if kind == "signin-pair" else "your address"
            raise ServiceError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too_many_failures",
                f"too many failed sign-ins for {who} ({item}); retry in {wait} s",
                retry_after_s=str(wait),
                limit=str(item),
            )

    async def failed(self, username: str, peer: str) -> None:
        for item, kind, keys in self._checks(username, peer):
            await self.limiter.hit(item, kind, *keys)

    async def succeeded(self, username: str, peer: str) -> None:
        for item in self.per_pair:
            await self.limiter.clear(item, "signin-pair", username.lower(), peer)
