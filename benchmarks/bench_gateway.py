"""The HTTP gateway (issue 10, "Numbers"), through the whole stack.

One stack of real processes (a private Redis, the embedded SQLite store, the
Chicago Express rules service, accounts, the lobby, the dispatcher, the
archiver, the tournament service, the clock keeper, a Celery worker and one
gateway), and a load generator in this process (aiohttp for the timed phases):

* **HTTP move p99 at 200 moves/s offered over 50 games.** 50 two-player
  tables, each seat held by its own account. Every table moves 4 times a
  second on a fixed schedule (open loop, tables evenly phased): at its tick
  the seat to act reads its legal moves and sends the first
  (``POST /api/tables/{id}/moves``, timed from the request to the answer).
  Two ways of reading the moves, each measured on its own 50 tables:
  ``GET /api/tables/{id}/moves`` before each move (not timed), and the
  ``moves`` the ``yourTurn`` event carries on a stream opened with
  ``?moves=true`` (the seat waits for that event; if it carried none, it
  falls back to the GET, counted). The first seconds are warm-up and not
  counted. A table that falls behind its schedule (a loaded machine) drops
  the ticks it missed, so the rate achieved is reported beside the p99.
* **yourTurn latency.** During the same run every account has its event
  stream open (``GET /api/stream/events``); each ``yourTurn`` is matched to
  the move that caused it (table, version), and timed from the moment that
  move's POST was sent to the moment the event line arrived.
* **1,000 idle NDJSON streams.** Afterwards 500 table streams and 500 event
  streams are opened and left idle; the gateway's resident memory (``VmRSS``)
  is read before and with them.

Run: ``python -m benchmarks.run bench_gateway``.

The CPU probe (side by side comparisons of two versions, ``benchmarks/gateway_side_by_side.py``):
``ROUNDHOUSE_BENCH_GATEWAY_RATES=100 python benchmarks/bench_gateway.py`` plays only phases at
the given offered rates (moves/s over the 50 tables, comma-separated; ``events:100`` for the
event path), each on fresh tables for warm-up + ``ROUNDHOUSE_BENCH_SECONDS``, skips the idle
streams, and prints one JSON line per phase (the rate achieved, the p50/p99s and the CPU ms per
move of every process).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import time
from pathlib import Path

import aiohttp
import httpx
import psutil

from benchmarks.common import Measurement
from services.accounts.models import HUMAN
from services.accounts.store import AccountStore
from services.cli.launcher import Stack
from services.platform.db import create_engine, session_factory
from services.platform.server import freeze_heap
from services.platform.settings import StoreSettings

TABLES = 50
MOVES_PER_S_PER_TABLE = 4.0
"""200 moves/s offered over the 50 tables: the issue's bar."""
LIGHT_MOVES_PER_S_PER_TABLE = 0.5
"""The light phase before it (25 moves/s): the latency of the same path with CPU to spare."""
SECONDS = float(os.environ.get("ROUNDHOUSE_BENCH_SECONDS", "20"))
LIGHT_SECONDS = 10.0
WARMUP_S = 4.0
IDLE_STREAMS = 1000
RATES_ENV = "ROUNDHOUSE_BENCH_GATEWAY_RATES"
"""The probe's phases: offered moves/s over the tables, comma-separated, each ``N`` (the GET
path) or ``events:N`` (the event path)."""
GET, EVENTS = "get", "events"
"""How the scripted person learns its moves: ``GET .../moves`` before each move, or the
``moves`` of the ``yourTurn`` event (``/api/stream/events?moves=true``)."""
SYNC_ENV = "ROUNDHOUSE_BENCH_GATEWAY_SYNC"
"""``<directory>:<n>``: the probe starts each phase once ``n`` probes are ready (see _barrier)."""
EVENT_WAIT_S = 2.0
"""How long a seat waits for its yourTurn before it reads its moves with a GET instead."""
LOAD_GENERATOR = "load generator"
"""This process's name among the CPU figures (reported, but not in the stack's total)."""

_results: dict[str, Measurement] = {}
_probe: list[dict] = []


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) >= 100 else max(values)


async def _sign_up(store: AccountStore, name: str) -> dict:
    """An account and a token made in the store directly (sign-up and sign-in over the
    API hash passwords with argon2 on purpose: not what this benchmark measures)."""
    account = await store.create_account(name, None, HUMAN)
    secret, _ = await store.create_token(account, ["play", "tables:write"], 0, "bench")
    return {"Authorization": f"Bearer {secret}"}


async def _table(
    http: httpx.AsyncClient, store: AccountStore, i: int, batch: int = 0
) -> tuple[str, list[dict]]:
    a = await _sign_up(store, f"bench-a{i}-{batch}")
    b = await _sign_up(store, f"bench-b{i}-{batch}")
    r = await http.post("/api/tables", json={"title": "railbarons", "num_players": 2}, headers=a)
    r.raise_for_status()
    tid = r.json()["table_id"]
    (await http.post(f"/api/tables/{tid}/seats/0/join", headers=a)).raise_for_status()
    (await http.post(f"/api/tables/{tid}/seats/1/join", headers=b)).raise_for_status()
    (await http.post(f"/api/tables/{tid}/start", headers=a)).raise_for_status()
    return tid, [a, b]


class _Turns:
    """The moves each ``yourTurn`` carried (event path), by (table, version), for the seat
    to act to wait on."""

    def __init__(self) -> None:
        self._futures: dict[tuple[str, int], asyncio.Future] = {}

    def _future(self, key: tuple[str, int]) -> asyncio.Future:
        found = self._futures.get(key)
        if found is None:
            found = self._futures[key] = asyncio.get_running_loop().create_future()
        return found

    def arrived(self, key: tuple[str, int], moves: list[dict] | None) -> None:
        future = self._future(key)
        if not future.done():
            future.set_result(moves)

    async def wait(self, key: tuple[str, int], timeout: float) -> list[dict] | None:
        """The moves of that turn's event (None: it carried none, or none came in time)."""
        try:
            async with asyncio.timeout(timeout):
                return await self._future(key)
        except TimeoutError:
            return None
        finally:
            self._futures.pop(key, None)


async def _listen(http, headers, arrivals: dict, turns: _Turns, path: str, stop) -> None:
    """Record the arrival time of every yourTurn: (table, version) -> time; on the event
    path also hand its moves to the seat waiting for them."""
    url = "/api/stream/events?moves=true" if path == EVENTS else "/api/stream/events"
    async with http.get(url, headers=headers) as r:
        async for line in r.content:
            if stop.is_set():
                return
            if line.strip():
                event = json.loads(line)
                if event["type"] == "yourTurn":
                    key = (event["table_id"], event["version"])
                    arrivals[key] = time.perf_counter()
                    if path == EVENTS:
                        turns.arrived(key, event.get("moves"))


async def _play(http, tid, seats, phase, start, end, run: dict, rate, path, turns) -> None:
    """One table's scripted seats: a move every ``1/rate`` s from ``start + phase``. The
    seat to act reads its moves (``GET .../moves``; on the event path from the yourTurn
    event, or that GET when the event carried none) and posts the first."""
    async with http.get(f"/api/tables/{tid}/view", headers=seats[0]) as r:
        view = await r.json()
    active, version = view["active_seats"], view["version"]
    period = 1.0 / rate
    tick = start + phase
    while tick < end and active and time.perf_counter() < end:
        await asyncio.sleep(max(0.0, tick - time.perf_counter()))
        seat = active[0]
        moves = None
        if path == EVENTS and version:  # the first turn (version 0) came before the stream
            moves = await turns.wait((tid, version), EVENT_WAIT_S)
            if moves is None:
                run["gets"] += 1
        if moves is None:
            async with http.get(f"/api/tables/{tid}/moves", headers=seats[seat]) as r:
                listed = await r.json()
            moves, version = listed["moves"], listed["version"]
        body = {
            "action": moves[0]["action"],
            "expected_version": version,
            "idempotency_key": f"{tid}-{version}-{rate}",
        }
        t0 = time.perf_counter()
        run["sent"][(tid, version + 1)] = t0
        async with http.post(f"/api/tables/{tid}/moves", json=body, headers=seats[seat]) as r:
            answer = await r.json()
            took = time.perf_counter() - t0
            if r.status != 200:
                run["errors"].append(str(answer)[:200])
                break
        if tick - start >= WARMUP_S:
            run["latencies"].append(took * 1000)
        active, version = answer["active_seats"], answer["version"]
        tick += period
        while tick < time.perf_counter() - period:  # fell behind: drop the ticks missed
            tick += period
            run["missed"].append(tid)


def _rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 1e6


def _cpu_s(procs: dict[str, psutil.Process]) -> dict[str, float]:
    """CPU seconds (user + system) of each process so far: a stack process with
    its children (the Celery worker's pool), the load generator (this process,
    the parent of the stack) without."""
    out = {}
    for name, proc in procs.items():
        with contextlib.suppress(psutil.NoSuchProcess):
            kids = [] if proc.pid == os.getpid() else proc.children(recursive=True)
            out[name] = sum(sum(p.cpu_times()[:2]) for p in [proc, *kids])
    return out


async def _phase(base: str, tables, rate: float, seconds: float, procs, path: str) -> dict:
    """Play every table at ``rate`` moves/s for warm-up + ``seconds`` on ``path`` (GET or
    EVENTS); the moves' latencies (ms), the yourTurn delays (ms), the rate achieved and the
    CPU milliseconds per move of each process over the timed part."""
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=60)
    async with aiohttp.ClientSession(base, connector=connector, timeout=timeout) as http:
        return await _phase_in(http, tables, rate, seconds, procs, path)


async def _phase_in(http, tables, rate: float, seconds: float, procs, path: str) -> dict:
    freeze_heap()  # the load generator's own full collections would add to the tail it measures
    arrivals: dict = {}
    turns = _Turns()
    stop = asyncio.Event()
    everyone = [h for _, seats in tables for h in seats]
    listeners = [
        asyncio.create_task(_listen(http, h, arrivals, turns, path, stop)) for h in everyone
    ]
    await asyncio.sleep(1.0)
    run: dict = {"sent": {}, "latencies": [], "errors": [], "missed": [], "gets": 0}
    start = time.perf_counter() + 0.5
    end = start + WARMUP_S + seconds
    period = 1.0 / rate

    async def timed_part() -> tuple[dict, dict]:
        await asyncio.sleep(max(0.0, start + WARMUP_S - time.perf_counter()))
        before = _cpu_s(procs)
        await asyncio.sleep(max(0.0, end - time.perf_counter()))
        return before, _cpu_s(procs)

    window = asyncio.create_task(timed_part())
    await asyncio.gather(
        *(
            _play(http, tid, seats, period * i / len(tables), start, end, run, rate, path, turns)
            for i, (tid, seats) in enumerate(tables)
        )
    )
    before, after = await window
    await asyncio.sleep(1.0)
    stop.set()
    for task in listeners:
        task.cancel()
    latencies = run["latencies"]
    moves = max(len(latencies), 1)
    cpu = {name: 1000 * (after[name] - before.get(name, 0.0)) / moves for name in after}
    turn = [
        (arrivals[key] - t0) * 1000
        for key, t0 in run["sent"].items()
        if key in arrivals and t0 - start >= WARMUP_S
    ]
    return {
        "latencies": latencies,
        "turn": turn,
        "rate": len(latencies) / seconds,
        "errors": run["errors"],
        "missed": run["missed"],
        "sent": len(run["sent"]),
        "gets": run["gets"],
        "cpu_ms_per_move": cpu,
    }


def _cpu_text(cpu: dict[str, float]) -> str:
    """CPU ms per move of each stack process and their total, the load generator's apart
    (it is the benchmark's, not the stack's)."""
    stack = {k: v for k, v in cpu.items() if k != LOAD_GENERATOR}
    parts = ", ".join(f"{k} {v:.2f}" for k, v in sorted(stack.items(), key=lambda kv: -kv[1]))
    return (
        f"CPU ms per move: {parts}; stack total {sum(stack.values()):.2f} "
        f"(load generator {cpu.get(LOAD_GENERATOR, 0.0):.2f}, not in the total)"
    )


async def _barrier(phase: int) -> None:
    """With ``ROUNDHOUSE_BENCH_GATEWAY_SYNC=<directory>:<n>`` (probes of several trees run at
    once, ``benchmarks/gateway_side_by_side.py``): wait until ``n`` probes are ready for this
    phase, so that their timed parts overlap and share the machine's load."""
    sync = os.environ.get(SYNC_ENV)
    if not sync:
        return
    folder, _, n = sync.rpartition(":")
    (Path(folder) / f"{phase}-{os.getpid()}").touch()
    while len(list(Path(folder).glob(f"{phase}-*"))) < int(n):
        await asyncio.sleep(0.1)


def _summary(offered: float, path: str, r: dict) -> dict:
    """One probe phase as a JSON-able dict."""
    lat, turn = r["latencies"], r["turn"]
    cpu = r["cpu_ms_per_move"]
    return {
        "offered": offered,
        "path": path,
        "achieved": round(r["rate"], 1),
        "moves": len(lat),
        "refused": len(r["errors"]),
        "missed": len(r["missed"]),
        "event_path_gets": r["gets"],
        "move_p50_ms": round(statistics.median(lat), 2),
        "move_p99_ms": round(p99(lat), 2),
        "turn_p50_ms": round(statistics.median(turn), 2) if turn else None,
        "turn_p99_ms": round(p99(turn), 2) if turn else None,
        "cpu_ms_per_move": {k: round(v, 3) for k, v in sorted(cpu.items())},
        "stack_cpu_ms_per_move": round(sum(v for k, v in cpu.items() if k != LOAD_GENERATOR), 3),
    }


PHASES = (
    ("light", GET, LIGHT_MOVES_PER_S_PER_TABLE, LIGHT_SECONDS),
    ("bar", GET, MOVES_PER_S_PER_TABLE, SECONDS),
    ("events-light", EVENTS, LIGHT_MOVES_PER_S_PER_TABLE, LIGHT_SECONDS),
    ("events-bar", EVENTS, MOVES_PER_S_PER_TABLE, SECONDS),
)
"""The benchmark's phases: (key, path, moves/s per table, timed seconds). Each path plays its
own 50 tables (a game is about 120 moves: one set of tables lasts both phases of a path)."""

PATH_TEXT = {
    GET: "GET moves then POST",
    EVENTS: "moves from the yourTurn event then POST",
}


async def _run(stack: Stack, probe: list[tuple[str, float]] | None = None) -> None:
    base = f"http://{stack.gateway_address}"
    procs = {p.name: psutil.Process(p.popen.pid) for p in stack.procs}
    procs[LOAD_GENERATOR] = psutil.Process()
    gateway_pid = procs["gateway"].pid
    limits = httpx.Limits(max_connections=IDLE_STREAMS + 300, max_keepalive_connections=300)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        engine = create_engine(stack.database_url, StoreSettings())
        store = AccountStore(session_factory(engine))
        if probe:  # fresh tables for each phase
            for n, (path, rate) in enumerate(probe):
                tables = [await _table(http, store, i, n) for i in range(TABLES)]
                await _barrier(n)
                r = await _phase(base, tables, rate / TABLES, SECONDS, procs, path)
                _probe.append(_summary(rate, path, r))
            await engine.dispose()
            return
        tables_of = {}
        for n, path in enumerate((GET, EVENTS)):
            tables_of[path] = [await _table(http, store, i, n) for i in range(TABLES)]
        await engine.dispose()
        for key, path, rate, seconds in PHASES:
            r = await _phase(base, tables_of[path], rate, seconds, procs, path)
            offered = rate * TABLES
            lat, turn = r["latencies"], r["turn"]
            how = PATH_TEXT[path]
            gets = f", {r['gets']} GETs for lack of event moves" if path == EVENTS else ""
            _results[f"move-{key}"] = Measurement(
                f"HTTP move p99 ({how}), {offered:.0f} moves/s offered over {TABLES} games",
                p99(lat),
                "ms",
                30,
                higher_is_better=False,
                detail=f"p50 {statistics.median(lat):.1f} ms, {r['rate']:.0f} moves/s achieved, "
                f"{len(lat)} moves, {len(r['errors'])} refused, {len(r['missed'])} ticks "
                f"missed{gets}; {_cpu_text(r['cpu_ms_per_move'])}",
            )
            _results[f"turn-{key}"] = Measurement(
                f"yourTurn on the event stream after the move's POST, p99 ({how}), "
                f"{offered:.0f} moves/s offered",
                p99(turn),
                "ms",
                100,
                higher_is_better=False,
                detail=f"p50 {statistics.median(turn):.1f} ms over {len(turn)} turns "
                f"({r['sent'] - len(turn)} moves without one: game over or warm-up)",
            )
        tables = tables_of[GET]
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


def _stack_env() -> None:
    os.environ["ROUNDHOUSE_GATEWAY_STREAMS_PER_TOKEN"] = str(IDLE_STREAMS)
    os.environ["ROUNDHOUSE_MAX_WATCHERS"] = str(IDLE_STREAMS * 2)


def _measure() -> None:
    if _results:
        return
    _stack_env()
    with Stack(["railbarons"], private_redis=True, gateway=True, workers=1) as stack:
        asyncio.run(_run(stack))


def probe(phases: list[tuple[str, float]]) -> list[dict]:
    """The CPU probe: one phase per (path, offered moves/s), fresh tables each, no idle
    streams."""
    _stack_env()
    with Stack(["railbarons"], private_redis=True, gateway=True, workers=1) as stack:
        asyncio.run(_run(stack, phases))
    return list(_probe)


def probe_phases(text: str) -> list[tuple[str, float]]:
    """``ROUNDHOUSE_BENCH_GATEWAY_RATES``: ``100`` (the GET path) or ``events:100``,
    comma-separated."""
    phases = []
    for item in filter(None, (x.strip() for x in text.split(","))):
        path, _, rate = item.rpartition(":")
        phases.append((path or GET, float(rate)))
    return phases


def _bench(key: str, name: str):
    """A benchmark of ``benchmarks.run`` (named ``name``) giving ``_results[key]``."""

    def bench() -> Measurement:
        _measure()
        return _results[key]

    bench.__name__ = bench.__qualname__ = name
    return bench


BENCHMARKS = [
    _bench("move-light", "bench_http_move_p99_light"),
    _bench("turn-light", "bench_your_turn_latency_light"),
    _bench("move-bar", "bench_http_move_p99"),
    _bench("turn-bar", "bench_your_turn_latency"),
    _bench("move-events-light", "bench_http_move_p99_event_moves_light"),
    _bench("turn-events-light", "bench_your_turn_latency_event_moves_light"),
    _bench("move-events-bar", "bench_http_move_p99_event_moves"),
    _bench("turn-events-bar", "bench_your_turn_latency_event_moves"),
    _bench("memory", "bench_idle_stream_memory"),
]


if __name__ == "__main__":
    for phase in probe(probe_phases(os.environ.get(RATES_ENV, "100"))):
        print(json.dumps(phase), flush=True)
