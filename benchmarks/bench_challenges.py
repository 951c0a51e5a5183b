"""Invitation -> the invitee's event stream (issue 32, "Numbers"): the time from an owner's
``CreateChallenge`` call to the ``challenge`` event reaching the invitee's open
``StreamEvents`` stream, over real gRPC on loopback (the lobby in-process with its
production interceptors: ``services/lobby/tests/harness.py``), a private Redis and an SQLite
store.

Target: p99 <= 200 ms on this machine. ``ROUNDHOUSE_BENCH_INVITES`` invitations (default
300), one at a time to one table, each canceled before the next (tables created are
rate-limited). Run: ``python -m benchmarks.run bench_challenges``; figures in
``docs/benchmarks.md``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
import uuid

from benchmarks.common import Measurement
from roundhouse.v1 import lobby_pb2
from services.cli.launcher import Stack
from services.lobby.tests.harness import running_lobby
from services.platform.db import upgrade


async def _latencies(database_url: str, redis_url: str, n: int) -> list[float]:
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    async with running_lobby(database_url, redis_url, prefix, events=True) as env:
        ada, bob = await env.person("ada"), await env.person("bob")
        tid = (await env.table(ada, players=2)).table_id  # (tables created are rate-limited)
        stream = env.lobby.StreamEvents(lobby_pb2.StreamEventsRequest(), metadata=bob.md)
        seen: asyncio.Queue[tuple[str, float]] = asyncio.Queue()

        async def read() -> None:
            async for e in stream:
                if e.type == "challenge":
                    seen.put_nowait((e.data_json, time.perf_counter()))

        reader = asyncio.create_task(read())
        invite = lobby_pb2.CreateChallengeRequest(table_id=tid, seat=1, invitee="bob")
        out = []
        for i in range(n + 1):  # the first one only shows the stream is open
            start = time.perf_counter()
            sent = await env.lobby.CreateChallenge(invite, metadata=ada.md)
            got, at = await asyncio.wait_for(seen.get(), 30)
            assert sent.challenge_id in got
            if i:
                out.append((at - start) * 1000)
            cancel = lobby_pb2.ChallengeRequest(challenge_id=sent.challenge_id)
            await env.lobby.CancelChallenge(cancel, metadata=ada.md)  # the seat is free again
        stream.cancel()
        reader.cancel()
        return out


def invitation_reaches_the_invitee_p99() -> Measurement:
    n = int(os.environ.get("ROUNDHOUSE_BENCH_INVITES", "300"))
    run_dir = tempfile.mkdtemp(prefix="rh-bench-challenges-")
    stack = Stack(["railbarons"], private_redis=True, run_dir=run_dir)
    try:
        stack.ensure_redis()
        url = f"sqlite+aiosqlite:///{os.path.join(run_dir, 'store.db')}"
        upgrade(url)
        ms = sorted(asyncio.run(_latencies(url, stack.redis_url, n)))
    finally:
        stack.stop()
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    return Measurement(
        name="invitation -> invitee's event stream, p99",
        value=p99,
        unit="ms",
        target=200.0,
        higher_is_better=False,
        detail=f"{n} invitations: p50 {statistics.median(ms):.1f} ms, max {ms[-1]:.1f} ms "
        f"(CreateChallenge call + the event)",
    )


BENCHMARKS = [invitation_reaches_the_invitee_p99]
