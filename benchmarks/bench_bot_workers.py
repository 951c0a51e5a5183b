"""Bot throughput against worker processes (issue 14, item 5; bar: 2 workers >= 1.8 x 1).

Setup: a private Redis and the real services (rules, lobby, accounts, dispatcher,
archiver: :class:`services.cli.launcher.Stack`) with one Celery worker of ``--concurrency
W``, ``W`` = 1 then 2, in one run. 20 Chicago Express tables of 4 bot seats all play one
policy: ``search-easy`` (``ROUNDHOUSE_BENCH_BOT_POLICY`` overrides it; each move takes its
0.05 s wall-clock budget on the worker, so the worker processes are the bottleneck), then
``greedy`` (about 1 ms of policy per move: the rules service, the dispatcher and Redis
then bound the rate, not the workers). After a warm-up of 3 s the moves of all
tables (their game logs' versions in Redis) are counted over ``ROUNDHOUSE_BENCH_SECONDS``
(default 20 s); the figure is moves per second with W = 2 over W = 1, and the detail gives
both rates (the model in ``docs/bots.md`` is checked against them).
"""

from __future__ import annotations

import os
import tempfile
import time

import redis

from benchmarks.common import Measurement
from roundhouse.v1 import lobby_pb2
from services.cli.launcher import Stack
from tests.integration.conftest import QUOTAS
from tests.integration.signin import signed_in_lobby
from tests.integration.test_dead_worker import version_of

TABLES = 20
SEATS = 4
TITLE = "railbarons"
WARM_UP_S = 3.0


_TICK = os.sysconf("SC_CLK_TCK")


def stack_cpu_seconds(stack: Stack) -> dict[str, float]:
    """CPU seconds (user + system) used so far by each of the stack's processes, their
    children included (each was started in its own session: the Celery pool processes
    share the worker's), by process name, from ``/proc``."""
    sessions = {p.popen.pid: p.name for p in stack.procs}
    out = dict.fromkeys(sessions.values(), 0.0)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = sessions.get(int(fields[3]))  # field 6 of stat: the session id
        if name is not None:
            out[name] += (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
    return out


def moves_per_second(workers: int, policy: str, seconds: float) -> tuple[float, int, dict]:
    """Bot moves per second on :data:`TABLES` all-bot tables with one Celery worker of
    ``workers`` processes; also how many tables moved during the window and the CPU
    seconds per move of each process over the window."""
    run_dir = tempfile.mkdtemp(prefix=f"rh-bench-workers-{workers}-")
    # one organiser creates all 20 tables at once: the quotas are lifted, as in the tests
    with Stack([TITLE], private_redis=True, workers=workers, run_dir=run_dir, env=QUOTAS) as stack:
        rdb = redis.Redis.from_url(stack.redis_url, decode_responses=True)
        game_ids = []
        with signed_in_lobby(stack) as (_, lobby):
            tables = []
            for _ in range(TABLES):
                table = lobby.CreateTable(
                    lobby_pb2.CreateTableRequest(title=TITLE, num_players=SEATS)
                )
                for seat in range(SEATS):
                    lobby.AddBot(
                        lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy=policy)
                    )
                tables.append(table.table_id)
            for tid in tables:
                game_ids.append(lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid)).game_id)
        time.sleep(WARM_UP_S)  # a benchmark, not a test: real time is what it measures
        t0 = time.perf_counter()
        cpu0 = stack_cpu_seconds(stack)
        before = [version_of(rdb, stack.prefix, g) for g in game_ids]
        time.sleep(seconds)
        after = [version_of(rdb, stack.prefix, g) for g in game_ids]
        cpu1 = stack_cpu_seconds(stack)
        t1 = time.perf_counter()
        rdb.close()
    moving = sum(1 for b, a in zip(before, after, strict=True) if a > b)
    moves = sum(after) - sum(before)
    cpu = {k: (cpu1[k] - cpu0.get(k, 0.0)) / max(moves, 1) for k in cpu1}
    return moves / (t1 - t0), moving, cpu


def _ratio(policy: str) -> Measurement:
    seconds = float(os.environ.get("ROUNDHOUSE_BENCH_SECONDS", "20"))
    load = os.getloadavg()[0]
    one, moving1, cpu1 = moves_per_second(1, policy, seconds)
    two, moving2, cpu2 = moves_per_second(2, policy, seconds)

    def per_move(cpu: dict[str, float]) -> str:
        busy = {k: v for k, v in cpu.items() if v >= 0.0005}
        parts = ", ".join(f"{k} {1000 * v:.1f}" for k, v in sorted(busy.items()))
        return f"{1000 * sum(cpu.values()):.1f} ms CPU/move ({parts})"

    return Measurement(
        f"bot moves/s, 2 worker processes over 1 ({TABLES} {policy} tables)",
        two / one if one else 0.0,
        "x",
        1.8,
        detail=f"1 worker {one:.1f} moves/s ({moving1} tables moving), 2 workers {two:.1f} "
        f"moves/s ({moving2} moving) over {seconds:.0f} s; 1 worker: {per_move(cpu1)}; "
        f"2 workers: {per_move(cpu2)}; "
        f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
    )


def two_workers_over_one_search_easy() -> Measurement:
    """The hosted search tier: each move takes its 0.05 s budget on a worker process."""
    return _ratio(os.environ.get("ROUNDHOUSE_BENCH_BOT_POLICY", "search-easy"))


def two_workers_over_one_greedy() -> Measurement:
    """Greedy moves: ~1 ms of policy, the rest is the services' share of a move."""
    return _ratio("greedy")


BENCHMARKS = [two_workers_over_one_search_easy, two_workers_over_one_greedy]
