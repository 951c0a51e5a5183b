"""Leader leases: one replica of a service runs a periodic job at a time.

Some background jobs look at shared state and gain nothing from running in every
replica: the tournament service's reconciler, the clock keeper's looks for due
timeouts, the dispatcher's stall sweep and dead-turn check. Each of those jobs is
safe to run twice (claims, compare-and-set appends, idempotency keys, row locks),
so two leaders for a moment cost CPU, never correctness; a lease only saves the
work of the other replicas.

A :class:`Lease` is a redis-py :class:`redis.asyncio.lock.Lock` (``SET NX PX``
with a random token; extension and release by Lua scripts that check the token)
on the key ``P:lease:<name>``, with a TTL of ``ttl_s``. :meth:`Lease.keep` tries
to take it every ``ttl_s / 3`` seconds and, while held, renews it (the Lock's
``reacquire``: the TTL starts again). A replica that dies or stops renewing
loses it at most ``ttl_s`` later, and another replica's next try takes it: the
job pauses for at most ``ttl_s + ttl_s / 3``. A replica stopped cleanly releases
it at once. :attr:`Lease.held` answers without a round trip: true only while the
last successful take or renewal is less than ``ttl_s`` old, less a margin
(``ttl_s / 3``) for the local clock's drift and the round trip. The one key works
on a single Redis and on a Redis Cluster alike (``services/platform/hotstore.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import redis.asyncio as aioredis
from redis.exceptions import LockError, RedisError

from services.platform.logging import get_logger

log = get_logger("lease")


class Lease:
    """Leadership of the job ``name`` among the replicas that share a Redis.

    Args:
        client: ``redis.asyncio`` client (single or cluster).
        prefix: the key prefix (``P``); the key is ``P:lease:<name>``.
        name: the job's name.
        ttl_s: seconds the lease lasts without a renewal (> 0).

    Raises:
        ValueError: ``ttl_s`` not positive.
    """

    def __init__(self, client: aioredis.Redis, prefix: str, name: str, ttl_s: float) -> None:
        if ttl_s <= 0:
            raise ValueError(f"ttl_s must be positive, not {ttl_s}")
        self.name = name
        self.key = f"{prefix}:lease:{name}"
        self.ttl_s = ttl_s
        self.every_s = ttl_s / 3
        self.lock = client.lock(self.key, timeout=ttl_s, blocking=False, thread_local=False)
        self._valid_until = float("-inf")  # monotonic time
        self.terms = 0
        """How many times this replica took the lease."""

    @property
    def held(self) -> bool:
        """True while this replica holds the lease (no round trip)."""
        return time.monotonic() < self._valid_until

    async def try_hold(self) -> bool:
        """Take the lease if free, or renew it if ours; True if held now. Redis errors
        count as not held (logged)."""
        started = time.monotonic()
        try:
            if self.lock.local.token is not None:
                try:
                    await self.lock.reacquire()
                    ok = True
                except LockError:  # it lapsed, and maybe another replica took it
                    self.lock.local.token = None
                    ok = await self.lock.acquire(blocking=False)
            else:
                ok = await self.lock.acquire(blocking=False)
        except RedisError as exc:
            log.warning("lease unreachable", lease=self.name, error=str(exc))
            ok = False
        if ok:
            if not self.held:
                self.terms += 1
                log.info("lease taken", lease=self.name)
            self._valid_until = started + self.ttl_s - self.every_s
        else:
            if self.held:
                log.info("lease lost", lease=self.name)
            self._valid_until = float("-inf")
        return ok

    async def release(self) -> None:
        """Give the lease up now (a clean stop), if held."""
        self._valid_until = float("-inf")
        if self.lock.local.token is None:
            return
        with contextlib.suppress(LockError, RedisError):
            await self.lock.release()
        self.lock.local.token = None

    async def keep(self, stop: asyncio.Event) -> None:
        """Take or renew the lease every ``ttl_s / 3`` seconds until ``stop``, then
        release it."""
        try:
            while not stop.is_set():
                await self.try_hold()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.every_s)
        finally:
            await self.release()

    async def wait_held(self, stop: asyncio.Event) -> bool:
        """Wait until this replica holds the lease (True) or ``stop`` is set (False);
        looks at :attr:`held` every 0.2 s at most."""
        while not self.held:
            if stop.is_set():
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), min(self.every_s, 0.2))
        return True
