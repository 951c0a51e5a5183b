"""The HTTP gateway (issue 10, "Numbers"), through the whole stack.

One stack of real processes (a private Redis, the embedded SQLite store, the
Chicago Express rules service, accounts, the lobby, the dispatcher, the
archiver, a Celery worker and one gateway), and a load generator in this
process (httpx):

* **HTTP move p99 at 200 moves/s offered over 50 games.** 50 two-player
  tables, each seat held by its own account through the API. Every table
  moves 4 times a second on a fixed schedule (open loop, tables evenly
  phased): at its tick the seat to act reads its legal moves
  (``GET /api/tables/{id}/moves``, not timed) and sends the first
  (``POST /api/tables/{id}/moves``, timed from the request to the answer).
  The first seconds are warm-up and not counted. A table that falls behind
  its schedule (a loaded machine) drops the ticks it missed, so the rate
  achieved is reported beside the p99.
* **yourTurn latency.** During the same run every account has its event
  stream open (``GET /api/stream/events``); each ``yourTurn`` is matched to
  the move that caused it (table, version), and timed from the moment that
  move's POST was sent to the moment the event line arrived.
* **1,000 idle NDJSON streams.** Afterwards 500 table streams and 500 event
  streams are opened and left idle; the gateway's resident memory (``VmRSS``)
  is read before and with them.

Run: ``python -m benchmarks.run bench_gateway``.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time

import httpx
import psutil

from benchmarks.common import Measurement
from services.accounts.models import HUMAN
from services.accounts.store import AccountStore
from services.cli.launcher import Stack
from services.common.db import create_engine, session_factory
from services.common.settings import Settings

TABLES = 50
MOVES_PER_S_PER_TABLE = 4.0
SECONDS = float(os.environ.get("ROUNDHOUSE_BENCH_SECONDS", "20"))
WARMUP_S = 4.0
IDLE_STREAMS = 1000

_results: dict[str, Measurement] = {}


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) >= 100 else max(values)


async def _sign_up(store: AccountStore, name: str) -> dict:
    """An account and a token made in the store directly (sign-up and sign-in over the
    API hash passwords with argon2 on purpose: not what this benchmark measures)."""
    account = await store.create_account(name, None, HUMAN)
    secret, _ = await store.create_token(account, ["play", "tables:write"], 0, "bench")
    return {"Authorization": f"Bearer {secret}"}


async def _table(http: httpx.AsyncClient, store: AccountStore, i: int) -> tuple[str, list[dict]]:
    a, b = await _sign_up(store, f"bench-a{i}"), await _sign_up(store, f"bench-b{i}")
    r = await http.post("/api/tables", json={"title": "railbarons", "num_players": 2}, headers=a)
    r.raise_for_status()
    tid = r.json()["table_id"]
    (await http.post(f"/api/tables/{tid}/seats/0/join", headers=a)).raise_for_status()
    (await http.post(f"/api/tables/{tid}/seats/1/join", headers=b)).raise_for_status()
    (await http.post(f"/api/tables/{tid}/start", headers=a)).raise_for_status()
    return tid, [a, b]


async def _listen(http, headers, arrivals: dict, stop: asyncio.Event) -> None:
    """Record the arrival time of every yourTurn: (table, version) -> time."""
    async with http.stream("GET", "/api/stream/events", headers=headers) as r:
        async for line in r.aiter_lines():
            if stop.is_set():
                return
            if line.strip():
                event = json.loads(line)
                if event["type"] == "yourTurn":
                    arrivals[(event["table_id"], event["version"])] = time.perf_counter()


async def _play(http, tid, seats, phase, start, end, sent, latencies, errors, missed) -> None:
    view = (await http.get(f"/api/tables/{tid}/view", headers=seats[0])).json()
    active = view["active_seats"]
    period = 1.0 / MOVES_PER_S_PER_TABLE
    tick = start + phase
    while tick < end and active and time.perf_counter() < end:
        await asyncio.sleep(max(0.0, tick - time.perf_counter()))
        seat = active[0]
        moves = (await http.get(f"/api/tables/{tid}/moves", headers=seats[seat])).json()
        body = {
            "action": moves["moves"][0]["action"],
            "expected_version": moves["version"],
            "idempotency_key": f"{tid}-{moves['version']}",
        }
        t0 = time.perf_counter()
        sent[(tid, moves["version"] + 1)] = t0
        r = await http.post(f"/api/tables/{tid}/moves", json=body, headers=seats[seat])
        took = time.perf_counter() - t0
        if r.status_code != 200:
            errors.append(r.text[:200])
            break
        answer = r.json()
        if tick - start >= WARMUP_S:
            latencies.append(took * 1000)
        active = answer["active_seats"]
        tick += period
        while tick < time.perf_counter() - period:  # fell behind: drop the ticks missed
            tick += period
            missed.append(tid)


def _rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 1e6


async def _run(stack: Stack) -> None:
    base = f"http://{stack.gateway_address}"
    gateway_pid = next(p.popen.pid for p in stack.procs if p.name == "gateway")
    limits = httpx.Limits(max_connections=IDLE_STREAMS + 300, max_keepalive_connections=300)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        engine = create_engine(stack.database_url, Settings())
        store = AccountStore(session_factory(engine))
        tables = [await _table(http, store, i) for i in range(TABLES)]
        await engine.dispose()
        arrivals: dict = {}
        stop = asyncio.Event()
        everyone = [h for _, seats in tables for h in seats]
        listeners = [asyncio.create_task(_listen(http, h, arrivals, stop)) for h in everyone]
        await asyncio.sleep(1.0)
        sent: dict = {}
        latencies: list[float] = []
        errors: list[str] = []
        missed: list[str] = []
        start = time.perf_counter() + 0.5
        end = start + WARMUP_S + SECONDS
        period = 1.0 / MOVES_PER_S_PER_TABLE
        await asyncio.gather(
            *(
                _play(
                    http,
                    tid,
                    seats,
                    period * i / TABLES,
                    start,
                    end,
                    sent,
                    latencies,
                    errors,
                    missed,
                )
                for i, (tid, seats) in enumerate(tables)
            )
        )
        await asyncio.sleep(1.0)
        stop.set()
        for task in listeners:
            task.cancel()
        rate = len(latencies) / SECONDS
        _results["move"] = Measurement(
            "HTTP move p99, 200 moves/s offered over 50 games",
            p99(latencies),
            "ms",
            30,
            higher_is_better=False,
            detail=f"p50 {statistics.median(latencies):.1f} ms, {rate:.0f} moves/s achieved, "
            f"{len(latencies)} moves, {len(errors)} refused, {len(missed)} ticks missed",
        )
        turn = [
            (arrivals[key] - t0) * 1000
            for key, t0 in sent.items()
            if key in arrivals and t0 - start >= WARMUP_S
        ]
        _results["turn"] = Measurement(
            "yourTurn on the event stream after the move's POST, p99",
            p99(turn),
            "ms",
            100,
            higher_is_better=False,
            detail=f"p50 {statistics.median(turn):.1f} ms over {len(turn)} turns "
            f"({len(sent) - len(turn)} moves without one: game over or warm-up)",
        )
        # 1,000 idle streams: half table streams, half event streams
        await asyncio.sleep(1.0)
        before = _rss_mb(gateway_pid)
        opened: list = []
        heads = [h for _, seats in tables for h in seats]

        async def open_one(i: int):
            tid, _ = tables[i % TABLES]
            path = f"/api/tables/{tid}/stream" if i % 2 else "/api/stream/events"
            request = http.build_request("GET", path, headers=heads[i % len(heads)])
            response = await http.send(request, stream=True)
            assert response.status_code == 200, response.status_code
            return response

        for first in range(0, IDLE_STREAMS, 100):
            opened += await asyncio.gather(*(open_one(i) for i in range(first, first + 100)))
        await asyncio.sleep(3.0)
        with_streams = _rss_mb(gateway_pid)
        _results["memory"] = Measurement(
            "gateway resident memory with 1,000 idle NDJSON streams",
            with_streams,
            "MB",
            200,
            higher_is_better=False,
            detail=f"{before:.0f} MB before; {IDLE_STREAMS // 2} table + "
            f"{IDLE_STREAMS // 2} event streams",
        )
        for response in opened:
            await response.aclose()


def _measure() -> None:
    if _results:
        return
    os.environ["ROUNDHOUSE_GATEWAY_STREAMS_PER_TOKEN"] = str(IDLE_STREAMS)
    os.environ["ROUNDHOUSE_MAX_WATCHERS"] = str(IDLE_STREAMS * 2)
    with Stack(["railbarons"], private_redis=True, gateway=True, workers=1) as stack:
        asyncio.run(_run(stack))


def bench_http_move_p99() -> Measurement:
    _measure()
    return _results["move"]


def bench_your_turn_latency() -> Measurement:
    _measure()
    return _results["turn"]


def bench_idle_stream_memory() -> Measurement:
    _measure()
    return _results["memory"]


BENCHMARKS = [bench_http_move_p99, bench_your_turn_latency, bench_idle_stream_memory]
