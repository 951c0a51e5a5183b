"""The import of a recorded 1894 game over HTTP (issue 29, "Numbers": <= 1 s p50).

One stack of real processes (a private Redis, the embedded SQLite store, the 1894 rules
service, accounts, the lobby, the archiver and the other services, one gateway). A signed-in
account posts the largest shared recorded game (``tests/fixtures/e1894/green_city_upgrades.json``,
172 KB, 1,150 recorded actions) to ``POST /api/e1894/imports`` again and again, one at a time:
each is parsed by the gateway, replayed with every check on by the rules service (routes
recomputed), stored (stream, creation record), made a finished table by the lobby and archived.
Timed from the request to the answer; 3 warm-up imports are not counted.

Beside it, the peer: the same game straight to the rules service's
``Interchange/ImportGame`` over gRPC (internal credentials: no gateway, no lobby, no table),
so the ratio says what the path to the platform adds to the replay itself.

Run: ``python -m benchmarks.run bench_e1894_import`` (``ROUNDHOUSE_BENCH_IMPORTS``: imports
timed, default 30).
"""

from __future__ import annotations

import json
import os
import statistics
import time
import uuid
from pathlib import Path
from unittest import mock

import grpc
import httpx

from benchmarks.common import Measurement
from roundhouse.v1 import e1894_interchange_pb2 as ipb
from roundhouse.v1 import e1894_interchange_pb2_grpc as ipb_grpc
from services.cli.launcher import Stack
from services.platform.auth import internal

GAME = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "fixtures"
    / "e1894"
    / "green_city_upgrades.json"
)
IMPORTS = int(os.environ.get("ROUNDHOUSE_BENCH_IMPORTS", "30"))
WARMUP = 3
QUOTAS = {
    "ROUNDHOUSE_TABLES_PER_ACCOUNT": "100000",
    "ROUNDHOUSE_TABLES_CREATED_PER_ACCOUNT": "100000/minute",
}
"""One account imports far faster than a person: the table quotas are lifted."""


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _timed(label: str, n: int, once) -> list[float]:
    out = []
    for i in range(WARMUP + n):
        start = time.perf_counter()
        once()
        if i >= WARMUP:
            out.append((time.perf_counter() - start) * 1000)
        if (i + 1) % 10 == 0 or i + 1 == WARMUP + n:
            print(f"  {label}: {i + 1}/{WARMUP + n}", flush=True)
    return out


def measure() -> dict[str, list[float]]:
    """Milliseconds per import: ``http`` (the platform path) and ``grpc`` (the peer)."""
    text = GAME.read_text()
    body = json.dumps({"game": json.loads(text)})
    with mock.patch.dict(os.environ, QUOTAS):  # the Stack passes its environment on
        with Stack(["e1894"], private_redis=True, gateway=True, workers=1) as stack:
            with httpx.Client(base_url=f"http://{stack.gateway_address}", timeout=60) as http:
                name, password = f"bench-{uuid.uuid4().hex[:6]}", "bench import password"
                http.post("/api/accounts", json={"username": name, "password": password})
                token = http.post(
                    "/api/tokens",
                    json={"username": name, "password": password, "scopes": ["tables:write"]},
                ).json()["token"]
                headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

                def over_http() -> None:
                    r = http.post("/api/e1894/imports", content=body, headers=headers)
                    assert r.status_code == 201, r.text

                times = {"http": _timed("HTTP imports", IMPORTS, over_http)}
            with grpc.insecure_channel(
                stack.rules_addresses["e1894"],
                options=[("grpc.max_send_message_length", 4 * 1024 * 1024)],
            ) as channel:
                stub = ipb_grpc.InterchangeStub(channel)
                md = internal(stack.internal_secret, "bench")

                def over_grpc() -> None:
                    stub.ImportGame(ipb.ImportGameRequest(game_json=text), metadata=md)

                times["grpc"] = _timed("gRPC imports (peer)", IMPORTS, over_grpc)
    return times


def bench_e1894_import_over_http() -> Measurement:
    times = measure()
    http, peer = times["http"], times["grpc"]
    p50, peer_p50 = statistics.median(http), statistics.median(peer)
    return Measurement(
        "1894: import of the largest recorded game over HTTP, p50",
        p50,
        "ms",
        1000.0,
        higher_is_better=False,
        detail=(
            f"{len(http)} imports of {GAME.name} ({GAME.stat().st_size // 1000} KB): p50 "
            f"{p50:.0f} ms, p99 {_p(http, 0.99):.0f} ms; the peer, ImportGame straight to the "
            f"rules service over gRPC: p50 {peer_p50:.0f} ms, p99 {_p(peer, 0.99):.0f} ms; "
            f"ratio HTTP/peer {p50 / peer_p50:.2f}"
        ),
    )


BENCHMARKS = [bench_e1894_import_over_http]

if __name__ == "__main__":
    print(bench_e1894_import_over_http())
