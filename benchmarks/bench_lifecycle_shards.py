"""What reading a sharded lifecycle stream costs a consumer on one Redis (issue 17, item 1):
why ``lifecycle_shards`` is 1 by default there.

One lifecycle consumer (``services.platform.consumer.consume``, ``linger_ms`` 10 like the
dispatcher) on a private Redis; a child process appends ``turn`` entries of 50 games to their
shards at ``ROUNDHOUSE_BENCH_SHARDS_RATE`` entries/s (default 200, about the gateway bench's
rate) for ``ROUNDHOUSE_BENCH_SHARDS_SECONDS`` (8) s. Measured: this process's CPU (user +
system) per entry handled, with the stream in 1 shard and in 12, alternating, 3 rounds each;
the figure is the ratio of the medians (12 / 1). With 12 shards one ``XREADGROUP`` still reads
them all, but a batch's entries lie in several shards, each acknowledged by its own ``XACK``.

Run: ``nice -n 5 .venv/bin/python -m benchmarks.run bench_lifecycle_shards`` (about a minute).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import redis.asyncio as aioredis

from benchmarks.common import Measurement
from services.cli.launcher import free_port, redis_server_command, wait_for_redis
from services.platform.consumer import consume
from services.platform.hotstore import KeySpace

PRODUCER = """
import redis, sys, time
from services.platform.hotstore import KeySpace
prefix, shards, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rate, seconds = float(sys.argv[4]), float(sys.argv[5])
keys, r = KeySpace(prefix, shards), redis.Redis(port=port)
t0 = time.monotonic()
for i in range(int(rate * seconds)):
    game = f"g{i % 50}"
    r.xadd(keys.lifecycle(game), {"type": "turn", "game_id": game, "version": str(i)})
    wait = t0 + (i + 1) / rate - time.monotonic()
    if wait > 0:
        time.sleep(wait)
"""


async def _round(url: str, port: int, shards: int, rate: float, seconds: float) -> float:
    """CPU ms of this process per entry handled, for one run of ``shards`` shards."""
    r = aioredis.from_url(url, decode_responses=True)
    keys = KeySpace(f"bench-shards-{uuid.uuid4().hex[:6]}", shards)
    seen = 0

    async def handle(_fields):
        nonlocal seen
        seen += 1

    stop = asyncio.Event()
    task = asyncio.create_task(
        consume(r, keys.lifecycle_streams, "g", "c", handle, stop=stop, linger_ms=10)
    )
    await asyncio.sleep(0.5)
    before = time.process_time()
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", PRODUCER, keys.prefix, str(shards), str(port), str(rate), str(seconds)
    )
    await child.wait()
    await asyncio.sleep(0.3)
    used = time.process_time() - before
    stop.set()
    await asyncio.wait_for(task, 5)
    await r.aclose()
    return 1000 * used / max(1, seen)


def lifecycle_shards_cost() -> Measurement:
    rate = float(os.environ.get("ROUNDHOUSE_BENCH_SHARDS_RATE", "200"))
    seconds = float(os.environ.get("ROUNDHOUSE_BENCH_SHARDS_SECONDS", "8"))
    port, workdir = free_port(), tempfile.mkdtemp(prefix="rh-bench-shards-")
    proc = subprocess.Popen(redis_server_command(port, workdir), stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    costs: dict[int, list[float]] = {1: [], 12: []}
    try:
        wait_for_redis(url)
        for n in range(3):
            for shards in (1, 12):
                costs[shards].append(asyncio.run(_round(url, port, shards, rate, seconds)))
                print(f"round {n + 1}/3, {shards:2d} shards: {costs[shards][-1]:.3f} ms/entry")  # noqa: T201
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
    one, twelve = statistics.median(costs[1]), statistics.median(costs[12])
    return Measurement(
        "consumer CPU per lifecycle entry on one Redis, 12 shards / 1 (ratio)",
        twelve / one,
        "x",
        1.5,
        higher_is_better=False,
        detail=f"1 shard {one:.3f} ms, 12 shards {twelve:.3f} ms per entry (medians of 3 rounds, "
        f"alternating; {rate:.0f} entries/s, linger 10 ms); load average {os.getloadavg()[0]:.1f}",
    )


BENCHMARKS = [lifecycle_shards_cost]
