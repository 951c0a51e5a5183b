"""Per-account quotas and rate limits of the lobby (issue 13).

Rates are counted with the ``limits`` library in Redis (moving windows, so
every lobby replica counts the same calls): tables created per account
(``tables_created_per_account``), moves per account (``moves_per_account``)
and watches opened per account or, for anonymous spectators, per client
address (``watch_opens_per_account``). The number of tables an account owns
that are open, starting or running (``tables_per_account``) is counted in the
database, the tables' truth; the count and the new table's insert run under a
per-account Redis lock (``<prefix>:lock:tables:<account>``, redis-py's
``Lock``), so concurrent creations by one account, on any lobby replica, never
pass it. Open watches per account and per client address
are counted by :class:`services.lobby.fanout.WatchHub` in the process.

A spent budget is refused RESOURCE_EXHAUSTED with a reason (``too_many_tables``,
``table_rate``, ``move_rate``, ``watch_rate``, ``too_many_watches``) and ErrorInfo
metadata ``retry_after_s`` (seconds, in thousandths: ``0.087`` when a 10-per-second window
frees a slot in 87 ms; :func:`wait_s`) and ``limit``;
:class:`QuotaExceeded` carries the same for the HTTP gateway (429 with
``Retry-After``). The counters need Redis: Redis down is UNAVAILABLE
``storage_unavailable``, Redis out of memory UNAVAILABLE ``storage_full``
(the error interceptor maps both), and the call is not made.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import AsyncIterator, Callable

import grpc
import redis.asyncio as aioredis
import sqlalchemy as sa
from limits import RateLimitItem, parse
from limits.aio.storage import RedisClusterStorage, RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.exceptions import LockError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from services.lobby.models import OPEN, RUNNING, STARTING, Table
from services.platform.grpc_errors import ServiceError
from services.platform.hotstore import limits_uri
from services.platform.settings import LobbySettings

ACTIVE = (OPEN, STARTING, RUNNING)
"""Table statuses that count against ``tables_per_account``."""


class QuotaExceeded(ServiceError):
    """RESOURCE_EXHAUSTED with ``retry_after_s`` (seconds, fractions allowed) and ``limit``
    (the budget as text, e.g. ``10 per 1 minute``)."""

    def __init__(self, reason: str, message: str, retry_after_s: float, limit: str) -> None:
        super().__init__(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            reason,
            f"{message}; retry in {retry_after_s} s",
            retry_after_s=retry_after_s,
            limit=limit,
        )
        self.retry_after_s = retry_after_s


def wait_s(reset_time: float, now: float) -> float:
    """Seconds from ``now`` until a moving window frees a slot at ``reset_time``, rounded up to
    the millisecond and at least 0.001 s: the retry hint of a refusal (a move budget of 10 per
    second frees a slot within a second, so whole seconds would make a client wait too long)."""
    return max(0.001, math.ceil(round((reset_time - now) * 1000, 6)) / 1000)


class RateLimits:
    """Named rate limits kept in Redis.

    Args:
        redis_url: the Redis holding the counters (keys ``<prefix>:limits:...``).
        key_prefix: the deployment's key prefix.
        rates: name -> limits string (``"10/minute"``).
        clock: seconds since the epoch (tests may pass another; the windows
            themselves are Redis's, so only ``retry_after_s`` uses it).
        cluster: ``redis_url`` names a node of a Redis Cluster (``redis_cluster``).
    """

    def __init__(
        self,
        redis_url: str,
        key_prefix: str,
        rates: dict[str, str],
        clock: Callable[[], float] = time.time,
        cluster: bool = False,
    ) -> None:
        storage = RedisClusterStorage if cluster else RedisStorage
        self.storage = storage(
            limits_uri(redis_url, cluster),
            implementation="redispy",
            key_prefix=f"{key_prefix}:limits",
        )
        self.limiter = MovingWindowRateLimiter(self.storage)
        self.rates: dict[str, RateLimitItem] = {name: parse(r) for name, r in rates.items()}
        self.clock = clock

    async def hit(self, name: str, key: str, reason: str, what: str) -> None:
        """Count one call of ``name`` for ``key``.

        Raises:
            QuotaExceeded: the budget is spent (nothing counted).
        """
        item = self.rates[name]
        if await self.limiter.hit(item, name, key):
            return
        stats = await self.limiter.get_window_stats(item, name, key)
        wait = wait_s(stats.reset_time, self.clock())
        raise QuotaExceeded(reason, f"too many {what} ({item})", wait, str(item))

    async def retry_after(self, name: str, key: str) -> float:
        """Seconds until ``key`` may call ``name`` again (0 = now; :func:`wait_s`)."""
        item = self.rates[name]
        if await self.limiter.test(item, name, key):
            return 0
        stats = await self.limiter.get_window_stats(item, name, key)
        return wait_s(stats.reset_time, self.clock())

    async def close(self) -> None:
        client = getattr(getattr(self.storage, "bridge", None), "storage", None)
        if client is not None:  # the library opens its client lazily and has no close
            await client.aclose()


class LobbyQuotas:
    """The lobby's quotas.

    Args:
        settings: the budgets (``tables_per_account``, ``tables_created_per_account``,
            ``moves_per_account``, ``watch_opens_per_account``) and the Redis URL.
        sessions: the store's session factory (tables per account are counted there).
        client: the Redis holding the per-account creation locks (``redis.asyncio``).
        rates: the rate limits (default: in ``settings.redis_url``).
    """

    LOCK_TIMEOUT_S = 10.0
    """A creation lock frees itself this long after it was taken (a lobby
    that died holding it); a creation waits for it at most as long."""

    def __init__(
        self,
        settings: LobbySettings,
        sessions: async_sessionmaker[AsyncSession],
        client: aioredis.Redis,
        rates: RateLimits | None = None,
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        self.r = client
        self.rates = rates or RateLimits(
            settings.redis_url,
            settings.key_prefix,
            {
                "tables": settings.tables_created_per_account,
                "moves": settings.moves_per_account,
                "watches": settings.watch_opens_per_account,
            },
            cluster=settings.redis_cluster,
        )

    @contextlib.asynccontextmanager
    async def creating_table(self, account_id: str) -> AsyncIterator[None]:
        """Hold ``account_id``'s creation lock while the block stores the new
        table, after :meth:`table_created` checked the quota under it.

        Raises:
            QuotaExceeded: ``too_many_tables``, ``table_rate`` (nothing stored).
            ServiceError: UNAVAILABLE ``account_busy`` (``retry_after_s`` 1):
                the lock stayed taken ``LOCK_TIMEOUT_S``.
        """
        lock = self.r.lock(
            f"{self.settings.key_prefix}:lock:tables:{account_id}",
            timeout=self.LOCK_TIMEOUT_S,
            blocking_timeout=self.LOCK_TIMEOUT_S,
        )
        if not await lock.acquire():
            raise ServiceError(
                grpc.StatusCode.UNAVAILABLE,
                "account_busy",
                "another table of this account is being created; retry",
                retry_after_s=1,
            )
        try:
            await self.table_created(account_id)
            yield
        finally:
            with contextlib.suppress(LockError):  # expired meanwhile: nothing to free
                await lock.release()

    async def table_created(self, account_id: str) -> None:
        """Before a new table of ``account_id``: its active tables and its
        creation rate. Raises :class:`QuotaExceeded` (``too_many_tables``,
        ``table_rate``). Not atomic by itself: call it through
        :meth:`creating_table`."""
        limit = self.settings.tables_per_account
        async with self.sessions() as session:
            active = await session.scalar(
                sa.select(sa.func.count())
                .select_from(Table)
                .where(Table.owner_id == account_id, Table.status.in_(ACTIVE))
            )
        if active >= limit:
            raise QuotaExceeded(
                "too_many_tables",
                f"an account owns at most {limit} open, starting or running tables "
                "(abort one, or finish a game)",
                max(1, math.ceil(self.settings.open_table_sweep_s)),
                str(limit),
            )
        await self.rates.hit("tables", account_id, "table_rate", "tables created")

    async def move(self, account_id: str) -> None:
        """Before a move of ``account_id``. Raises :class:`QuotaExceeded` ``move_rate``."""
        await self.rates.hit("moves", account_id, "move_rate", "moves")

    async def watch_opened(self, who: str) -> None:
        """Before a watch of ``who`` (an account id, or ``peer:<address>``).
        Raises :class:`QuotaExceeded` ``watch_rate``."""
        await self.rates.hit("watches", who, "watch_rate", "watches opened")

    async def close(self) -> None:
        await self.rates.close()
