"""What answering only the platform's own callers costs a call to a rules service
(issue 33, item 5; docs/deploy.md, "Who may call the rules services").

* ``rules_credentials_p99_added``: two grpc.aio servers in this process serve the same
  trivial unary method over loopback, one behind the rules services' ``internal_only``
  interceptor (``services/rules/serve.py``), one with no auth. The first is called through a
  rules channel (``services/platform/channels.py``: its client interceptor adds the internal
  credentials to each call), the second through a plain channel with the same channel
  options. Calls alternate between them in blocks of 50, so both see the same machine load;
  the figure is p99(credentials) - p99(none), the detail the p50s.

Run: ``python -m benchmarks.run bench_rules_credentials``.
"""

from __future__ import annotations

import asyncio
import statistics
import time

import grpc

from benchmarks.common import Measurement
from services.platform.auth import internal
from services.platform.channels import RULES_CHANNEL_OPTIONS, rules_aio_channel
from services.platform.grpc_errors import ErrorMapping
from services.rules.serve import internal_only

CALLS = 4000
BLOCK = 50
METHOD = "/bench.Probe/Echo"
SECRET = "bench-rules-credentials-secret"


async def _echo(request, context):
    return request


async def _server(interceptors) -> tuple[grpc.aio.Server, str]:
    ident = lambda b: b  # noqa: E731 - raw bytes
    handler = grpc.method_handlers_generic_handler(
        "bench.Probe", {"Echo": grpc.unary_unary_rpc_method_handler(_echo, ident, ident)}
    )
    server = grpc.aio.server(interceptors=interceptors)
    server.add_generic_rpc_handlers([handler])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=1000)[int(q * 1000) - 1]


async def _compare() -> dict[str, list[float]]:
    guarded, a_addr = await _server([ErrorMapping(), internal_only(SECRET)])
    open_, b_addr = await _server([ErrorMapping()])
    channels = {
        "creds": rules_aio_channel(a_addr, internal(SECRET, "bench")),
        "none": grpc.aio.insecure_channel(b_addr, options=RULES_CHANNEL_OPTIONS),
    }
    calls = {k: ch.unary_unary(METHOD) for k, ch in channels.items()}
    samples: dict[str, list[float]] = {"creds": [], "none": []}
    for _ in range(200):  # warm-up (connections)
        for call in calls.values():
            await call(b"x")
    for block in range(CALLS // BLOCK):
        order = ("creds", "none") if block % 2 == 0 else ("none", "creds")
        for k in order:
            for _ in range(BLOCK):
                t0 = time.perf_counter()
                await calls[k](b"x")
                samples[k].append((time.perf_counter() - t0) * 1000)
    for ch in channels.values():
        await ch.close()
    await guarded.stop(None)
    await open_.stop(None)
    return samples


def rules_credentials_p99_added() -> Measurement:
    samples = asyncio.run(_compare())
    a, b = samples["creds"], samples["none"]
    return Measurement(
        "rules services: p99 added per call by the internal credentials (both ends)",
        _p(a, 0.99) - _p(b, 0.99),
        "ms",
        1.0,
        higher_is_better=False,
        detail=(
            f"with p50 {_p(a, 0.5):.2f} / p99 {_p(a, 0.99):.2f} ms, without p50 "
            f"{_p(b, 0.5):.2f} / p99 {_p(b, 0.99):.2f} ms, {len(a)} calls each, interleaved"
        ),
    )


BENCHMARKS = [rules_credentials_p99_added]
