"""Token auth cost (accounts issue, "Numbers"): what the auth interceptor adds
to a call on the verified-token path.

* ``auth_p99_added``: two gRPC servers in this process serve the same trivial
  unary method, one with ``ErrorMapping`` + ``AuthInterceptor`` (every call
  carries a valid bearer token), one with ``ErrorMapping`` only. Calls
  alternate between them in blocks of 50 over loopback, so both see the same
  machine load; the figure is p99(with auth) - p99(without). The token is
  verified once against the store and then served from the in-process cache
  (``ROUNDHOUSE_TOKEN_CACHE_SECONDS``, 5 s), as in production.
  The detail also gives the same comparison with the cache off (one lookup
  per call in the embedded SQLite store), for reference: no bar.
* ``authenticate_cached``: ``AuthInterceptor.authenticate`` alone, microseconds.

This is the building block for the lobby's bar ("auth adds at most 1 ms to the
p99 of a move through the lobby, side by side with and without auth in one
run"): the lobby benchmark runs the same comparison on SubmitMove once the lobby
uses the interceptor.

Run: ``python -m benchmarks.run bench_auth``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import grpc

from benchmarks.common import Measurement
from services.accounts.store import AccountStore
from services.accounts.verifier import StoreVerifier
from services.platform.auth import AuthInterceptor, bearer
from services.platform.db import create_engine, session_factory, upgrade
from services.platform.grpc_errors import ErrorMapping

CALLS = 4000
BLOCK = 50
METHOD = "/bench.Probe/Echo"


async def _echo(request, context):
    return request


def _handler():
    ident = lambda b: b  # noqa: E731 - raw bytes
    return grpc.method_handlers_generic_handler(
        "bench.Probe", {"Echo": grpc.unary_unary_rpc_method_handler(_echo, ident, ident)}
    )


async def _server(interceptors) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server(interceptors=interceptors)
    server.add_generic_rpc_handlers([_handler()])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=1000)[int(q * 1000) - 1]


async def _compare(cache_seconds: float) -> tuple[dict[str, list[float]], float]:
    folder = Path(tempfile.mkdtemp(prefix="rh-bench-auth-"))
    url = f"sqlite+aiosqlite:///{folder / 'roundhouse.db'}"
    await asyncio.to_thread(upgrade, url)
    engine = create_engine(url)
    store = AccountStore(session_factory(engine))
    account = await store.create_account("bench", None)
    token, _ = await store.create_token(account, ["play"], 0, "bench")
    verifier = StoreVerifier(store, cache_seconds)
    interceptor = AuthInterceptor(verifier, anonymous=frozenset())
    with_auth, a_addr = await _server([ErrorMapping(), interceptor])
    without, b_addr = await _server([ErrorMapping()])
    channels = {
        "auth": grpc.aio.insecure_channel(a_addr),
        "none": grpc.aio.insecure_channel(b_addr),
    }
    calls = {k: ch.unary_unary(METHOD) for k, ch in channels.items()}
    meta = {"auth": bearer(token), "none": ()}
    samples: dict[str, list[float]] = {"auth": [], "none": []}
    for _ in range(200):  # warm-up (connections, caches)
        for k in calls:
            await calls[k](b"x", metadata=meta[k])
    for block in range(CALLS // BLOCK):
        order = ("auth", "none") if block % 2 == 0 else ("none", "auth")
        for k in order:
            for _ in range(BLOCK):
                t0 = time.perf_counter()
                await calls[k](b"x", metadata=meta[k])
                samples[k].append((time.perf_counter() - t0) * 1000)
    # the interceptor's own work, without the transport
    n = 20_000
    md = bearer(token)
    t0 = time.perf_counter()
    for _ in range(n):
        await interceptor.authenticate(METHOD, md)
    direct_us = (time.perf_counter() - t0) / n * 1e6
    for ch in channels.values():
        await ch.close()
    await with_auth.stop(None)
    await without.stop(None)
    await engine.dispose()
    return samples, direct_us


def _describe(samples) -> str:
    a, b = samples["auth"], samples["none"]
    return (
        f"with auth p50 {_p(a, 0.5):.2f} / p99 {_p(a, 0.99):.2f} ms, without p50 "
        f"{_p(b, 0.5):.2f} / p99 {_p(b, 0.99):.2f} ms, {len(a)} calls each, interleaved"
    )


_RUNS: dict[float, tuple[dict[str, list[float]], float]] = {}


def _run(cache_seconds: float):
    if cache_seconds not in _RUNS:
        _RUNS[cache_seconds] = asyncio.run(_compare(cache_seconds))
    return _RUNS[cache_seconds]


def auth_p99_added() -> Measurement:
    samples, _ = _run(5.0)
    uncached, _ = _run(0.0)
    worst = _p(uncached["auth"], 0.99) - _p(uncached["none"], 0.99)
    added = _p(samples["auth"], 0.99) - _p(samples["none"], 0.99)
    return Measurement(
        "token auth: p99 added per call (cached verified token)",
        added,
        "ms",
        1.0,
        higher_is_better=False,
        detail=f"{_describe(samples)}; cache off (a SQLite lookup per call): +{worst:.1f} ms",
    )


def authenticate_cached() -> Measurement:
    _, direct_us = _run(5.0)
    return Measurement(
        "AuthInterceptor.authenticate, cached token",
        direct_us,
        "µs",
        100.0,
        higher_is_better=False,
        detail="header parse, SHA-256, cache hit, expiry check",
    )


BENCHMARKS = [auth_p99_added, authenticate_cached]
