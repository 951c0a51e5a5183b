"""The load and fault test of issue 17 (item 4, and the numbers "with 2 replicas of each
service ... at least the single-replica throughput; show the CPU split" and "1,000
concurrent games complete under the fault schedule with zero gaps or duplicates").

Every run is a :class:`~services.cli.launcher.Stack` of real processes: a rules service per
title, the lobby, accounts, the gateway, the dispatcher, the archiver, the tournament
service and the clock keeper, each as ``replicas`` processes (round-robin gRPC channels, each
game's calls on one rules replica, ``services/platform/channels.py``;
the scripted people spread their HTTP requests over the gateways like a load balancer),
and ``replicas`` Celery workers sharing ``worker_concurrency`` pool processes (the same
bot capacity whatever the replicas; ``worker_pool``), consuming the bot queue on RabbitMQ
(quorum queue, late acks); the game log on the hot store (``ROUNDHOUSE_BENCH_LOAD_REDIS``:
``cluster`` by default, a local Redis Cluster of 3 masters and 3 replicas, moves
acknowledged after ``WAIT 1``; or ``single``, a private ``redis-server``); the durable
store a throw-away PostgreSQL database. The load
(:mod:`benchmarks.loadgen`): ``games`` games of the ``mix`` of titles (42/42/16 Chicago
Express, Russian Railroads, 1894 by default: each title then makes about a third of the
moves), all made and then started at once; every seat a hosted bot
(:data:`benchmarks.loadgen.TITLE_POLICIES`: ``random`` in Chicago Express and Russian
Railroads, ``greedy`` in 1894) except, in every second game, one scripted person playing
over HTTP on its event stream (:mod:`tests.integration.http_people`).

* :func:`bench_load_under_faults`: ``replicas`` (2) of everything and ``games`` (1,000)
  games. After ``warmup_s``, a timed window of ``measure_s``: moves per second, the
  people's ``POST .../moves`` p99, the CPU of each process kind. Then the fault schedule:
  ``kill -9`` of one process of each kind in turn (each title's rules service, lobby,
  gateway, dispatcher, bot worker, archiver, accounts, tournament service, clock keeper;
  replicas in turn; on a Redis Cluster also a master, whose replica takes over), every
  ``kill_every_s``, or sooner if half of the games would otherwise end before the last
  kill (an estimate from the moves/s and each title's mean game length). Each process is
  started again at once with the same command and settings (Kubernetes restarting the
  pod) and waited for until it serves. Then every game must finish, every kill must have
  found games running and its process serving again, and
  :func:`tests.integration.invariants.check_games` must find nothing: contiguous
  streams, every move answered by exactly one idempotency key at the version its key
  names, every acknowledged move in the stream as sent, the lobby's result equal to a
  replay, the archive equal to the stream; and the archive must hold every game once.
* :func:`bench_load_replicas`: the same workload (``compare_games`` games) on 1 replica
  and on 2 replicas of everything, side by side in one run (``compare_rounds`` rounds of
  each, alternating, each on a fresh stack), timed like the above: moves per second,
  cores busy per process kind, and the machine's busy cores (every process on it).

Run (``make bench`` runs both scaled down: :data:`benchmarks.loadgen.SMALL`, 100 games,
about 20 minutes)::

    .venv/bin/python -m benchmarks.run bench_load_faults         # both, scaled down
    # at the issue's size (1,000 games; the fault run ~45 min, the comparison ~20 min):
    ROUNDHOUSE_BENCH_LOAD_SIZE=full .venv/bin/python -m benchmarks.run bench_load_under_faults
    ROUNDHOUSE_BENCH_LOAD_SIZE=full .venv/bin/python -m benchmarks.run bench_load_replicas

A run of fewer than ~50 games ends before the schedule's last kills, which then count as
failures (a kill that finds no game running tests nothing).

Every size is a setting of :class:`benchmarks.loadgen.LoadSettings`. How long the
defaults take is in ``docs/benchmarks.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from unittest import mock

import grpc
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from sqlalchemy.engine import make_url

from benchmarks.bench_archive import POSTGRES, throwaway_database
from benchmarks.common import Measurement
from benchmarks.loadgen import (
    LOAD_GENERATOR,
    NOT_STACK,
    SAMPLE_S,
    CpuMeter,
    HotStore,
    LoadSettings,
    Mark,
    Monitor,
    Window,
    clients,
    hot_store,
    mark,
    plan_games,
    window,
)
from roundhouse.v1 import lobby_pb2_grpc
from services.archive.store import ArchiveStore
from services.cli.launcher import Stack
from services.platform.auth import bearer
from tests.integration import faults
from tests.integration.conftest import QUOTAS
from tests.integration.http_people import Game, Players
from tests.integration.invariants import (
    Violation,
    check_games,
    wait_finished,
)

KILL_ORDER = (
    "rules-railbarons",
    "lobby",
    "gateway",
    "dispatcher",
    "worker",
    "rules-transsib",
    "archiver",
    "accounts",
    "tournaments",
    "clocks",
    "rules-e1894",
)
"""One process of each kind, in this order (a title's rules service only if it plays);
on a Redis Cluster a master last (:data:`REDIS_MASTER`)."""
REDIS_MASTER = "redis-master"

START_ATTEMPTS = 3
"""Stacks started before a run gives up (:func:`_started_stack`)."""

SETUP_CONCURRENCY = 16
"""Tables made (and started) at once."""

_console = Console(width=160)
_results: dict[str, Measurement] = {}


@dataclasses.dataclass
class Kill:
    """One kill of the schedule: which process, games running at the time, seconds until
    its replacement served, and the error if it did not."""

    process: str
    running: int
    back_s: float
    error: str = ""


@dataclasses.dataclass
class RunResult:
    replicas: int
    games: list[Game]
    clean: Window
    setup_s: float
    faulted: Window | None = None
    whole: Window | None = None
    kills: list[Kill] = dataclasses.field(default_factory=list)
    violations: list[Violation] = dataclasses.field(default_factory=list)
    unfinished: list[str] = dataclasses.field(default_factory=list)
    archived: int = 0
    players: Players | None = None
    restarts: int = 0
    finish_s: float = 0.0


def _stack_env(games: int) -> dict[str, str]:
    """The stacks' settings: quotas lifted (one host account owns every bots-only table)
    and room for every person's event stream on one lobby. The stall sweep keeps its
    production delay (60 s): with a thousand games a turn waits ~10 s in the queue at
    saturation, and the fault suite's 10 s (:data:`faults.STACK_ENV`) would enqueue
    thousands of turns again that were only waiting."""
    return {
        **QUOTAS,
        "ROUNDHOUSE_LOBBY_MAX_EVENT_STREAMS": str(max(2000, 2 * games)),
    }


def run_load(
    settings: LoadSettings,
    replicas: int,
    games: int,
    warmup_s: float,
    measure_s: float,
    with_faults: bool,
    label: str,
) -> RunResult:
    """One run on a fresh stack with ``replicas`` of every kind (module docstring)."""
    plan = plan_games(games, settings.mix, settings.person_every, settings.seed)
    titles = sorted({g.title for g in plan})
    root = Path(tempfile.mkdtemp(prefix="rh-bench-load-"))
    with (
        _kept_on_failure(root) as outcome,
        mock.patch.dict(os.environ, _stack_env(games)),  # the stack passes them on
        throwaway_database() as database_url,
        hot_store(settings.redis, root / "redis") as hot,
        _started_stack(
            titles,
            START_ATTEMPTS,
            database_url=database_url,
            gateway=True,
            broker_url=settings.broker_url,
            replicas=replicas,
            worker_replicas=replicas,
            workers=_pool(settings, replicas),
            restart_workers=True,  # as a Kubernetes Deployment does
            run_dir=root / "run",
            **hot.stack_kwargs,
        ) as stack,
    ):
        database = make_url(database_url).database or ""
        run = _Run(stack, hot, database, settings, plan, label)
        result = asyncio.run(run.drive(replicas, warmup_s, measure_s, with_faults))
        result.restarts = len(stack.restarts)
        outcome.append(result)
        return result


@contextlib.contextmanager
def _started_stack(titles: list[str], attempts: int, **kwargs):
    """A started :class:`Stack`, stopped afterwards. A stack that fails to start (on this
    shared machine another process may take a port between :func:`free_port` and the
    server's bind) is stopped and a new one, with new ports, started: ``attempts`` in all."""
    for attempt in range(1, attempts + 1):
        stack = Stack(titles, **kwargs)
        try:
            stack.start()
        except (RuntimeError, TimeoutError) as exc:
            stack.stop()
            if attempt == attempts:
                raise
            _console.print(f"the stack did not start ({str(exc)[:120]}); starting another")
            continue
        try:
            yield stack
        finally:
            stack.stop()
        return


def _pool(settings: LoadSettings, replicas: int) -> int:
    """Pool processes of each worker replica (``worker_pool``)."""
    if settings.worker_pool == "total":
        return max(1, settings.worker_concurrency // replicas)
    return settings.worker_concurrency


@contextlib.contextmanager
def _kept_on_failure(root: Path):
    """Remove the run's folder (process logs) afterwards, unless the run raised or found
    a violation (then its path is printed)."""
    outcome: list[RunResult] = []
    try:
        yield outcome
    except BaseException:
        _console.print(f"the run's process logs are in {root}")
        raise
    if outcome and (outcome[0].violations or outcome[0].unfinished):
        _console.print(f"the run's process logs are in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


class _Run:
    def __init__(self, stack: Stack, hot: HotStore, database: str, settings, plan, label: str):
        self.stack, self.hot, self.database = stack, hot, database
        self.settings, self.games, self.label = settings, plan, label
        self.status = ""

    async def drive(
        self, replicas: int, warmup_s: float, measure_s: float, with_faults: bool
    ) -> RunResult:
        async with clients(
            self.stack, self.hot, self.settings.policies, POSTGRES, self.settings.think_s
        ) as c:
            return await self._drive(
                c.players, c.gamelog, c.engine, c.pg, replicas, warmup_s, measure_s, with_faults
            )

    async def _drive(
        self, players, gamelog, engine, pg, replicas, warmup_s, measure_s, with_faults
    ) -> RunResult:
        games = self.games
        monitor = Monitor(games, gamelog)
        meter = CpuMeter(self.stack, self.hot.procs, self.database)
        started = time.monotonic()
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[info]}"),
            console=_console,
        ) as progress:
            limit = asyncio.Semaphore(SETUP_CONCURRENCY)

            async def each(step, what: str) -> None:
                bar = progress.add_task(f"{self.label}: {what}", total=len(games), info="")

                async def one(g: Game) -> None:
                    async with limit:
                        await step(g)
                    progress.advance(bar)

                await asyncio.gather(*(one(g) for g in games))

            await players.host(self.stack.prefix)
            await each(lambda g: players.make(g, self.stack.prefix), "tables made")
            await each(players.start, "tables started")
            setup_s = time.monotonic() - started
            bar = progress.add_task(f"{self.label}: games finished", total=len(games), info="")
            sampler = asyncio.create_task(self._sample(monitor, meter, pg, progress, bar))
            try:
                await asyncio.sleep(warmup_s)
                a = await mark(monitor, meter, players)
                self.status = "timed window"
                await asyncio.sleep(measure_s)
                b = await mark(monitor, meter, players)
                result = RunResult(replicas, games, window(a, b, players), setup_s, players=players)
                if with_faults:
                    await self._faults(result, monitor, meter, players, gamelog, engine, a, b)
            finally:
                sampler.cancel()
        return result

    async def _sample(self, monitor: Monitor, meter: CpuMeter, pg, progress, bar) -> None:
        n = 0
        while True:
            if n % 5 == 0:
                with contextlib.suppress(Exception):
                    await meter.refresh_postgres(pg)
            _, moves, done = await monitor.sample()
            with contextlib.suppress(Exception):  # psutil on a process going away
                meter.sample()
            progress.update(
                bar,
                completed=done,
                info=f"{moves:,} moves, {monitor.rate():,.0f} moves/s  {self.status}",
            )
            n += 1
            await asyncio.sleep(SAMPLE_S)

    async def _faults(
        self, result: RunResult, monitor, meter, players, gamelog, engine, a: Mark, b: Mark
    ) -> None:
        stack, settings, games = self.stack, self.settings, self.games
        titles = {g.title for g in games}
        order = [k for k in KILL_ORDER if not k.startswith("rules-") or k[6:] in titles]
        rate = max(result.clean.moves_per_s, 1.0)
        if self.hot.kill_master is not None:
            order.append(REDIS_MASTER)
        for i, kind in enumerate(order):
            self.status = f"next kill: {kind} ({i + 1}/{len(order)})"
            # before half of the games still running have ended, at most kill_every_s apart
            left_s = monitor.half_left_s(rate)
            await asyncio.sleep(min(settings.kill_every_s, left_s / (len(order) - i)))
            replica = i % stack.replicas
            name = kind if replica == 0 or kind == REDIS_MASTER else f"{kind}-{replica}"
            running = sum(not g.done for g in games)
            self.status = f"killed {name} ({i + 1}/{len(order)})"
            t0 = time.monotonic()
            try:
                if kind == REDIS_MASTER:
                    name = await asyncio.to_thread(self.hot.kill_master)
                else:
                    await asyncio.to_thread(faults.kill9, stack, kind, replica)
                result.kills.append(Kill(name, running, time.monotonic() - t0))
            except Exception as exc:  # noqa: BLE001 - reported as a failed kill
                result.kills.append(Kill(name, running, time.monotonic() - t0, repr(exc)[:200]))
        c = await mark(monitor, meter, players)
        result.faulted = window(b, c, players)
        self.status = "every process killed once; waiting for the games to end"
        deadline = time.monotonic() + settings.deadline_s
        while not all(g.done for g in games) and time.monotonic() < deadline:
            await asyncio.sleep(SAMPLE_S)
        result.finish_s = time.monotonic() - c.at
        result.whole = window(a, await mark(monitor, meter, players), players)
        self.status = "checking every game"
        md = bearer(players.some_headers()["Authorization"].removeprefix("Bearer "))
        async with grpc.aio.insecure_channel(stack.lobby_address) as channel:
            lobby = lobby_pb2_grpc.LobbyStub(channel)
            tables = [g.table_id for g in games]
            result.unfinished = await wait_finished(tables, lobby, md, timeout_s=120)
            archive = ArchiveStore(engine)
            result.violations = await check_games(
                tables, lobby, md, gamelog, archive, players.acknowledged
            )
            result.archived = await archive.count()


# ---------------------------------------------------------------------- reporting


def _p99(values: list[float]) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100)[98] if len(values) >= 100 else max(values)


def _ms_per_move(w: Window) -> float:
    """The stack's CPU milliseconds per move over the window."""
    return 1000 * w.stack_cores / w.moves_per_s if w.moves else float("nan")


def _split_text(w: Window) -> str:
    stack = {k: v for k, v in w.cpu.items() if k not in NOT_STACK}
    parts = ", ".join(
        f"{k} {v / w.seconds:.2f}" for k, v in sorted(stack.items(), key=lambda kv: -kv[1])
    )
    return (
        f"cores busy: {parts}; stack {w.stack_cores:.2f} = {_ms_per_move(w):.1f} ms CPU per "
        f"move (load generator {w.cores(LOAD_GENERATOR):.2f}); machine "
        f"{w.machine_s / w.seconds:.2f} of {os.cpu_count()} cores busy, load {w.loadavg[0]:.1f}"
    )


def _draw_split(columns: list[tuple[str, Window]], title: str) -> None:
    """Cores busy per process kind, a bar for each column (a run or a side)."""
    kinds = sorted(
        {k for _, w in columns for k in w.cpu},
        key=lambda k: -max(w.cores(k) for _, w in columns),
    )
    table = Table(title=title)
    table.add_column("process kind")
    for name, _ in columns:
        table.add_column(f"{name}: cores")
        table.add_column("ms/move", justify="right")
    most = max(w.machine_s / w.seconds for _, w in columns) or 1.0
    for k in [*kinds, "stack total", "machine (every process)"]:
        row = [k]
        for _, w in columns:
            if k == "stack total":
                cores, per = w.stack_cores, _ms_per_move(w)
            elif k == "machine (every process)":
                cores, per = w.machine_s / w.seconds, float("nan")
            else:
                cores, per = w.cores(k), w.ms_per_move(k)
            bar = "█" * round(20 * min(cores, most) / most)
            row += [f"{cores:5.2f} {bar}", "" if per != per else f"{per:.2f}"]
        table.add_row(*row)
    row = ["moves/s"]
    for _, w in columns:
        row += [f"{w.moves_per_s:,.1f}", ""]
    table.add_row(*row)
    _console.print(table)


def _fault_run() -> None:
    if "faults" in _results:
        return
    s = LoadSettings()
    started = time.monotonic()
    r = run_load(s, s.replicas, s.games, s.warmup_s, s.measure_s, True, f"{s.replicas} replicas")
    wall = time.monotonic() - started
    players = r.players
    assert players is not None
    clean = r.clean
    _draw_split(
        [(f"{r.replicas} replicas", clean)], "CPU split, the timed window before the faults"
    )
    if r.faulted is not None:
        _draw_split([("during the kills", r.faulted)], "CPU split while the processes were killed")
    mix = Counter(g.title for g in r.games)
    lengths = ", ".join(
        f"{t} {statistics.mean(g.version for g in r.games if g.title == t):.0f}"
        for t in sorted(mix)
    )
    people = sum(g.person is not None for g in r.games)
    where = (
        f"{len(r.games)} games ({', '.join(f'{t} {n}' for t, n in sorted(mix.items()))}), "
        f"{people} with a person; {s.replicas} replicas; bots {s.policies}; Redis {s.redis}"
    )
    _results["rate"] = Measurement(
        "moves/s, concurrent games of mixed titles, every service in replicas (no bar)",
        clean.moves_per_s,
        "moves/s",
        0,
        detail=f"{where}; over {clean.seconds:.0f} s after {s.warmup_s:.0f} s; set-up "
        f"{r.setup_s:.0f} s; {_split_text(clean)}",
    )
    faulted_ms = r.faulted.move_ms if r.faulted else []
    _results["p99"] = Measurement(
        "people's HTTP move (POST .../moves) p99 in the timed window (bound: 1 s)",
        _p99(clean.move_ms),
        "ms",
        1000,
        higher_is_better=False,
        detail=f"p50 {statistics.median(clean.move_ms) if clean.move_ms else float('nan'):.0f} ms "
        f"over {len(clean.move_ms)} moves; during the kills p99 {_p99(faulted_ms):.0f} ms over "
        f"{len(faulted_ms)} (retries included)",
    )
    bad_games = {v.table_id for v in r.violations} | set(r.unfinished)
    codes = Counter(v.code for v in r.violations)
    kills = "; ".join(
        f"{k.process} ({k.running} running, back in {k.back_s:.1f} s{k.error and ', ' + k.error})"
        for k in r.kills
    )
    failed_kills = [k for k in r.kills if k.error or not k.running]  # idle: tested nothing
    whole_rate = r.whole.moves_per_s if r.whole and r.whole.seconds else float("nan")
    extra = []
    if r.archived != len(r.games):
        extra.append(f"archive holds {r.archived} games of {len(r.games)}")
    _results["faults"] = Measurement(
        "failures under kill -9 of every process kind: games that did not finish or failed a "
        "check, kills that failed or found no game running",
        len(bad_games) + len(failed_kills) + len(extra),
        "failures",
        0,
        higher_is_better=False,
        detail=f"{where}; mean moves per game: {lengths}; kills: {kills}; all games ended "
        f"{r.finish_s:.0f} s after the last kill; whole run {wall / 60:.1f} min "
        f"({whole_rate:.0f} moves/s from the timed window to the last game's end); "
        f"{r.restarts} worker restarts by the stack; "
        f"violations by code {dict(codes)}; {extra}; people: {len(players.posts)} moves, "
        f"{players.front.retries} requests retried, {players.stream_breaks} event streams "
        f"resumed, {players.polls_found_turn} turns found by polling, {players.stale} stale, "
        f"errors {players.errors[:3]}; first violations {[str(v) for v in r.violations[:5]]}",
    )


def _comparison() -> None:
    if "replicas" in _results:
        return
    s = LoadSettings()
    sides: dict[int, list[Window]] = {1: [], 2: []}
    for round_ in range(s.compare_rounds):
        for replicas in (1, 2):
            label = f"round {round_ + 1}, {replicas} replica{'s' if replicas > 1 else ''}"
            r = run_load(
                s, replicas, s.compare_games, s.compare_warmup_s, s.compare_measure_s, False, label
            )
            sides[replicas].append(r.clean)
    merged = {n: _merge(ws) for n, ws in sides.items()}
    _draw_split(
        [("1 replica", merged[1]), ("2 replicas", merged[2])],
        f"The same workload ({s.compare_games} games) on 1 and 2 replicas of every service",
    )
    ratio = 100 * merged[2].moves_per_s / merged[1].moves_per_s
    cost = 100 * _ms_per_move(merged[2]) / _ms_per_move(merged[1])
    rounds = "; ".join(
        f"{n} replica(s): " + ", ".join(f"{w.moves_per_s:.1f}" for w in ws)
        for n, ws in sides.items()
    )
    _results["replicas"] = Measurement(
        "moves/s on 2 replicas of every service, as a share of 1 replica's, side by side",
        ratio,
        "%",
        100,
        detail=f"{merged[1].moves_per_s:.1f} vs {merged[2].moves_per_s:.1f} moves/s; stack CPU "
        f"per move on 2 replicas {cost:.0f}% of 1 replica's "
        f"(rounds: {rounds}); 1 replica: {_split_text(merged[1])}; 2 replicas: "
        f"{_split_text(merged[2])}",
    )


def _merge(windows: list[Window]) -> Window:
    cpu: dict[str, float] = {}
    for w in windows:
        for k, v in w.cpu.items():
            cpu[k] = cpu.get(k, 0.0) + v
    return Window(
        seconds=sum(w.seconds for w in windows),
        moves=sum(w.moves for w in windows),
        cpu=cpu,
        machine_s=sum(w.machine_s for w in windows),
        move_ms=[x for w in windows for x in w.move_ms],
        loadavg=windows[-1].loadavg,
    )


def bench_load_under_faults_rate() -> Measurement:
    _fault_run()
    return _results["rate"]


def bench_load_under_faults_move_p99() -> Measurement:
    _fault_run()
    return _results["p99"]


def bench_load_under_faults() -> Measurement:
    _fault_run()
    return _results["faults"]


def bench_load_replicas() -> Measurement:
    _comparison()
    return _results["replicas"]


BENCHMARKS = [
    bench_load_under_faults_rate,
    bench_load_under_faults_move_p99,
    bench_load_under_faults,
    bench_load_replicas,
]
