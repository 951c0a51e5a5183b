"""Scale-out on one box: K replica sets, each held to a CPU quota as if it were a machine of
its own (issue 28, item 1).

A **replica set** is one process of every service kind: the three rules services, the
lobby, the gateway, the dispatcher, a Celery worker (with ``worker_concurrency`` pool
processes), and also accounts, the archiver, the tournament service and the clock keeper (a
machine runs one of everything; the move path is the first seven). Set ``k`` is the ``k``-th
replica of every kind of one :class:`~services.cli.launcher.Stack` with ``replicas=K``; all
of its processes are moved into cgroup ``set-k`` (:mod:`benchmarks.cgroups`), held to
``set_cores`` (0.3 of a core by default). The hot store is a local Redis Cluster of 3
masters and 3 replicas (moves acknowledged after ``WAIT 1``), its nodes in three groups
``redis-0..2`` of ``redis_cores`` each (0.15), a master and a replica in each: three store
machines, the same for every K. The Celery broker (the machine's RabbitMQ), the run's
PostgreSQL database and the load generator run outside every quota; their CPU is reported.
The groups weigh more than anything else on the machine
(:data:`benchmarks.cgroups.PRIORITY_SHARES`), so another busy process takes nothing of
what the quotas allow. What runs outside the quotas is in one more group, ``outside``,
without a quota but with that priority: the load generator (this process), the RabbitMQ
broker and the run's PostgreSQL backends (looked up again every 10 s: pools open new
ones). They are moved there once the stack serves (a start-up at that priority starves the
database the services connect to) and moved back when the K is done.

With 3 sets that is 0.9 + 0.45 = 1.35 of the machine's 2 cores under quota, leaving 0.65
for the load generator, RabbitMQ and PostgreSQL (measured: see ``docs/benchmarks.md``).
0.15 per Redis node is about three times what the nodes use at K = 3 (measured), so the store
is never the limit, as a cluster sized for the load would not be; a node that hit its quota
would show in its throttled share.

The load (:mod:`benchmarks.loadgen`): ``games_per_set`` x K games of the three titles
(42/42/16), each with one scripted person playing over HTTP, spread over the K gateways
(:class:`tests.integration.http_people.Front`), and hosted bots on the other seats. Per K:

1. **Saturation.** The people move as soon as it is their turn; after ``warmup_s`` a window
   of ``measure_s``: moves per second (every move, people's and bots', from the games'
   streams), CPU per move per process kind, and each group's throttled share (the share of
   100 ms periods in which it used its whole quota: near 1 means the sets are the limit).
2. **At 80 %.** With no pause, people and bots keep the sets saturated whatever their
   number (a closed loop). So the people then think before every move: ``think_s`` is set so
   that each person's cycle (thinking, then waiting for the bots of its game) is the
   saturated cycle / ``paced_share``: first from the saturated cycle alone (too slow a
   pace: the waiting is left out), then, after ``paced_warmup_s``, corrected once by the
   waiting time seen (:func:`think_for`); after another ``paced_warmup_s`` a window of
   ``paced_measure_s``: the people's ``POST .../moves`` p50/p99 (the move's latency, not
   the thinking), and the moves/s reached as a share of saturation (reported, so a window
   that missed 80 % shows it).

Every core is kept busy throughout by ``background_loops`` busy loops at nice 19 outside
every group (:func:`background_loops`): CPU time per move depends on how busy the machine
is (22 ms at K = 1 on an idle machine against 33 ms at K = 2, 2026-12-07), so without them
K = 1 would run on faster CPUs than K = 3 and the efficiency would measure the machine, not
the design. Each K reports the hypervisor's steal share over its run.

The **scaling efficiency** is ``moves/s(K) / (K * moves/s(1))``. The run ends by printing
``scale-out efficiency: K=2 0.xx, K=3 0.xx``. Every group is removed at the end, also on
an error, Ctrl-C or SIGTERM. Without root or a writable CPU controller the benchmark says so
and reports itself skipped: it never gives a figure it did not measure.

Run::

    .venv/bin/python -m benchmarks.run bench_scale_out          # K = 1, 2, 3 (~15 min)
    ROUNDHOUSE_BENCH_SECONDS=20 .venv/bin/python -m benchmarks.run bench_scale_out  # short

Every size is a setting of :class:`ScaleSettings` (``ROUNDHOUSE_BENCH_SCALE_<NAME>``).
``ROUNDHOUSE_BENCH_SECONDS`` (a short run) sets every window from one length.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from rich.console import Console
from rich.table import Table
from sqlalchemy.engine import make_url

from benchmarks.bench_archive import POSTGRES, throwaway_database
from benchmarks.bench_load_faults import _draw_split, _stack_env, _started_stack
from benchmarks.cgroups import CpuQuotas, Group, Throttling, removed_on_signal, unavailable
from benchmarks.common import Measurement
from benchmarks.loadgen import (
    LOAD_GENERATOR,
    RABBITMQ,
    TITLE_POLICIES,
    CpuMeter,
    Monitor,
    Window,
    clients,
    hot_store,
    mark,
    plan_games,
    window,
)
from benchmarks.loadgen import (
    POSTGRES as POSTGRES_KIND,
)
from services.cli.launcher import Stack, kind_of

START_ATTEMPTS = 3
SETUP_CONCURRENCY = 16
REDIS_GROUPS = 3

_console = Console(width=160)


class ScaleSettings(BaseSettings):
    """Sizes, quotas and windows of ``bench_scale_out`` (``ROUNDHOUSE_BENCH_SCALE_<NAME>``)."""

    model_config = SettingsConfigDict(env_prefix="ROUNDHOUSE_BENCH_SCALE_", extra="ignore")

    sets: list[int] = Field(default_factory=lambda: [1, 2, 3], description="the Ks (JSON list)")
    set_cores: float = Field(0.3, gt=0, description="CPU quota of each replica set (cores)")
    redis_cores: float = Field(0.15, gt=0, description="CPU quota of each Redis group (cores)")
    games_per_set: int = Field(40, ge=1, description="concurrent games per replica set")
    worker_concurrency: int = Field(2, ge=1, description="pool processes of each set's worker")
    mix: dict[str, int] = Field(
        default_factory=lambda: {"railbarons": 42, "transsib": 42, "e1894": 16}
    )
    policies: dict[str, str] = Field(default_factory=lambda: dict(TITLE_POLICIES))
    broker_url: str = Field("amqp://guest:guest@127.0.0.1:5672//")
    warmup_s: float = Field(30.0, ge=0)
    measure_s: float = Field(60.0, gt=0)
    paced_share: float = Field(0.8, gt=0, le=1)
    paced_warmup_s: float = Field(30.0, ge=0)
    paced_measure_s: float = Field(45.0, gt=0)
    seed: int = Field(7, ge=0)
    background_loops: int = Field(
        default_factory=lambda: os.cpu_count() or 1,
        ge=0,
        description="busy loops at nice 19 outside every group, so every core is busy at every K",
    )

    @classmethod
    def from_env(cls) -> ScaleSettings:
        """The settings, with every window set from ``ROUNDHOUSE_BENCH_SECONDS`` when it is
        set (a short run: warm-ups a third of it)."""
        s = cls()
        short = os.environ.get("ROUNDHOUSE_BENCH_SECONDS")
        if short:
            n = float(short)
            s.measure_s = s.paced_measure_s = n
            s.warmup_s = s.paced_warmup_s = n / 3
        return s


@dataclasses.dataclass
class SetsRun:
    """What one K gave: the saturated window, the paced window, each group's throttling
    over the saturated window, the people's move rates (moves/s) of both, and the think
    time of the paced window (s), the people's cycle it aimed at (s, also the first think
    time) and the people's moves/s with that first think time (what corrected it)."""

    sets: int
    saturated: Window
    paced: Window
    throttling: dict[str, Throttling]
    person_rate: float
    paced_person_rate: float
    think_s: float = 0.0
    cycle_target_s: float = 0.0
    cycle_rate: float = 0.0
    steal_share: float = 0.0


def _set_index(name: str) -> int:
    """The replica set of a stack process: ``lobby`` -> 0, ``lobby-2`` -> 2."""
    return 0 if kind_of(name) == name else int(name.rsplit("-", 1)[1])


def place(stack: Stack, redis_pids: list[int], sets: list[Group], redis: list[Group]) -> int:
    """Move every process of the stack into its set's group (a worker with its pool) and
    the Redis nodes into the Redis groups (node ``i`` into group ``i mod 3``: masters are
    the first three nodes, so each group has a master and a replica). Returns the number
    of processes moved.

    Raises:
        RuntimeError: a process of the stack belongs to no set (a replica index >= K).
    """
    moved = 0
    for proc in stack.procs:
        if proc.name == "redis":
            continue
        index = _set_index(proc.name)
        if index >= len(sets):
            raise RuntimeError(f"{proc.name} is past the {len(sets)} replica sets")
        moved += sets[index].add(proc.popen.pid)
    for i, pid in enumerate(redis_pids):
        moved += redis[i % len(redis)].add(pid, with_children=False)
    return moved


def run_sets(s: ScaleSettings, k: int, quotas: CpuQuotas) -> SetsRun:
    """One K on a fresh stack (module docstring)."""
    plan = plan_games(s.games_per_set * k, s.mix, 1, s.seed)
    titles = sorted({g.title for g in plan})
    sets = [quotas.group(f"k{k}-set-{i}", s.set_cores) for i in range(k)]
    redis = [quotas.group(f"k{k}-redis-{i}", s.redis_cores) for i in range(REDIS_GROUPS)]
    root = Path(tempfile.mkdtemp(prefix="rh-bench-scale-"))
    with (
        mock.patch.dict(os.environ, _stack_env(len(plan))),
        throwaway_database() as database_url,
        hot_store("cluster", root / "redis") as hot,
        _started_stack(
            titles,
            START_ATTEMPTS,
            database_url=database_url,
            gateway=True,
            broker_url=s.broker_url,
            replicas=k,
            worker_replicas=k,
            workers=s.worker_concurrency,
            run_dir=root / "run",
            **hot.stack_kwargs,
        ) as stack,
    ):
        place(stack, [p.pid for p in hot.procs()], sets, redis)
        outside = quotas.group(f"k{k}-outside", None)
        database = make_url(database_url).database or ""
        try:
            return asyncio.run(_drive(stack, hot, database, s, plan, k, [*sets, *redis], outside))
        finally:
            for pid in outside.pids():  # the broker, the database and this process
                quotas.release(pid)


async def _drive(
    stack, hot, database, s: ScaleSettings, plan, k: int, groups, outside: Group
) -> SetsRun:
    async with clients(stack, hot, s.policies, POSTGRES) as c:
        return await _windows(
            stack, c.players, c.gamelog, hot, database, c.pg, s, plan, k, groups, outside
        )


async def _windows(
    stack, players, gamelog, hot, database, pg, s, plan, k, groups, outside: Group
) -> SetsRun:
    monitor = Monitor(plan, gamelog)
    meter = CpuMeter(stack, hot.procs, database)
    outside.add(os.getpid(), with_children=False)
    for proc in meter.rabbitmq:
        outside.add(proc.pid)
    limit = asyncio.Semaphore(SETUP_CONCURRENCY)
    label = f"K={k}"

    async def each(step) -> None:
        async def one(g) -> None:
            async with limit:
                await step(g)

        await asyncio.gather(*(one(g) for g in plan))

    await players.host(stack.prefix)
    _console.print(f"{label}: making {len(plan)} tables over {k} gateway(s)")
    await each(lambda g: players.make(g, stack.prefix))
    await each(players.start)

    async def sample_forever() -> None:
        n = 0
        while True:
            if n % 5 == 0:
                with contextlib.suppress(Exception):
                    await meter.refresh_postgres(pg)
                    for pid in meter.postgres:
                        outside.add(pid, with_children=False)
            await monitor.sample()
            with contextlib.suppress(Exception):
                meter.sample()
            n += 1
            await asyncio.sleep(2.0)

    async def timed(what: str, seconds: float):
        _console.print(f"{label}: {what} for {seconds:.0f} s")
        await asyncio.sleep(seconds)

    sampler = asyncio.create_task(sample_forever())
    try:
        await timed("saturated warm-up", s.warmup_s)
        a = await mark(monitor, meter, players)
        t_a = {g.name: g.throttling() for g in groups}
        await timed("saturated window", s.measure_s)
        b = await mark(monitor, meter, players)
        t_b = {g.name: g.throttling() for g in groups}
        saturated = window(a, b, players)
        person_rate = (b.posts - a.posts) / saturated.seconds
        _console.print(
            f"{label}: saturated {saturated.moves_per_s:.1f} moves/s "
            f"(people {person_rate:.1f}/s); pacing the people at {s.paced_share:.0%}"
        )
        people = sum(g.person is not None for g in plan)
        cycle_target = people / (person_rate * s.paced_share) if person_rate else 0.0
        players.think_s = cycle_target
        await timed(f"paced warm-up, {players.think_s:.1f} s to think", s.paced_warmup_s)
        e = await mark(monitor, meter, players)
        await timed("paced warm-up, measuring the cycle", s.paced_warmup_s)
        f = await mark(monitor, meter, players)
        seen = (f.posts - e.posts) / (f.at - e.at)
        players.think_s = think_for(cycle_target, players.think_s, people, seen)
        await timed(f"paced warm-up, {players.think_s:.1f} s to think", s.paced_warmup_s)
        c = await mark(monitor, meter, players)
        await timed("paced window", s.paced_measure_s)
        d = await mark(monitor, meter, players)
        paced = window(c, d, players)
        paced_person_rate = (d.posts - c.posts) / paced.seconds
    finally:
        sampler.cancel()
    return SetsRun(
        k,
        saturated,
        paced,
        {name: t_b[name] - t_a[name] for name in t_a},
        person_rate,
        paced_person_rate,
        players.think_s,
        cycle_target,
        seen,
    )


def think_for(cycle_target: float, think_s: float, people: int, rate_seen: float) -> float:
    """The think time (s) that makes a person's cycle ``cycle_target`` seconds, from what
    ``think_s`` gave: ``people`` people moving ``rate_seen`` times a second in all, so a
    cycle of ``people / rate_seen``, of which ``think_s`` thinking and the rest waiting
    for the game's bots. Assumes the waiting stays as it was (at a lighter load it is a
    little shorter, so the load lands a little under the target); never negative."""
    if rate_seen <= 0:
        return think_s
    waiting = max(0.0, people / rate_seen - think_s)
    return max(0.0, cycle_target - waiting)


# ---------------------------------------------------------------------- reporting


def _pct(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    if len(values) < 100:
        return sorted(values)[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]
    return statistics.quantiles(values, n=100)[q - 1]


def efficiency(runs: dict[int, SetsRun]) -> dict[int, float]:
    """``moves/s(K) / (K * moves/s(1))`` for every K measured with K = 1."""
    one = runs.get(1)
    if one is None or not one.saturated.moves_per_s:
        return {}
    base = one.saturated.moves_per_s
    return {k: r.saturated.moves_per_s / (k * base) for k, r in runs.items()}


def efficiency_line(runs: dict[int, SetsRun]) -> str:
    """``scale-out efficiency: K=2 0.xx, K=3 0.xx`` (the Ks above 1 that were run)."""
    eff = efficiency(runs)
    return "scale-out efficiency: " + ", ".join(f"K={k} {eff[k]:.2f}" for k in sorted(eff) if k > 1)


def report(runs: dict[int, SetsRun], s: ScaleSettings) -> None:
    eff = efficiency(runs)
    table = Table(
        title=f"Scale-out: K replica sets of {s.set_cores:g} core each, Redis 3 x "
        f"{s.redis_cores:g} core, {s.games_per_set} games per set"
    )
    for col in (
        "K",
        "moves/s",
        "efficiency",
        "sets throttled",
        "redis throttled",
        "at 80%: moves/s",
        "move p50",
        "move p99",
        "load gen cores",
        "rabbitmq+pg cores",
        "machine cores",
        "steal",
    ):
        table.add_column(col, justify="right")
    for k, r in sorted(runs.items()):
        sat, paced = r.saturated, r.paced
        sets = [t for n, t in r.throttling.items() if "-set-" in n]
        redis = [t for n, t in r.throttling.items() if "-redis-" in n]
        table.add_row(
            str(k),
            f"{sat.moves_per_s:.1f}",
            f"{eff.get(k, float('nan')):.2f}",
            f"{statistics.mean(t.share for t in sets):.0%}",
            f"{max(t.share for t in redis):.0%}",
            f"{paced.moves_per_s:.1f} ({paced.moves_per_s / sat.moves_per_s:.0%})",
            f"{_pct(paced.move_ms, 50):.0f} ms",
            f"{_pct(paced.move_ms, 99):.0f} ms (think {r.think_s:.0f} s)",
            f"{sat.cores(LOAD_GENERATOR):.2f}",
            f"{sat.cores(RABBITMQ) + sat.cores(POSTGRES_KIND):.2f}",
            f"{sat.machine_s / sat.seconds:.2f}",
            f"{r.steal_share:.0%}",
        )
    _console.print(table)
    _draw_split(
        [(f"K={k}", r.saturated) for k, r in sorted(runs.items())],
        "CPU per process kind at saturation (cores; ms of CPU per move)",
    )
    _console.print(efficiency_line(runs))


def cpu_jiffies() -> tuple[int, int]:
    """The machine's (steal, total) CPU time from ``/proc/stat``, in clock ticks: steal is
    time the hypervisor ran something else while a virtual CPU had work."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


@contextlib.contextmanager
def background_loops(n: int) -> Iterator[None]:
    """``n`` busy loops at nice 19, in the machine's root group (started before this
    process joins a group of its own), stopped on the way out.

    Why: a quota counts CPU time, and a CPU's speed depends on what else the machine runs
    (a virtual CPU beside an idle one runs faster: measured 22 ms of CPU per move at K = 1
    on an idle machine against 33 ms at K = 2 and 45 ms on a busy one). With every core kept
    busy at the lowest priority, every K runs on equally busy cores, so the Ks compare
    sets of the same speed. The loops weigh 15 against the groups' 262,144
    (:data:`benchmarks.cgroups.PRIORITY_SHARES`): they take nothing the quotas allow."""
    loops = [
        subprocess.Popen(
            [sys.executable, "-c", "while True: pass"],
            preexec_fn=lambda: os.nice(19),  # noqa: PLW1509 - no threads yet in the child
        )
        for _ in range(n)
    ]
    try:
        yield
    finally:
        for p in loops:
            p.kill()
        for p in loops:
            p.wait()


def run_scale_out(s: ScaleSettings | None = None) -> dict[int, SetsRun]:
    """Every K of ``s.sets`` in turn, each on a fresh stack inside fresh groups; the groups
    are removed at the end whatever happens.

    Raises:
        RuntimeError: no CPU quota can be set here (:func:`benchmarks.cgroups.unavailable`).
    """
    s = s or ScaleSettings.from_env()
    runs: dict[int, SetsRun] = {}
    with (
        removed_on_signal(),
        background_loops(s.background_loops),
        CpuQuotas(f"roundhouse-bench-{os.getpid()}") as quotas,
    ):
        quotas.group("load-generator", None).add(os.getpid(), with_children=False)
        for k in s.sets:
            started = time.monotonic()
            steal0, total0 = cpu_jiffies()
            runs[k] = run_sets(s, k, quotas)
            steal1, total1 = cpu_jiffies()
            runs[k].steal_share = (steal1 - steal0) / max(1, total1 - total0)
            _console.print(f"K={k} done in {time.monotonic() - started:.0f} s")
    report(runs, s)
    return runs


_results: dict[str, Measurement] = {}


def _measure() -> None:
    if _results:
        return
    why = unavailable()
    if why:
        _console.print(f"bench_scale_out skipped: {why}")
        for k, bar in ((2, 0.85), (3, 0.80)):
            _results[f"k{k}"] = Measurement(
                f"scale-out efficiency at K={k}", float("nan"), "", bar, skipped=why
            )
        return
    s = ScaleSettings.from_env()
    runs = run_scale_out(s)
    eff = efficiency(runs)
    for k, bar in ((2, 0.85), (3, 0.80)):
        r = runs.get(k)
        if r is None or 1 not in runs:
            _results[f"k{k}"] = Measurement(
                f"scale-out efficiency at K={k}",
                float("nan"),
                "",
                bar,
                skipped=f"K=1 and K={k} are not both in this run's sets {s.sets}",
            )
            continue
        _results[f"k{k}"] = Measurement(
            f"scale-out efficiency at K={k}: moves/s(K) / (K x moves/s(1)), sets of "
            f"{s.set_cores:g} core",
            eff[k],
            "",
            bar,
            detail=f"{r.saturated.moves_per_s:.1f} moves/s against "
            f"{runs[1].saturated.moves_per_s:.1f} at K=1; paced at {s.paced_share:.0%}: "
            f"p50 {_pct(r.paced.move_ms, 50):.0f} ms, p99 {_pct(r.paced.move_ms, 99):.0f} ms",
        )


def bench_scale_out() -> Measurement:
    _measure()
    return _results["k2"]


def bench_scale_out_k3() -> Measurement:
    _measure()
    return _results["k3"]


BENCHMARKS = [bench_scale_out, bench_scale_out_k3]
