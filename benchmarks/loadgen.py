"""The load of the load-and-fault benchmark (issue 17, item 4; ``bench_load_faults``):
games of mixed titles on a :class:`~services.cli.launcher.Stack`, bots on most seats and
scripted people on the rest, playing through the gateways over HTTP.

* :class:`LoadSettings`: every size and duration (``ROUNDHOUSE_BENCH_LOAD_*``).
* :func:`plan_games`: which games (title, seats, seed), in an interleaved order; the tables
  are made and the people played by :class:`tests.integration.http_people.Players`.
* :class:`Monitor`: the games' versions and ends from their streams, every 2 s (the
  progress bar's moves/s), and :class:`CpuMeter`: CPU seconds of every process of the run
  by kind (psutil, sampled every 2 s, so a process killed mid-run keeps what it had used).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import aiohttp
import asyncpg
import psutil
import redis.asyncio as aioredis
from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from redis.asyncio.cluster import RedisCluster
from sqlalchemy.ext.asyncio import AsyncEngine

from services.accounts.store import AccountStore
from services.cli.launcher import Stack, kind_of
from services.platform.db import create_engine, session_factory
from services.platform.gamelog import GameLog
from services.platform.settings import StoreSettings
from tests.integration.http_people import Front, Game, Players
from tests.integration.invariants import stack_game_log

TITLE_PLAYERS = {"railbarons": 4, "transsib": 4, "e1894": 3}
"""Players per game of each title."""
TITLE_POLICIES = {"railbarons": "random", "transsib": "random", "e1894": "greedy"}
"""The bots of each title: the cheapest that keeps games at their usual length. ``random``
(one ``ListLegalActions`` and a seeded draw, no simulation) where it does; not in 1894,
whose hosted ``random`` bot draws from every legal move, not the play-out subset that keeps
random games finite: its auctions then loop (4 games of 3 random bots through the services
made 200, 272, 404 and 7,146 moves, 1,656 of them bids). ``greedy`` (one look-ahead over
the play-out moves) plays 1894 in 515-1,040 moves at ~2 ms of CPU a move (10 seeds)."""
TITLE_MOVES = {"railbarons": 256, "transsib": 272, "e1894": 710}
"""Mean moves of a game of :data:`TITLE_POLICIES` bots with :data:`TITLE_PLAYERS`
(random play: ``benchmarks.common.random_game``, 8 seeds; 1894 greedy: 10 seeds): to
estimate how long a run has left."""

LOAD_GENERATOR = "load generator"
POSTGRES = "postgresql (this run's database)"
RABBITMQ = "rabbitmq (shared broker)"
NOT_STACK = (LOAD_GENERATOR, RABBITMQ)
"""CPU figures reported apart from the stack's total: the benchmark's own process, and the
machine's shared RabbitMQ (whose CPU includes whatever else uses it)."""

SAMPLE_S = 2.0
"""How often the games' streams and the processes' CPU are read (s)."""


SMALL = {
    "games": 100,
    "warmup_s": 15.0,
    "measure_s": 45.0,
    "kill_every_s": 10.0,
    "compare_games": 100,
    "compare_rounds": 1,
    "compare_warmup_s": 15.0,
    "compare_measure_s": 45.0,
}
"""The scaled-down run (``size`` ``small``, what ``make bench`` runs, ~20 minutes): every
kill of the fault schedule still finds games running (a run of fewer than ~50 games ends
before the last kills)."""


class LoadSettings(BaseSettings):
    """Sizes and durations of ``bench_load_faults`` (``ROUNDHOUSE_BENCH_LOAD_<NAME>``).

    ``size``: ``small`` (the default: :data:`SMALL` for every field not set) or ``full``
    (the field defaults below: the issue's size, 1,000 concurrent games)."""

    model_config = SettingsConfigDict(env_prefix="ROUNDHOUSE_BENCH_LOAD_", extra="ignore")

    size: Literal["small", "full"] = Field(
        "small", description="small: the scaled-down run of make bench; full: 1,000 games"
    )

    games: int = Field(1000, ge=1, description="concurrent games of the fault run")
    mix: dict[str, int] = Field(
        default_factory=lambda: {"railbarons": 42, "transsib": 42, "e1894": 16},
        description="title -> share of the games (JSON); 42/42/16 gives each title about a "
        "third of the moves (an 1894 game of greedy bots is ~2.7 times as long)",
    )
    person_every: int = Field(
        2, ge=0, description="every n-th game has one scripted person (0: bots only)"
    )
    policies: dict[str, str] = Field(
        default_factory=lambda: dict(TITLE_POLICIES),
        description="title -> the hosted bot policy on every seat but the person's (JSON)",
    )
    replicas: int = Field(2, ge=1, description="processes of every service kind (fault run)")
    worker_concurrency: int = Field(
        4, ge=1, description="pool processes of the bot workers (worker_pool: how shared)"
    )
    worker_pool: Literal["total", "per_replica"] = Field(
        "total",
        description="total: the worker replicas share worker_concurrency pool processes (2 "
        "replicas of 2 for 4: the same bot capacity on both sides of the comparison); "
        "per_replica: every worker replica has worker_concurrency",
    )
    redis: Literal["cluster", "single"] = Field(
        "cluster",
        description="the hot store: a local Redis Cluster of 3 masters and 3 replicas (issue "
        "17 asks the load test on the cluster), or one private redis-server",
    )
    broker_url: str = Field(
        "amqp://guest:guest@127.0.0.1:5672//", description="the bots' Celery broker"
    )
    warmup_s: float = Field(30.0, ge=0, description="after every game started, before timing")
    measure_s: float = Field(120.0, gt=0, description="the timed window before the faults")
    kill_every_s: float = Field(20.0, gt=0, description="between two kills of the schedule")
    deadline_s: float = Field(4 * 3600.0, gt=0, description="for every game to finish")
    compare_games: int = Field(1000, ge=1, description="games of each comparison round")
    compare_rounds: int = Field(
        2, ge=1, description="rounds of each side (1 replica, 2 replicas), alternating"
    )
    compare_warmup_s: float = Field(30.0, ge=0)
    compare_measure_s: float = Field(90.0, gt=0)
    think_s: float = Field(0.0, ge=0, description="a person's pause before each move")
    seed: int = Field(1, ge=0, description="seeds of the bots-only tables")

    @model_validator(mode="after")
    def _scaled_down(self) -> LoadSettings:
        if self.size == "small":
            for name, value in SMALL.items():
                if name not in self.model_fields_set:
                    setattr(self, name, value)
        return self


# ---------------------------------------------------------------------- the games


def plan_games(games: int, mix: dict[str, int], person_every: int, seed: int) -> list[Game]:
    """``games`` games split over the titles of ``mix`` by their shares (largest remainder),
    interleaved (each title's games spread evenly through the list); game ``i`` has a person
    on seat ``i mod players`` when ``i`` is a multiple of ``person_every``.

    Raises:
        ValueError: a title of ``mix`` is not one of :data:`TITLE_PLAYERS`, or no share.
    """
    unknown = set(mix) - set(TITLE_PLAYERS)
    if unknown or not sum(mix.values()):
        raise ValueError(f"mix must give shares of {sorted(TITLE_PLAYERS)}, got {mix}")
    total = sum(mix.values())
    exact = {t: games * w / total for t, w in mix.items() if w}
    counts = {t: int(x) for t, x in exact.items()}
    short = games - sum(counts.values())
    for t in sorted(exact, key=lambda t: exact[t] - counts[t], reverse=True)[:short]:
        counts[t] += 1
    order = sorted(((k + 0.5) / n, t) for t, n in counts.items() for k in range(n))
    out = []
    for i, (_, title) in enumerate(order):
        players = TITLE_PLAYERS[title]
        person = i % players if person_every and i % person_every == 0 else None
        out.append(Game(i, title, players, person, seed * 1_000_000 + i))
    return out


# ---------------------------------------------------------------------- measuring


class Monitor:
    """The games' versions and ends, read from their streams (the last entry of each game
    not yet seen finished), and the timeline of (time, moves, games finished)."""

    def __init__(self, games: list[Game], gamelog: GameLog) -> None:
        self.games, self.gamelog = games, gamelog
        self.timeline: list[tuple[float, int, int]] = []
        self.failed_reads = 0

    async def sample(self) -> tuple[float, int, int]:
        """Read the last entry of every game not yet seen finished; the timeline's new point.
        A read that fails (Redis away for a moment: a failover) leaves the games as last
        seen and is counted (:attr:`failed_reads`)."""
        live = [g for g in self.games if g.game_id and not g.done]
        if live:
            try:
                async with self.gamelog.r.pipeline(transaction=False) as pipe:
                    for g in live:
                        pipe.xrevrange(self.gamelog.log_key(g.game_id), count=1)
                    rows = await pipe.execute()
            except Exception:  # noqa: BLE001 - any failure of the read: try again next time
                self.failed_reads += 1
                rows = [None] * len(live)
            for g, row in zip(live, rows, strict=True):
                if row:
                    g.version = int(row[0][0].split("-")[0])
                    g.done = row[0][1].get("finished") == "1"
        point = (
            time.monotonic(),
            sum(g.version for g in self.games),
            sum(g.done for g in self.games),
        )
        self.timeline.append(point)
        return point

    def half_left_s(self, rate: float) -> float:
        """About how long until half of the games still running have ended, at ``rate``
        moves/s shared evenly by them (a game's moves left: :data:`TITLE_MOVES` less its
        version, at least a tenth of it)."""
        left = sorted(
            max(TITLE_MOVES[g.title] - g.version, TITLE_MOVES[g.title] // 10)
            for g in self.games
            if not g.done
        )
        if not left or rate <= 0:
            return 0.0
        return left[len(left) // 2] * len(left) / rate

    def rate(self, over_s: float = 10.0) -> float:
        """Moves per second over the last ``over_s`` seconds of the timeline."""
        if len(self.timeline) < 2:
            return 0.0
        now, moves, _ = self.timeline[-1]
        then = next((p for p in self.timeline if p[0] >= now - over_s), self.timeline[0])
        return (moves - then[1]) / (now - then[0]) if now > then[0] else 0.0


class CpuMeter:
    """CPU seconds (user + system) of every process of a run, sampled: the stack's (a
    worker with its pool), its Redis, this run's PostgreSQL backends, the shared RabbitMQ
    and this process (the load generator, without its children). A process first seen
    after a mark counts from zero (a restarted process's start-up is part of the cost)."""

    def __init__(
        self, stack: Stack, redis_procs: Callable[[], list[psutil.Process]], database: str
    ) -> None:
        self.stack, self.redis_procs, self.database = stack, redis_procs, database
        self.last: dict[tuple[str, int], float] = {}
        self._pg: list[int] = []
        self._rabbit = [
            p for p in psutil.process_iter(["name"]) if p.info["name"] in ("beam.smp", "beam")
        ]

    @property
    def rabbitmq(self) -> list[psutil.Process]:
        """The machine's RabbitMQ processes (the shared broker)."""
        return list(self._rabbit)

    @property
    def postgres(self) -> list[int]:
        """This run's database's backends, as last learnt (:meth:`refresh_postgres`)."""
        return list(self._pg)

    async def refresh_postgres(self, conn: asyncpg.Connection | None) -> None:
        """Learn this run's database's backends (they come and go with the pools)."""
        if conn is not None and self.database:
            rows = await conn.fetch(
                "SELECT pid FROM pg_stat_activity WHERE datname = $1", self.database
            )
            self._pg = [r["pid"] for r in rows]

    def _procs(self) -> Iterator[tuple[str, psutil.Process, bool]]:
        """(name, process, with its children)."""
        for p in list(self.stack.procs):
            yield p.name, psutil.Process(p.popen.pid), p.name.startswith("worker")
        for p in self.redis_procs():
            yield "redis", p, False
        for pid in self._pg:
            with contextlib.suppress(psutil.Error):
                yield POSTGRES, psutil.Process(pid), False
        for p in self._rabbit:
            yield RABBITMQ, p, False
        yield LOAD_GENERATOR, psutil.Process(), False

    def sample(self) -> dict[tuple[str, int], float]:
        for name, proc, with_children in self._procs():
            with contextlib.suppress(psutil.Error):
                kids = proc.children(recursive=True) if with_children else []
                total = 0.0
                for p in [proc, *kids]:
                    with contextlib.suppress(psutil.Error):
                        total += sum(p.cpu_times()[:2])
                self.last[(name, proc.pid)] = total
        return dict(self.last)

    @staticmethod
    def by_kind(
        before: dict[tuple[str, int], float], after: dict[tuple[str, int], float]
    ) -> dict[str, float]:
        """CPU seconds per process kind between two samples."""
        out: dict[str, float] = {}
        for (name, pid), value in after.items():
            kind = kind_of(name)
            out[kind] = out.get(kind, 0.0) + value - before.get((name, pid), 0.0)
        return out


def machine_busy_s() -> float:
    """CPU seconds the whole machine has spent busy since boot (every process, anyone's)."""
    t = psutil.cpu_times()
    return t.user + t.nice + t.system + getattr(t, "irq", 0) + getattr(t, "softirq", 0)


@dataclasses.dataclass
class Window:
    """What a timed window saw: its length (s), moves made, CPU seconds per process kind,
    the machine's busy CPU seconds, the persons' move latencies (ms) and the load average."""

    seconds: float
    moves: int
    cpu: dict[str, float]
    machine_s: float
    move_ms: list[float]
    loadavg: tuple[float, float, float]

    @property
    def moves_per_s(self) -> float:
        return self.moves / self.seconds

    @property
    def stack_cores(self) -> float:
        return sum(v for k, v in self.cpu.items() if k not in NOT_STACK) / self.seconds

    def cores(self, kind: str) -> float:
        return self.cpu.get(kind, 0.0) / self.seconds

    def ms_per_move(self, kind: str) -> float:
        return 1000 * self.cpu.get(kind, 0.0) / max(self.moves, 1)


@dataclasses.dataclass
class Mark:
    at: float
    moves: int
    cpu: dict[tuple[str, int], float]
    machine_s: float
    posts: int


async def mark(monitor: Monitor, meter: CpuMeter, players: Players) -> Mark:
    at, moves, _ = await monitor.sample()
    return Mark(at, moves, meter.sample(), machine_busy_s(), len(players.posts))


def window(a: Mark, b: Mark, players: Players) -> Window:
    return Window(
        seconds=b.at - a.at,
        moves=b.moves - a.moves,
        cpu=CpuMeter.by_kind(a.cpu, b.cpu),
        machine_s=b.machine_s - a.machine_s,
        move_ms=[p.ms for p in players.posts[a.posts : b.posts]],
        loadavg=os.getloadavg(),
    )


# ---------------------------------------------------------------------- the hot store


@dataclasses.dataclass
class HotStore:
    """Where the game log lives for a run: ``stack_kwargs`` for the :class:`Stack`, whether
    it is a cluster (the client kind), its own Redis processes (``procs``, for the CPU
    split; none when the stack starts its Redis) and, on a cluster, ``kill_master``: the
    fault schedule's ``kill -9`` of a master, its replica's failover and the killed node's
    return as a replica."""

    stack_kwargs: dict[str, Any]
    cluster: bool = False
    procs: Callable[[], list[psutil.Process]] = list
    kill_master: Callable[[], str] | None = None


CLUSTER_ENV = {"ROUNDHOUSE_REDIS_WAIT_REPLICAS": "1"}
"""On a cluster a move is acknowledged once its master's replica has it (``WAIT``), so a
master killed by the fault schedule loses no acknowledged move."""


@contextlib.contextmanager
def hot_store(kind: str, workdir: Path) -> Iterator[HotStore]:
    """``single``: the stack's own private ``redis-server`` (not killed by the schedule: a
    single Redis killed loses the games, which is why a deployment runs a cluster).
    ``cluster``: a local Redis Cluster of 3 masters and 3 replicas
    (``services.cli.redis_cluster``, issue 17, item 1), the stack's processes told so
    (``redis_cluster``, :data:`CLUSTER_ENV`), a master killed by the schedule.
    """
    if kind == "single":
        yield HotStore({"private_redis": True})
        return
    from services.cli.redis_cluster import LocalRedisCluster

    with LocalRedisCluster(masters=3, replicas=1, workdir=workdir) as cluster:

        def procs() -> list[psutil.Process]:
            return [psutil.Process(n.proc.pid) for n in cluster.nodes if n.alive()]

        def kill_master() -> str:
            node = cluster.live_masters()[0]
            cluster.kill(node)
            cluster.wait_failover()
            cluster.restart(node)
            return f"redis master :{node.port}"

        yield HotStore(
            {"redis_url": cluster.url, "redis_cluster": True, "env": CLUSTER_ENV},
            cluster=True,
            procs=procs,
            kill_master=kill_master,
        )


@dataclasses.dataclass
class Clients:
    """What a load run talks to its stack with: the people (over HTTP, spread over the
    gateways), the game log, the durable store and an admin connection to PostgreSQL (None
    when it cannot be had: the CPU of the run's backends is then not measured)."""

    players: Players
    gamelog: GameLog
    engine: AsyncEngine
    pg: asyncpg.Connection | None


@contextlib.asynccontextmanager
async def clients(
    stack: Stack,
    hot: HotStore,
    policies: dict[str, str],
    postgres_url: str,
    think_s: float = 0.0,
) -> AsyncIterator[Clients]:
    """The :class:`Clients` of a run on ``stack``, closed afterwards (the people stopped
    first)."""
    kind = RedisCluster if hot.cluster else aioredis.Redis
    client = kind.from_url(stack.redis_url, decode_responses=True)
    engine = create_engine(stack.database_url, StoreSettings())
    pg = None
    with contextlib.suppress(Exception):
        pg = await asyncpg.connect(postgres_url, timeout=5)
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=60)
    try:
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            addresses = stack.gateway_addresses if stack.replicas > 1 else [stack.gateway_address]
            players = Players(
                Front(session, addresses),
                AccountStore(session_factory(engine)),
                policies,
                think_s,
            )
            try:
                yield Clients(players, stack_game_log(client, stack), engine, pg)
            finally:
                await players.stop()
    finally:
        if pg is not None:
            await pg.close()
        await engine.dispose()
        await client.aclose()
