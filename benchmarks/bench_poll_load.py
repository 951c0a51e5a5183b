"""50 clients polling and streaming through the HTTP gateway (issue 33, item 6).

The stack of ``roundhouse up`` (every title's rules service, the lobby, accounts, the
dispatcher, the archiver, the tournament service, the clock keeper, two Celery bot workers and
the gateway, on a private Redis and the embedded SQLite store), with :data:`TABLES` running
two-seat Chicago Express tables whose :data:`CLIENTS` seats are held by the clients, one
account each (made as ``bench_gateway`` makes its tables). Every client does what a web page
or an SDK client does, all at once:

* holds two NDJSON streams open, its table's (``/api/tables/{id}/stream``) and its account's
  (``/api/stream/events?moves=true``), read to the end;
* plays its seat: on each current ``yourTurn`` it waits :data:`THINK_S` and posts the first
  of the moves the event carried (``POST /api/tables/{id}/moves``, route ``move``);
* polls on a fixed schedule, :data:`RATE` requests/s over all clients (open loop, clients
  evenly phased, at most one poll of a client in flight: a client that falls behind drops
  the ticks it missed, counted), cycling through :data:`POLLS`: the table
  (``GET /api/tables/{id}``), its seat's view (``.../view``), its moves (``.../moves``) and
  the running tables (``GET /api/tables?status=running``).

Figures over the timed window (after :data:`WARMUP_S`): requests/s answered (polls and moves;
streams not counted), p50/p99 per route and over all, and the CPU of every process (cores:
CPU seconds per second; and ms per request), the load generator's (this process, aiohttp)
apart. Bars (issue 33): >= 300 requests/s with p99 <= 100 ms.

Run: ``python -m benchmarks.run bench_poll_load``. The probe (side by side,
``benchmarks/gateway_side_by_side.py`` with ``ROUNDHOUSE_BENCH_PROBE=bench_poll_load``):
``python -m benchmarks.bench_poll_load`` prints the figures as one JSON line. Options
(environment): ``ROUNDHOUSE_BENCH_POLL_RATE`` (requests/s offered, default 300),
``ROUNDHOUSE_BENCH_SECONDS`` (timed seconds, default 20).

Side by side (two trees, e.g. ``git archive <commit> | tar -x -C /tmp/before``; each probe
starts its own stack from its tree, rounds alternating the order, medians printed)::

    ROUNDHOUSE_BENCH_ROUNDS=2 .venv/bin/python -m benchmarks.bench_poll_load /tmp/before .
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import httpx
import psutil

from benchmarks.bench_gateway import _cpu_s, _table, p99
from benchmarks.common import Measurement
from benchmarks.gateway_side_by_side import _gen
from services.accounts.store import AccountStore
from services.cli.launcher import Stack
from services.platform.db import create_engine, session_factory
from services.platform.server import freeze_heap
from services.platform.settings import StoreSettings
from services.rules.titles import TITLE_MODULES

CLIENTS = 50
TABLES = CLIENTS // 2
RATE = float(os.environ.get("ROUNDHOUSE_BENCH_POLL_RATE", "300"))
"""Polls per second offered over all clients (the bar: 300 requests/s answered)."""
SECONDS = float(os.environ.get("ROUNDHOUSE_BENCH_SECONDS", "20"))
WARMUP_S = 4.0
THINK_S = 0.5
"""A client's pause between its ``yourTurn`` and its move (a person's, short)."""
RATE_BAR = 300.0
P99_BAR_MS = 100.0
LOAD_GENERATOR = "load generator"
POLLS = ("table", "view", "moves", "table", "view", "list")
"""The routes one client polls, in turn (the table and its view most: what a page refreshes)."""


def _path(route: str, table_id: str) -> str:
    return {
        "table": f"/api/tables/{table_id}",
        "view": f"/api/tables/{table_id}/view",
        "moves": f"/api/tables/{table_id}/moves",
        "list": "/api/tables?status=running",
    }[route]


class Run:
    """What the clients saw: per route the latencies (ms) of answers in the timed window,
    the errors (status and a little of the body) and the ticks dropped."""

    def __init__(self, timed_from: float, timed_to: float) -> None:
        self.timed_from, self.timed_to = timed_from, timed_to
        self.ms: dict[str, list[float]] = {}
        self.errors: list[str] = []
        self.missed = 0
        self.stream_lines = 0

    def record(self, route: str, t0: float, status: int, body: bytes) -> None:
        took = time.perf_counter() - t0
        if status >= 400:
            self.errors.append(f"{route} {status} {body[:120]!r}")
        elif self.timed_from <= t0 and t0 + took <= self.timed_to:
            self.ms.setdefault(route, []).append(took * 1000)


async def _poll(http, tid: str, headers: dict, phase: float, start: float, end: float, run: Run):
    period = CLIENTS / RATE
    tick = start + phase
    i = 0
    while tick < end:
        await asyncio.sleep(max(0.0, tick - time.perf_counter()))
        route = POLLS[i % len(POLLS)]
        i += 1
        t0 = time.perf_counter()
        async with http.get(_path(route, tid), headers=headers) as r:
            body = await r.read()
        run.record(route, t0, r.status, body)
        tick += period
        while tick < time.perf_counter() - period:  # fell behind: drop the ticks missed
            tick += period
            run.missed += 1


async def _play(http, tid: str, headers: dict, end: float, run: Run) -> None:
    """The client's seat: the event stream; on each current yourTurn of its table, a move."""
    async with http.get("/api/stream/events?moves=true", headers=headers) as r:
        async for line in r.content:
            if time.perf_counter() >= end:
                return
            if not line.strip():
                continue
            run.stream_lines += 1
            event = json.loads(line)
            if event["type"] != "yourTurn" or event["table_id"] != tid or not event.get("moves"):
                continue
            await asyncio.sleep(THINK_S)
            body = {
                "action": event["moves"][0]["action"],
                "expected_version": event["version"],
                "idempotency_key": f"{tid}-{event['version']}",
            }
            t0 = time.perf_counter()
            async with http.post(f"/api/tables/{tid}/moves", json=body, headers=headers) as m:
                answer = await m.read()
            if m.status != 409:  # a turn another event overtook: not the server's fault
                run.record("move", t0, m.status, answer)


async def _watch(http, tid: str, headers: dict, end: float, run: Run) -> None:
    """The client's table stream, read until the game ends or the run does."""
    async with http.get(f"/api/tables/{tid}/stream", headers=headers) as r:
        async for line in r.content:
            if time.perf_counter() >= end:
                return
            run.stream_lines += bool(line.strip())


def _summary(run: Run, cpu: dict[str, float], seconds: float) -> dict:
    every = [x for v in run.ms.values() for x in v]
    answered = len(every)
    stack = {k: v for k, v in cpu.items() if k != LOAD_GENERATOR}
    return {
        "offered_polls_per_s": RATE,
        "requests_per_s": round(answered / seconds, 1),
        "p50_ms": round(statistics.median(every), 2) if every else None,
        "p99_ms": round(p99(every), 2) if every else None,
        "routes": {
            route: {
                "n": len(v),
                "p50_ms": round(statistics.median(v), 2),
                "p99_ms": round(p99(v), 2),
            }
            for route, v in sorted(run.ms.items())
        },
        "errors": len(run.errors),
        "error_samples": run.errors[:5],
        "missed_ticks": run.missed,
        "stream_lines": run.stream_lines,
        "cores": {k: round(v / seconds, 3) for k, v in sorted(cpu.items())},
        "stack_cores": round(sum(stack.values()) / seconds, 3),
        "cpu_ms_per_request": {k: round(1000 * v / max(answered, 1), 3) for k, v in cpu.items()},
        "stack_cpu_ms_per_request": round(1000 * sum(stack.values()) / max(answered, 1), 3),
    }


async def _load(stack: Stack) -> dict:
    base = f"http://{stack.gateway_address}"
    procs = {p.name: psutil.Process(p.popen.pid) for p in stack.procs}
    procs[LOAD_GENERATOR] = psutil.Process()
    engine = create_engine(stack.database_url, StoreSettings())
    store = AccountStore(session_factory(engine))
    async with httpx.AsyncClient(base_url=base, timeout=60) as setup:
        tables = [await _table(setup, store, i) for i in range(TABLES)]
    await engine.dispose()
    clients = [(tid, h) for tid, seats in tables for h in seats]
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=60)
    async with aiohttp.ClientSession(base, connector=connector, timeout=timeout) as http:
        freeze_heap()  # the load generator's own full collections would add to the tail
        start = time.perf_counter() + 1.0
        timed_from = start + WARMUP_S
        end = timed_from + SECONDS
        run = Run(timed_from, end)
        streams = [
            asyncio.create_task(task(http, tid, h, end, run))
            for tid, h in clients
            for task in (_play, _watch)
        ]

        async def window() -> tuple[dict, dict]:
            await asyncio.sleep(max(0.0, timed_from - time.perf_counter()))
            before = _cpu_s(procs)
            await asyncio.sleep(max(0.0, end - time.perf_counter()))
            return before, _cpu_s(procs)

        timing = asyncio.create_task(window())
        period = CLIENTS / RATE
        await asyncio.gather(
            *(
                _poll(http, tid, h, period * i / CLIENTS, start, end, run)
                for i, (tid, h) in enumerate(clients)
            )
        )
        before, after = await timing
        for task in streams:
            task.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
    cpu = {name: after[name] - before.get(name, 0.0) for name in after}
    return _summary(run, cpu, SECONDS)


def probe() -> dict:
    """One run on a fresh stack of ``roundhouse up``'s processes; :func:`_summary`'s dict."""
    os.environ.setdefault("ROUNDHOUSE_GATEWAY_STREAMS_PER_TOKEN", "8")
    with Stack(sorted(TITLE_MODULES), private_redis=True, gateway=True) as stack:
        return asyncio.run(_load(stack))


_results: dict = {}


def _measured() -> dict:
    if not _results:
        _results.update(probe())
    return _results


def _routes_text(r: dict) -> str:
    routes = ", ".join(
        f"{name} {x['p50_ms']:.1f}/{x['p99_ms']:.1f}" for name, x in r["routes"].items()
    )
    cores = {k: v for k, v in r["cores"].items() if k != LOAD_GENERATOR}
    top = ", ".join(f"{k} {v:.2f}" for k, v in sorted(cores.items(), key=lambda kv: -kv[1])[:6])
    return (
        f"p50/p99 ms per route: {routes}; {r['errors']} errors, {r['missed_ticks']} ticks "
        f"missed; cores: {top}; stack {r['stack_cores']:.2f}, load generator "
        f"{r['cores'].get(LOAD_GENERATOR, 0):.2f}"
    )


def bench_poll_requests_per_s() -> Measurement:
    r = _measured()
    return Measurement(
        f"{CLIENTS} clients polling and streaming, requests/s answered ({RATE:.0f} polls/s "
        "offered, moves on top)",
        r["requests_per_s"],
        "req/s",
        RATE_BAR,
        detail=_routes_text(r),
    )


def bench_poll_p99() -> Measurement:
    r = _measured()
    return Measurement(
        f"{CLIENTS} clients polling and streaming, p99 over every route",
        r["p99_ms"] or 0.0,
        "ms",
        P99_BAR_MS,
        higher_is_better=False,
        detail=f"p50 {r['p50_ms']} ms at {r['requests_per_s']} req/s",
    )


BENCHMARKS = [bench_poll_requests_per_s, bench_poll_p99]


def side_by_side(trees: list[Path], rounds: int) -> None:
    """The probe on each tree in turn (``benchmarks/gateway_side_by_side.py``'s way: this
    file run with the tree's code), ``rounds`` rounds alternating the order; the medians."""
    runs: dict[Path, list[dict]] = {t: [] for t in trees}
    for n in range(rounds):
        for tree in trees if n % 2 == 0 else trees[::-1]:
            env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{_gen(tree)}"}
            out = subprocess.run(
                [sys.executable, __file__], cwd=tree, env=env, capture_output=True, text=True
            )
            if out.returncode:
                raise RuntimeError(f"the probe on {tree} failed: {out.stderr[-2000:]}")
            r = json.loads(out.stdout.strip().splitlines()[-1])
            runs[tree].append(r)
            print(
                f"round {n + 1} {tree}: {r['requests_per_s']} req/s, p50 {r['p50_ms']} ms, "
                f"p99 {r['p99_ms']} ms, stack {r['stack_cpu_ms_per_request']} ms/request "
                f"(load {os.getloadavg()[0]:.1f}, {time.strftime('%H:%M:%S')})",
                flush=True,
            )
    rows = {
        "requests/s": lambda r: r["requests_per_s"],
        "p50 ms": lambda r: r["p50_ms"],
        "p99 ms": lambda r: r["p99_ms"],
        "stack CPU ms/request": lambda r: r["stack_cpu_ms_per_request"],
        **{
            f"{k} CPU ms/request": (lambda r, k=k: r["cpu_ms_per_request"].get(k, 0.0))
            for k in ("lobby", "gateway", "rules-railbarons", "redis", LOAD_GENERATOR)
        },
    }
    print(f"\nmedians of {rounds} rounds")
    for name, pick in rows.items():
        cells = "".join(f"{statistics.median(pick(r) for r in runs[t]):>14.2f}" for t in trees)
        print(f"{name:<34}{cells}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        rounds = int(os.environ.get("ROUNDHOUSE_BENCH_ROUNDS", "2"))
        side_by_side([Path(a).resolve() for a in sys.argv[1:]], rounds)
    else:
        print(json.dumps(probe()), flush=True)
