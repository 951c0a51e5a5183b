"""The clock keeper: the server's authority on time. It holds every running
deadline in Redis and fires each timeout once.

Keys (``P`` = key prefix):

* ``P:{clocks}:deadlines``: sorted set, member = game id, score = the earliest
  deadline (Unix ms) of the game's running clocks;
* ``P:{clocks}:games``: hash, game id -> JSON ``{"title", "version",
  "deadlines": {seat: ms}, "low_s"}`` of the version the deadlines belong to;
* ``P:{clocks}:inflight``: sorted set of games whose timeout is being fired
  (score: when the claim lapses);
* ``P:{clocks}:low``: sorted set, member ``<game>|<version>|<seat>``, score = when
  that seat's clock gets low (``clockLow``).

The four keys share the hash tag ``{clocks}`` (one hash slot), so the keeper's scripts run
on a Redis Cluster too.

**Tracking.** The keeper reads the lifecycle stream through its consumer group
(``clocks_group``, the shared loop of :mod:`services.platform.consumer`): every
event of a timed game carries ``deadlines`` (rules service,
``_lifecycle``), which replace the game's entry atomically, but only if the
event's version is not older than the stored one (re-delivered or claimed
entries arrive out of order), so tracking is idempotent. A finished game is
forgotten; a rewound game is read again from its rules service.

**Firing.** The keeper sleeps until the earliest stored deadline (woken at
once when it tracks an earlier one; at least ``tick_ms`` between looks, at
most ``idle_ms`` asleep); each look is one Lua script that puts lapsed claims
back, moves the due games from ``deadlines`` to ``inflight``, takes the due
``clockLow`` alerts and says when to look next; each due game is fired by
calling the rules service's ``Timeout(game, seat, expected_version)``. The
rules service appends the timeout with the game log's compare-and-set and the
idempotency key ``timeout:<version>``, so:

* a move that won the race makes the timeout ABORTED (``stale_version``): a no-op;
* a timeout fired again (a restart with timeouts in flight) is answered with
  the first answer: never a second entry;
* a finished game answers ``game_over``: a no-op;
* the rules service's clock saying "not yet" (``not_timed_out``, with its
  ``deadline_ms``) reschedules the game at that time;
* an outage leaves the game in flight; it is fired again after ``retry_ms``.

**Restarts.** Everything is in Redis (persisted like the game logs). On start
the keeper puts every in-flight game back as due (their calls may or may not
have reached the rules service: the compare-and-set and the idempotency key
make firing them again harmless), and the consumer group re-delivers what
was read but not acknowledged. So no timeout is lost and none fires twice
(``benchmarks/bench_clocks.py`` SIGKILLs a keeper under 10,000 clocks and
counts both).

**Replicas.** Every replica tracks (the consumer group shares the events out),
but only the one holding the ``clocks-firing`` lease looks for due timeouts
(:class:`services.platform.lease.Lease`, ``leader_lease_s``); when it dies, another
takes the lease within about 1.3 times that, puts the in-flight games back as due
(as at a restart) and fires them. A second keeper firing at once would be harmless
(same guarantees) but wasted. A deadline tracked by another replica does not wake
the firing one: it sees it at its next look, at most ``idle_ms`` later, which
matters only for a deadline tracked less than ``idle_ms`` before it is due.

Time comes from one :class:`services.match.timesource.TimeSource`.

Run: ``roundhouse serve clocks``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import redis.asyncio as aioredis
from prometheus_client import Counter, Gauge, Histogram

from services.lobby.hot_tables import HotTables
from services.match.timesource import WALL, TimeSource
from services.platform.lease import Lease
from services.platform.logging import get_logger

log = get_logger("clocks")

LINGER_MS = 25
"""The lifecycle consumer's wait after a batch (``services.platform.consumer``): deadlines are
absolute times in the entries, and a timeout that races a move loses to it on the log's
compare-and-set, so learning a move this much later changes no outcome."""
FIRED = Counter("roundhouse_clock_timeouts_total", "Timeouts fired, by outcome", ["outcome"])
LATENESS = Histogram(
    "roundhouse_clock_timeout_lateness_seconds",
    "Time from a deadline to the keeper firing it",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0),
)
TRACKED = Gauge("roundhouse_clock_games", "Games with a running clock")

CLOCK_LOW, TIMEOUT = "clockLow", "timeout"
"""The keeper's account event types (``Lobby.StreamEvents``); ``data``: ``remaining_ms``
(clockLow) or ``policy`` (timeout)."""

_TRACK_LUA = """
-- KEYS: deadlines zset, games hash, low zset; ARGV: game, version, info JSON, earliest ('' = none),
--       low members and scores (pairs)...
local prev = redis.call('HGET', KEYS[2], ARGV[1])
if prev then
  local old = cjson.decode(prev)
  if tonumber(old['version']) > tonumber(ARGV[2]) then return 0 end
end
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
end
for i = 5, #ARGV, 2 do
  redis.call('ZADD', KEYS[3], 'NX', ARGV[i + 1], ARGV[i])
end
return 1
"""

_CLAIM_LUA = """
-- KEYS: deadlines zset, inflight zset, games hash; ARGV: now, lease until, limit
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, ARGV[3])
local out = {}
for i = 1, #due, 2 do
  redis.call('ZREM', KEYS[1], due[i])
  redis.call('ZADD', KEYS[2], ARGV[2], due[i])
  out[#out + 1] = due[i]
  out[#out + 1] = due[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[3], due[i]) or ''
end
return out
"""

_TICK_LUA = """
-- One look, one round trip. KEYS: deadlines, inflight, games, low;
-- ARGV: now, claim lapses at, limit.
-- 1. in-flight games whose claim lapsed are due again
local now = tonumber(ARGV[1])
for _, game in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  redis.call('ZREM', KEYS[2], game)
  redis.call('ZADD', KEYS[1], 'LT', now, game)
end
-- 2. claim the due games
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, ARGV[3])
local claimed = {}
for i = 1, #due, 2 do
  redis.call('ZREM', KEYS[1], due[i])
  redis.call('ZADD', KEYS[2], ARGV[2], due[i])
  claimed[#claimed + 1] = due[i]
  claimed[#claimed + 1] = due[i + 1]
  claimed[#claimed + 1] = redis.call('HGET', KEYS[3], due[i]) or ''
end
-- 3. low clocks due: still the game's version, time still left
local lows = {}
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, ARGV[3])) do
  redis.call('ZREM', KEYS[4], member)
  local game, version, seat = string.match(member, '^(.*)|(%d+)|(%d+)$')
  local raw = game and redis.call('HGET', KEYS[3], game)
  if raw then
    local info = cjson.decode(raw)
    local deadline = info['deadlines'][seat]
    if tonumber(info['version']) == tonumber(version) and deadline and deadline > now then
      lows[#lows + 1] = game
      lows[#lows + 1] = version
      lows[#lows + 1] = seat
      lows[#lows + 1] = tostring(deadline - now)
    end
  end
end
-- 4. when to look next
local nxt = ''
for _, key in ipairs({KEYS[1], KEYS[2], KEYS[4]}) do
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if #first > 0 and (nxt == '' or tonumber(first[2]) < nxt) then nxt = tonumber(first[2]) end
end
return {claimed, lows, tostring(nxt)}
"""

_DONE_LUA = """
-- KEYS: inflight zset, deadlines zset, games hash; ARGV: game, version, reschedule at ('' = no)
redis.call('ZREM', KEYS[1], ARGV[1])
local prev = redis.call('HGET', KEYS[3], ARGV[1])
if not prev then return 0 end
local info = cjson.decode(prev)
if tonumber(info['version']) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
end
return 1
"""

_REQUEUE_LUA = """
-- KEYS: inflight zset, deadlines zset; ARGV: lapsed before ('+inf' = all), due at
local stuck = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, game in ipairs(stuck) do
  redis.call('ZREM', KEYS[1], game)
  redis.call('ZADD', KEYS[2], 'LT', ARGV[2], game)
end
return #stuck
"""


@dataclasses.dataclass(frozen=True)
class Fired:
    """What a rules service answered a timeout: ``outcome`` is ``timed_out``,
    ``stale`` (a move won), ``over`` (finished game), ``not_due`` (with its
    ``deadline_ms``), ``rewound`` (the game is behind the keeper) or ``error``
    (an outage: fire again later)."""

    outcome: str
    deadline_ms: int = 0


FireTimeout = Callable[[str, str, int, int], Awaitable[Fired]]
"""``(title, game_id, seat, expected_version) -> Fired``: asks the game's rules service."""


def rules_stubs(addresses: dict[str, str], credentials) -> Callable[[str], Any]:
    """``stub_for(title)``: the title's ``GameRules`` stub, one per title over a rules
    channel with game affinity (``services/platform/channels.py``) whose calls carry the
    internal ``credentials`` (metadata pairs), made on first use and shared by every caller
    in the process (the firer, the refresh)."""
    from roundhouse.v1 import game_pb2_grpc
    from services.platform.channels import rules_aio_channel

    stubs: dict[str, Any] = {}

    def stub_for(title: str) -> Any:
        stub = stubs.get(title)
        if stub is None:
            stub = stubs[title] = game_pb2_grpc.GameRulesStub(
                rules_aio_channel(addresses[title], credentials)
            )
        return stub

    return stub_for


def grpc_firer(
    addresses: dict[str, str],
    metadata,
    timeout_s: float = 5.0,
    *,
    stub_for: Callable[[str], Any] | None = None,
) -> FireTimeout:
    """The production :data:`FireTimeout`: ``GameRules.Timeout`` over gRPC with
    internal credentials (``metadata``), through ``stub_for`` (default: its own
    :func:`rules_stubs` of ``addresses``)."""
    from roundhouse.v1 import game_pb2
    from services.platform.channels import game_metadata
    from services.platform.grpc_errors import error_info

    stub_for = stub_for or rules_stubs(addresses, metadata)

    async def fire(title: str, game_id: str, seat: int, version: int) -> Fired:
        try:
            await stub_for(title).Timeout(
                game_pb2.TimeoutRequest(game_id=game_id, seat=seat, expected_version=version),
                timeout=timeout_s,
                metadata=game_metadata(game_id, metadata),
            )
            return Fired("timed_out")
        except grpc.aio.AioRpcError as err:
            return classify(err.code(), error_info(err))

    return fire


def classify(code: grpc.StatusCode, info) -> Fired:
    """A ``Timeout`` refusal as a :class:`Fired` outcome."""
    reason = info.reason if info is not None else ""
    if code == grpc.StatusCode.ABORTED:
        return Fired("stale")
    if code == grpc.StatusCode.OUT_OF_RANGE:
        return Fired("rewound")
    if code == grpc.StatusCode.NOT_FOUND or reason in ("game_over", "no_clock", "table_paused"):
        return Fired("over")
    if reason == "not_timed_out":
        deadline = int(info.metadata.get("deadline_ms", "0") or 0) if info else 0
        return Fired("not_due", deadline)
    return Fired("error")


class ClockKeeper:
    """Tracks deadlines from lifecycle events and fires timeouts (module docstring).

    Args:
        client: ``redis.asyncio`` client with ``decode_responses=True``.
        prefix: the key prefix.
        fire: asks a rules service to time a seat out (:func:`grpc_firer`).
        time: the one clock.
        events: the account event log (``services.lobby.events.AccountEvents``) that
            ``clockLow`` / ``timeout`` go to (None = nowhere).
        refresh: ``(title, game_id) -> lifecycle-like dict`` with the game's
            current ``version`` and ``deadlines`` (a rewound game); None = forget it.
        tick_ms, batch, concurrency, retry_ms, idle_ms: the shortest time between
            two looks while something is due, how many due games per look, how many
            calls at once, when to fire again after an outage, the longest sleep.
    """

    def __init__(
        self,
        client: aioredis.Redis,
        prefix: str,
        fire: FireTimeout,
        time: TimeSource = WALL,
        events=None,
        refresh: Callable[[str, str], Awaitable[dict | None]] | None = None,
        tick_ms: int = 10,
        batch: int = 500,
        concurrency: int = 64,
        retry_ms: int = 1000,
        idle_ms: int = 1000,
    ) -> None:
        self.r = client
        self.prefix = prefix
        self.fire = fire
        self.time = time
        self.events = events
        self.refresh = refresh
        self.tables = HotTables(client, prefix)
        self.tick_ms, self.batch, self.retry_ms, self.idle_ms = tick_ms, batch, retry_ms, idle_ms
        self.slots = asyncio.Semaphore(concurrency)
        self.deadlines_key = f"{prefix}:{{clocks}}:deadlines"
        self.games_key = f"{prefix}:{{clocks}}:games"
        self.inflight_key = f"{prefix}:{{clocks}}:inflight"
        self.low_key = f"{prefix}:{{clocks}}:low"
        self._track = client.register_script(_TRACK_LUA)
        self._claim = client.register_script(_CLAIM_LUA)
        self._done = client.register_script(_DONE_LUA)
        self._requeue = client.register_script(_REQUEUE_LUA)
        self._tick = client.register_script(_TICK_LUA)
        self.next_ms: int | None = None  # when the last look said to look again
        self.wake = asyncio.Event()
        self.outcomes: dict[str, int] = {}

    # ------------------------------------------------------------------ tracking

    async def handle(self, fields: dict[str, str]) -> None:
        """Lifecycle handler: track (or forget) a game's deadlines."""
        kind = fields.get("type")
        if kind == "game_rewound" and self.refresh is not None:
            fresh = await self.refresh(fields["title"], fields["game_id"])
            if fresh is not None:
                await self.track(fresh)
            return
        if kind == "game_finished":
            await self.track({**fields, "deadlines": "{}"})
            return
        if "deadlines" in fields:
            await self.track(fields)

    async def track(self, fields: dict[str, Any]) -> bool:
        """Store a game's deadlines as of ``fields["version"]`` (ignored when
        older than what is stored); True if stored."""
        deadlines = fields["deadlines"]
        if isinstance(deadlines, str):
            deadlines = json.loads(deadlines)
        deadlines = {int(k): int(v) for k, v in deadlines.items()}
        version = int(fields["version"])
        low_s = int(fields.get("clock_low_s", 0) or 0)
        info = json.dumps(
            {
                "title": fields["title"],
                "version": version,
                "deadlines": {str(k): v for k, v in deadlines.items()},
                "low_s": low_s,
                "policy": fields.get("timeout_policy", ""),
            }
        )
        earliest = min(deadlines.values()) if deadlines else ""
        lows: list[Any] = []
        if low_s:
            for seat, d in deadlines.items():
                lows += [f"{fields['game_id']}|{version}|{seat}", d - low_s * 1000]
        stored = await self._track(
            keys=[self.deadlines_key, self.games_key, self.low_key],
            args=[fields["game_id"], version, info, earliest, *lows],
        )
        if stored and earliest != "":
            self.wake.set()
        return bool(stored)

    # ------------------------------------------------------------------ firing

    async def recover(self) -> int:
        """Put every in-flight game back as due (at start: the calls of a
        keeper that died may or may not have been made). Returns how many."""
        n = await self._requeue(
            keys=[self.inflight_key, self.deadlines_key], args=["+inf", self.time.now_ms()]
        )
        if n:
            log.warning("in-flight timeouts of a previous run fired again", games=n)
        return int(n)

    async def fire_due(self) -> int:
        """Fire every due timeout (and ``clockLow``) now, in one round trip to
        look (:data:`_TICK_LUA`); returns how many timeouts were fired. Games
        in flight whose claim lapsed (an outage, or a call that never
        returned) are due again. Sets :attr:`next_ms`."""
        total = 0
        while True:
            now = self.time.now_ms()
            claimed, lows, nxt = await self._tick(
                keys=[self.deadlines_key, self.inflight_key, self.games_key, self.low_key],
                args=[now, now + 30_000, self.batch],
            )
            self.next_ms = int(float(nxt)) if nxt else None
            for i in range(0, len(lows), 4):
                game_id, version, seat, left = lows[i : i + 4]
                await self._publish(
                    game_id,
                    int(seat),
                    CLOCK_LOW,
                    {"version": int(version), "remaining_ms": int(left)},
                )
            jobs = []
            for i in range(0, len(claimed), 3):
                game_id, score, info = claimed[i], int(float(claimed[i + 1])), claimed[i + 2]
                if not info:
                    await self._done(
                        keys=[self.inflight_key, self.deadlines_key, self.games_key],
                        args=[game_id, -1, ""],
                    )
                    continue
                jobs.append(self._fire_one(game_id, score, json.loads(info), now))
            total += len(jobs)
            await asyncio.gather(*jobs)
            if len(claimed) < 3 * self.batch and len(lows) < 4 * self.batch:
                return total

    async def _fire_one(self, game_id: str, deadline: int, info: dict, now: int) -> None:
        version = info["version"]
        seat = min(info["deadlines"], key=lambda s: info["deadlines"][s])
        async with self.slots:
            try:
                fired = await self.fire(info["title"], game_id, int(seat), version)
            except Exception:  # noqa: BLE001 - fire again later
                log.exception("timeout call failed", game_id=game_id)
                fired = Fired("error")
        self.outcomes[fired.outcome] = self.outcomes.get(fired.outcome, 0) + 1
        FIRED.labels(fired.outcome).inc()
        again = ""
        if fired.outcome == "timed_out":
            LATENESS.observe(max(0, self.time.now_ms() - deadline) / 1000)
            await self._publish(
                game_id, int(seat), TIMEOUT, {"version": version, "policy": info.get("policy", "")}
            )
        elif fired.outcome == "not_due":
            again = str(fired.deadline_ms or self.time.now_ms() + self.retry_ms)
        elif fired.outcome == "error":
            again = str(self.time.now_ms() + self.retry_ms)
        elif fired.outcome == "rewound" and self.refresh is not None:
            fresh = await self.refresh(info["title"], game_id)
            await self._done(
                keys=[self.inflight_key, self.deadlines_key, self.games_key],
                args=[game_id, version, ""],
            )
            if fresh is not None:
                await self.track(fresh)
            return
        await self._done(
            keys=[self.inflight_key, self.deadlines_key, self.games_key],
            args=[game_id, version, again],
        )

    async def _publish(self, game_id: str, seat: int, kind: str, extra: dict) -> None:
        """An account event of the seat's account (``services/lobby/events.py``):
        ``clockLow`` (not for seats a hosted bot plays) or ``timeout``; deduped
        on (type, game, version, seat), so a timeout fired again after a
        restart is announced once."""
        if self.events is None:
            return
        table = await self.tables.by_game(game_id)
        if table is None or seat >= len(table.seats):
            return
        record = table.seats[seat]
        if not record.account_id or (kind == CLOCK_LOW and record.policy):
            return
        version = int(extra.pop("version"))
        await self.events.publish(
            record.account_id,
            kind,
            table_id=table.table_id,
            game_id=game_id,
            title=table.title,
            seat=seat,
            version=version,
            data=extra,
            dedupe=f"{kind}:{game_id}:{version}:{seat}",
            at_ms=self.time.now_ms(),
        )

    async def run(self, stop: asyncio.Event, lease: Lease | None = None) -> None:
        """Fire due timeouts until ``stop`` is set (the lifecycle consumer runs beside it);
        with a ``lease`` (kept by its own task), only while it is held: each time it is
        taken, in-flight games are put back as due first (:meth:`recover`)."""
        while not stop.is_set():
            if lease is not None and not await lease.wait_held(stop):
                return
            await self.recover()
            await self._looks(stop, lease)

    async def _looks(self, stop: asyncio.Event, lease: Lease | None) -> None:
        looks = 0
        while not stop.is_set() and (lease is None or lease.held):
            self.wake.clear()  # a deadline tracked from here on wakes the sleep below
            try:
                await self.fire_due()
                looks += 1
                if looks % 1000 == 1:
                    TRACKED.set(await self.r.zcard(self.deadlines_key))
            except Exception:  # noqa: BLE001 - Redis away: try again after a tick
                log.exception("firing failed")
                self.next_ms = None
            now = self.time.now_ms()
            # sleep until the next due time (or a newly tracked deadline wakes us), at
            # most idle_ms; never busy: at least tick_ms between looks while any is due
            nxt = self.next_ms if self.next_ms is not None else now + self.idle_ms
            until = now + self.tick_ms if nxt <= now else min(nxt, now + self.idle_ms)
            await self.time.sleep_until(until, self.wake)


async def serve() -> None:
    """``roundhouse serve clocks``: the keeper, its lifecycle consumer and metrics."""
    import signal

    from roundhouse.v1 import game_pb2
    from services.lobby.events import AccountEvents
    from services.platform.auth import internal
    from services.platform.channels import game_metadata
    from services.platform.consumer import consume
    from services.platform.gamelog import GameLog
    from services.platform.logging import configure_logging
    from services.platform.metrics import MetricsPortInUse, serve_metrics
    from services.platform.server import redis_client
    from services.platform.settings import KeeperSettings, get_settings
    from services.platform.supervise import Supervisor

    settings = get_settings(KeeperSettings)
    configure_logging(settings.log_level, settings.log_format)
    if settings.metrics_port:
        try:
            serve_metrics(settings.metrics_port, settings.bind_host)
        except MetricsPortInUse as exc:
            log.error("cannot start", server="clocks", error=str(exc))
            raise SystemExit(2) from None
    client = redis_client(
        settings.redis_url, settings.redis_max_connections, cluster=settings.redis_cluster
    )
    creds = internal(settings.internal_secret, "clocks")

    stub_for = rules_stubs(settings.rules_addresses, creds)  # one channel per title, both uses

    async def refresh(title: str, game_id: str) -> dict | None:
        try:
            view = await stub_for(title).GetView(
                game_pb2.GetViewRequest(game_id=game_id),
                timeout=5,
                metadata=game_metadata(game_id),
            )
        except grpc.aio.AioRpcError:
            return None
        return {
            "game_id": game_id,
            "title": title,
            "version": view.version,
            "deadlines": {
                str(c.seat): c.deadline_ms for c in view.clocks if c.running and not view.finished
            },
        }

    keeper = ClockKeeper(
        client,
        settings.key_prefix,
        grpc_firer(settings.rules_addresses, creds, stub_for=stub_for),
        events=AccountEvents(client, settings.key_prefix, settings.events_maxlen),
        refresh=refresh,
        tick_ms=settings.clocks_tick_ms,
        concurrency=settings.clocks_concurrency,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    gamelog = GameLog.for_settings(client, settings)
    background = Supervisor("clocks")
    background.start(
        "clocks-events",
        lambda: consume(
            client,
            gamelog.lifecycle_keys,
            settings.clocks_group,
            f"{settings.consumer_name}-clocks",
            keeper.handle,
            stop=stop,
            block_ms=200,
            linger_ms=LINGER_MS,
        ),
    )
    lease = Lease(client, settings.key_prefix, "clocks-firing", settings.leader_lease_s)
    background.start("clocks-lease", lambda: lease.keep(stop))
    background.start("clocks-firing", lambda: keeper.run(stop, lease))
    log.info("clock keeper running", group=settings.clocks_group)
    try:
        await stop.wait()
        await background.wait("clocks-events", 5)
        await background.wait("clocks-firing", 5)
        await background.wait("clocks-lease", 5)
    finally:
        await background.stop()
        await client.aclose()
    log.info("clock keeper stopped")


def main() -> None:
    from services.platform.server import run_service

    run_service(serve())


if __name__ == "__main__":
    main()
