"""Table chat under load (issue 32, "Numbers"): 50 chat messages/s over 100 tables while
200 moves/s are played, through the whole stack (the stack and the scripted seats of
``bench_gateway``).

100 two-player tables, each seat its own account. Two phases on the same tables, each of
warm-up + ``ROUNDHOUSE_BENCH_SECONDS`` (20 by default):

* **moves only**: every table moves twice a second (200 moves/s offered over the 100), as
  ``bench_gateway`` plays them (``GET .../moves``, then the timed ``POST .../moves``);
* **moves and chat**: the same, plus 50 chat messages/s (each table's seats take turns, one
  message every 2 s per table, evenly phased: ``POST /api/tables/{id}/chat``), while one
  spectator account per table reads the spectators' channel and the other seat reads the
  players' (``GET .../chat?wait_ms=10000`` in a loop, as the page's live box does).

Reported: the move p99 of each phase (bar: ``bench_gateway``'s 30 ms), the chat POST p99 and
the delivery p99 (from a message's POST to the waiting reader's answer carrying it).

Run: ``python -m benchmarks.run bench_chat``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time

import aiohttp
import httpx

from benchmarks.bench_gateway import GET, WARMUP_S, _play, _sign_up, _stack_env, _table, p99
from benchmarks.common import Measurement
from services.accounts.store import AccountStore
from services.cli.launcher import Stack
from services.platform.db import create_engine, session_factory
from services.platform.settings import StoreSettings

TABLES = 100
MOVES_PER_S_PER_TABLE = 2.0
"""200 moves/s offered over the 100 tables."""
CHAT_PER_S = 50.0
"""Chat messages per second over all the tables."""
SECONDS = float(os.environ.get("ROUNDHOUSE_BENCH_SECONDS", "20"))
MOVE_BAR_MS = 30.0
"""``bench_gateway``'s bar for the HTTP move p99."""

_results: dict[str, Measurement] = {}


async def _talk(http, tid, seats, phase, start, end, run) -> None:
    """One table's seats take turns to post a message every ``TABLES / CHAT_PER_S`` s."""
    period = TABLES / CHAT_PER_S
    tick, n = start + phase, 0
    while tick < end:
        await asyncio.sleep(max(0.0, tick - time.perf_counter()))
        text = f"m{n} {time.perf_counter():.6f}"
        t0 = time.perf_counter()
        async with http.post(
            f"/api/tables/{tid}/chat",
            json={"channel": "players", "text": text},
            headers=seats[n % 2],
        ) as r:
            answer = await r.json()
        if r.status != 201:
            run["chat_errors"].append(str(answer)[:200])
        else:
            run["chat_sent"][answer["id"]] = t0
            if tick - start >= WARMUP_S:
                run["chat_post"].append((time.perf_counter() - t0) * 1000)
        tick += period
        n += 1


async def _read(http, tid, headers, channel, stop, run) -> None:
    """A waiting reader of one channel: the arrival time of each message id."""
    after = ""
    while not stop.is_set():
        params = {"channel": channel, "after": after, "wait_ms": "10000"}
        async with http.get(f"/api/tables/{tid}/chat", params=params, headers=headers) as r:
            answer = await r.json()
        if r.status != 200:
            run["read_errors"].append(str(answer)[:200])
            return
        now = time.perf_counter()
        for m in answer["messages"]:
            run["chat_seen"].setdefault(m["id"], now)
        after = answer["last_id"]


async def _phase(base, tables, spectators, chat: bool) -> dict:
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=60)
    run: dict = {
        "sent": {},
        "latencies": [],
        "errors": [],
        "missed": [],
        "gets": 0,
        "chat_sent": {},
        "chat_seen": {},
        "chat_post": [],
        "chat_errors": [],
        "read_errors": [],
    }
    async with aiohttp.ClientSession(base, connector=connector, timeout=timeout) as http:
        stop = asyncio.Event()
        readers = []
        if chat:
            for (tid, seats), watcher in zip(tables, spectators, strict=True):
                readers.append(
                    asyncio.create_task(_read(http, tid, seats[1], "players", stop, run))
                )
                readers.append(
                    asyncio.create_task(_read(http, tid, watcher, "spectators", stop, run))
                )
        await asyncio.sleep(1.0)
        start = time.perf_counter() + 0.5
        end = start + WARMUP_S + SECONDS
        rate = MOVES_PER_S_PER_TABLE
        jobs = [
            _play(http, tid, seats, i / rate / TABLES, start, end, run, rate, GET, None)
            for i, (tid, seats) in enumerate(tables)
        ]
        if chat:
            jobs += [
                _talk(http, tid, seats, i / CHAT_PER_S, start, end, run)
                for i, (tid, seats) in enumerate(tables)
            ]
        await asyncio.gather(*jobs)
        await asyncio.sleep(1.0)
        stop.set()
        for task in readers:
            task.cancel()
    delivered = [
        (run["chat_seen"][i] - t0) * 1000
        for i, t0 in run["chat_sent"].items()
        if i in run["chat_seen"] and t0 - start >= WARMUP_S
    ]
    run["delivered"] = delivered
    run["rate"] = len(run["latencies"]) / SECONDS
    return run


async def _run(stack: Stack) -> None:
    base = f"http://{stack.gateway_address}"
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        engine = create_engine(stack.database_url, StoreSettings())
        store = AccountStore(session_factory(engine))
        tables = [await _table(http, store, i, 7) for i in range(TABLES)]
        spectators = [await _sign_up(store, f"bench-watch{i}") for i in range(TABLES)]
        await engine.dispose()
    for key, chat in (("moves", False), ("chat", True)):
        r = await _phase(base, tables, spectators, chat)
        lat = r["latencies"]
        what = "with 50 chat messages/s" if chat else "without chat"
        _results[f"move-{key}"] = Measurement(
            f"HTTP move p99, 200 moves/s offered over {TABLES} tables, {what}",
            p99(lat),
            "ms",
            MOVE_BAR_MS,
            higher_is_better=False,
            detail=f"p50 {statistics.median(lat):.1f} ms, {r['rate']:.0f} moves/s achieved, "
            f"{len(r['errors'])} refused, {len(r['missed'])} ticks missed",
        )
        if chat:
            post, seen = r["chat_post"], r["delivered"]
            _results["chat-post"] = Measurement(
                "chat POST p99 at 50 messages/s over 100 tables, moves played",
                p99(post),
                "ms",
                MOVE_BAR_MS,
                higher_is_better=False,
                detail=f"p50 {statistics.median(post):.1f} ms, {len(post)} messages, "
                f"{len(r['chat_errors'])} refused",
            )
            _results["chat-delivery"] = Measurement(
                "chat delivery p99 (POST sent -> waiting reader's answer)",
                p99(seen) if seen else float("inf"),
                "ms",
                200,
                higher_is_better=False,
                detail=f"p50 {statistics.median(seen) if seen else 0:.1f} ms over "
                f"{len(seen)} messages, {len(r['read_errors'])} reader errors",
            )


def _measure() -> None:
    if _results:
        return
    _stack_env()
    with Stack(["railbarons"], private_redis=True, gateway=True, workers=1) as stack:
        asyncio.run(_run(stack))


def _bench(key: str, name: str):
    def bench() -> Measurement:
        _measure()
        return _results[key]

    bench.__name__ = bench.__qualname__ = name
    return bench


BENCHMARKS = [
    _bench("move-moves", "bench_move_p99_without_chat"),
    _bench("move-chat", "bench_move_p99_with_chat"),
    _bench("chat-post", "bench_chat_post_p99"),
    _bench("chat-delivery", "bench_chat_delivery_p99"),
]
