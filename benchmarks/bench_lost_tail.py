"""After a lost stream tail, how soon do the affected games move again (issue 13,
"Numbers": within 5 s, without restarting anything)?

A stack of real processes on a Redis of its own (``tests/integration/faults.py``'s
:class:`FaultRedis`), ``ROUNDHOUSE_BENCH_LOST_TAIL_GAMES`` bot games of Chicago
Express (default 12, three random bots each) playing at once. Redis is snapshotted,
every game plays at least 3 more moves, then Redis is killed (SIGKILL) and started
again from the snapshot: every game has lost the last moves of its stream, and the
consumer groups their last positions, as after a failover to a lagging replica.
Nothing else is restarted. For each game the figure is the time from the moment the
restarted Redis answers to the moment its stream holds a move past the surviving
tail. Every game must then finish and replay to the lobby's result.

Run: ``python -m benchmarks.run bench_lost_tail``.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from rich.progress import Progress

from benchmarks.common import Measurement
from services.cli.launcher import Stack
from services.platform.hotstore import KeySpace
from tests.integration import faults
from tests.integration.signin import signed_in_lobby

TITLE = "railbarons"


def _log_key(prefix: str, table_id: str) -> str:
    return KeySpace(prefix).log(f"{TITLE}-{table_id}")  # the lobby's game id


def lost_tail_recovery() -> Measurement:
    games = int(os.environ.get("ROUNDHOUSE_BENCH_LOST_TAIL_GAMES", "12"))
    root = Path(tempfile.mkdtemp(prefix="rh-bench-lost-tail-"))
    with faults.fault_environment():
        fault_redis = faults.FaultRedis(root / "redis")
        try:
            with (
                Stack([TITLE], redis_url=fault_redis.url, workers=2, run_dir=root / "run") as stack,
                signed_in_lobby(stack) as (_, lobby),
                Progress() as progress,
            ):
                r = fault_redis.client()
                tables = [
                    faults.start_bot_game(lobby, TITLE, ["random"] * 3, 4000 + g)
                    for g in range(games)
                ]
                for tid in tables:
                    faults.wait_for_version(r, stack.prefix, TITLE, tid, 5)
                before = {tid: r.xlen(_log_key(stack.prefix, tid)) for tid in tables}
                fault_redis.snapshot()
                for tid in tables:
                    faults.wait_for_version(r, stack.prefix, TITLE, tid, before[tid] + 4)
                played = {tid: r.xlen(_log_key(stack.prefix, tid)) for tid in tables}
                fault_redis.crash_and_restart()
                back = time.monotonic()
                r = fault_redis.client()
                kept = {tid: r.xlen(_log_key(stack.prefix, tid)) for tid in tables}
                lost = {tid: played[tid] - kept[tid] for tid in tables}
                assert all(n >= 3 for n in lost.values()), f"moves lost per game: {lost}"
                waits: dict[str, float] = {}
                bar = progress.add_task("games moving again", total=games)
                while len(waits) < games and time.monotonic() - back < 120:
                    for tid in tables:
                        if tid not in waits and r.xlen(_log_key(stack.prefix, tid)) > kept[tid]:
                            waits[tid] = time.monotonic() - back
                            progress.advance(bar)
                    time.sleep(0.02)
                finished = progress.add_task("games finished and verified", total=games)
                for tid in tables:
                    faults.finish_and_verify(lobby, r, stack.prefix, tid, timeout=300)
                    progress.advance(finished)
        finally:
            fault_redis.stop()
    values = sorted(waits.values())
    stuck = games - len(values)
    worst = max(values) if not stuck else float("inf")
    return Measurement(
        f"lost stream tail: slowest of {games} games to move again (max)",
        worst,
        "s",
        5,
        higher_is_better=False,
        detail=f"median {statistics.median(values):.2f} s, min {values[0]:.2f} s; "
        f"{min(lost.values())}-{max(lost.values())} moves lost per game; "
        f"{stuck} games did not move within 120 s; every game finished and replayed; "
        f"load average {os.getloadavg()[0]:.1f}",
    )


BENCHMARKS = [lost_tail_recovery]
