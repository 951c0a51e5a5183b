"""The fault suite in full (issue 13, item 9): for every title, a game of
bots per fault (``ROUNDHOUSE_BENCH_FAULT_GAMES`` games each, default 1):
``kill -9`` of each kind of process mid-game (then a restart), a Redis pause
(SIGSTOP 3 s), a Redis crash restarted from an older snapshot (a lost tail)
and Redis out of memory for 4 s. Every game must finish by itself and replay
to the result the lobby recorded (``tests/integration/faults.py``).
``ROUNDHOUSE_BENCH_FAULT_TITLES`` (comma-separated) picks the titles. The
figure is the number of games that did not; the detail has the longest wait
for a game to finish after its fault.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from rich.progress import Progress

from benchmarks.common import Measurement
from roundhouse.v1 import lobby_pb2
from services.cli.launcher import Stack
from services.platform.hotstore import KeySpace
from services.rules.titles import available_titles
from tests.integration import faults
from tests.integration.signin import signed_in_lobby

POLICIES = {"railbarons": ["random", "random"], "transsib": ["random"] * 2, "e1894": ["random"] * 3}
FAULTS = [*(f"kill9-{k}" for k in faults.PROCESS_KINDS), "redis-pause", "lost-tail", "redis-oom"]


def _one(stack, lobby, fault_redis, title, fault, seed) -> float:
    r = fault_redis.client()
    table_id = faults.start_bot_game(lobby, title, POLICIES[title], seed)
    faults.wait_for_version(r, stack.prefix, title, table_id, 3)
    if fault.startswith("kill9-"):
        faults.kill9(stack, fault.removeprefix("kill9-"))
    elif fault == "redis-pause":
        fault_redis.pause(3)
    elif fault == "lost-tail":
        fault_redis.snapshot()
        key = KeySpace(stack.prefix).log(f"{title}-{table_id}")
        faults.wait_for_version(r, stack.prefix, title, table_id, r.xlen(key) + 3)
        fault_redis.crash_and_restart()
        r = fault_redis.client()
    elif fault == "redis-oom":
        with fault_redis.out_of_memory():
            time.sleep(4)
    _, waited = faults.finish_and_verify(lobby, r, stack.prefix, table_id, timeout=300)
    stack.check_alive()
    return waited


def fault_suite() -> Measurement:
    games = int(os.environ.get("ROUNDHOUSE_BENCH_FAULT_GAMES", "1"))
    wanted = os.environ.get("ROUNDHOUSE_BENCH_FAULT_TITLES", "railbarons,transsib,e1894")
    titles = [t for t in wanted.split(",") if t in available_titles()]
    root = Path(tempfile.mkdtemp(prefix="rh-bench-faults-"))
    failed, waits, done, restarts = [], [], 0, []
    with faults.fault_environment():
        fault_redis = faults.FaultRedis(root / "redis")
        try:
            with (
                Stack(
                    titles,
                    redis_url=fault_redis.url,
                    workers=2,
                    run_dir=root / "run",
                    restart_workers=True,  # as a Kubernetes Deployment does
                ) as stack,
                signed_in_lobby(stack) as (_, lobby),
                Progress() as progress,
            ):
                bar = progress.add_task("faulted games", total=len(titles) * len(FAULTS) * games)
                for title in titles:
                    for fault in FAULTS:
                        for g in range(games):
                            seed = 1000 + 17 * FAULTS.index(fault) + g
                            try:
                                waits.append(_one(stack, lobby, fault_redis, title, fault, seed))
                            except Exception as exc:  # noqa: BLE001 - counted and named
                                failed.append(f"{title}/{fault}: {exc!r}"[:200])
                            done += 1
                            progress.advance(bar)
                restarts = list(stack.restarts)
        finally:
            fault_redis.stop()
    return Measurement(
        "faulted games that did not finish and verify",
        len(failed),
        "games",
        0,
        higher_is_better=False,
        detail=f"{done} games ({', '.join(titles)} x {len(FAULTS)} faults x {games}); "
        f"longest wait to the end after the fault {max(waits, default=0):.1f} s; "
        f"the worker was started again {len(restarts)} times "
        f"({sum(code == -9 for _, code in restarts)} after kill -9, "
        f"{sum(code != -9 for _, code in restarts)} after exiting by itself); {failed[:3]}",
    )


def redis_kills() -> Measurement:
    """Redis killed (``kill -9``) ``ROUNDHOUSE_BENCH_REDIS_KILLS`` times (10) under bot play,
    restarted each time from its append-only file, ``ROUNDHOUSE_BENCH_REDIS_KILL_EVERY_S``
    (3 s) apart; a new game of bots starts before each kill (plus two at the start:
    ``kills + 2`` games of Chicago Express, two random bots each). Every game must finish
    and replay to the lobby's result; the Celery worker must live through the kills (issue
    33, item 2: it exited on 1 of 2). The figure is the number of games that did not."""
    kills = int(os.environ.get("ROUNDHOUSE_BENCH_REDIS_KILLS", "10"))
    every_s = float(os.environ.get("ROUNDHOUSE_BENCH_REDIS_KILL_EVERY_S", "3"))
    title = "railbarons"
    root = Path(tempfile.mkdtemp(prefix="rh-bench-redis-kills-"))
    failed: list[str] = []
    waits: list[float] = []
    running_at_kill: list[int] = []
    restarts: list[tuple[str, int]] = []
    tables: list[str] = []
    started = time.monotonic()
    with faults.fault_environment():
        fault_redis = faults.FaultRedis(root / "redis", persist=True)
        try:
            with (
                Stack(
                    [title],
                    redis_url=fault_redis.url,
                    workers=2,
                    run_dir=root / "run",
                    restart_workers=True,  # counted: a worker that exits by itself is a failure
                ) as stack,
                signed_in_lobby(stack) as (_, lobby),
            ):
                start = faults.client_retry(faults.start_bot_game)
                tables += [start(lobby, title, POLICIES[title], 3000 + i) for i in range(2)]
                for k in range(kills):
                    tables.append(start(lobby, title, POLICIES[title], 3100 + k))
                    time.sleep(every_s)
                    running_at_kill.append(
                        sum(
                            faults._table(lobby, t).status != lobby_pb2.TABLE_STATUS_FINISHED
                            for t in tables
                        )
                    )
                    fault_redis.crash_and_restart()
                last_kill = time.monotonic()
                r = fault_redis.client()
                for table_id in tables:
                    try:
                        faults.finish_and_verify(lobby, r, stack.prefix, table_id, timeout=600)
                        waits.append(time.monotonic() - last_kill)
                    except Exception as exc:  # noqa: BLE001 - counted and named
                        failed.append(f"{table_id}: {exc!r}"[:200])
                restarts = list(stack.restarts)
        finally:
            fault_redis.stop()
    wall = time.monotonic() - started
    return Measurement(
        f"games that did not finish under {kills} Redis kills",
        len(failed) + len(restarts),
        "games + worker exits",
        0,
        higher_is_better=False,
        detail=f"{len(tables)} games of {title} (2 random bots), {kills} kill -9 of Redis "
        f"{every_s:g} s apart (append-only file), games running at each kill "
        f"{running_at_kill}; all finished {max(waits, default=0):.1f} s after the last kill; "
        f"worker exits {restarts}; whole run {wall:.0f} s; {failed[:3]}",
    )


BENCHMARKS = [fault_suite, redis_kills]
