"""The fuzz suite in full (issue 13, item 9): 100,000 hypothesis-driven
hostile requests (``ROUNDHOUSE_BENCH_FUZZ`` sets the count), a third each to
the lobby, a rules service and the HTTP gateway, with the checks of
``tests/fuzz/runner.py`` and ``tests/fuzz/gateway.py``: no INTERNAL or UNKNOWN
answer (HTTP: no 5xx), no state change on a refusal. A progress bar shows the
count as it goes. The last ``ROUNDHOUSE_BENCH_FUZZ_TRACED`` (default 2,000)
requests of the lobby's and of the rules service's share are measured by
``tests/fuzz/memory.py``: what the services still hold of them afterwards
must stay under :data:`RETAINED_MB_BAR` (memory that returns to its baseline).
Also the process's resident memory (the in-process lobby and rules service
share it with the client and hypothesis) after the first 1,000 requests and at
the end.

Setup: a private Redis, a fresh SQLite store, the in-process lobby of
``tests/fuzz/targets.py``. The tally (answers by status, the broken checks)
is written to ``$ROUNDHOUSE_BENCH_FUZZ_LOG`` (default
``/tmp/roundhouse-fuzz.json``) every 1,000 requests, so a long run can be
read while it goes.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import subprocess
import tempfile
from pathlib import Path

from rich.progress import Progress

from benchmarks.common import Measurement
from services.cli.launcher import free_port, redis_server_command, wait_for_redis
from services.platform.db import upgrade
from tests.fuzz import gateway, runner
from tests.fuzz.memory import Retained, retained
from tests.fuzz.strategies import requests
from tests.fuzz.targets import LOBBY_SERVICE, RULES_SERVICE, LobbyAndRules, request_classes


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _described(request, outcome, why: str) -> tuple:
    """A broken check as JSON-able text (gRPC outcome, or an HTTP status)."""
    code = getattr(getattr(outcome, "code", None), "name", str(outcome))
    return (request.method, code, getattr(outcome, "reason", ""), why)


def _write(path: str, tallies: dict, rss: dict) -> None:
    out = {
        name: {
            "total": t.total,
            "by_code": dict(t.by_code),
            "broken": [_described(*b) for b in t.broken[:50]],
        }
        for name, t in tallies.items()
    }
    out["rss_mb"] = rss
    Path(path).write_text(json.dumps(out, indent=1))


RETAINED_MB_BAR = 5.0
"""What a service may still hold of its last traced requests (2,000 by
default); the bounded suite's bound is 1 MB for 150."""


@functools.cache
def _fuzz_run() -> tuple[dict, dict, dict[str, Retained], str]:
    """One whole fuzz run (shared by this module's measurements): tallies,
    RSS figures, retained memory per service, and the tally's path."""
    total = int(os.environ.get("ROUNDHOUSE_BENCH_FUZZ", "100000"))
    traced = int(os.environ.get("ROUNDHOUSE_BENCH_FUZZ_TRACED", "2000"))
    log_path = os.environ.get("ROUNDHOUSE_BENCH_FUZZ_LOG", "/tmp/roundhouse-fuzz.json")
    work = tempfile.mkdtemp(prefix="rh-bench-fuzz-")
    port = free_port()
    redis_proc = subprocess.Popen(
        redis_server_command(port, work), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"sqlite+aiosqlite:///{work}/roundhouse.db"
    upgrade(url)
    upgrade(f"sqlite+aiosqlite:///{work}/http.db")
    tallies = {"lobby": runner.Tally(), "rules": runner.Tally(), "http": runner.Tally()}
    rss: dict[str, float] = {}
    memory: dict[str, Retained] = {}
    try:
        wait_for_redis(f"redis://127.0.0.1:{port}/0")
        with LobbyAndRules(url, f"redis://127.0.0.1:{port}/0", "fuzz-bench") as target:
            state, current = [target.snapshot()], ["lobby"]
            with Progress() as progress:
                bar = progress.add_task("fuzzed requests", total=total)
                for name, service, creds in (
                    ("lobby", LOBBY_SERVICE, target.lobby_credentials),
                    ("rules", RULES_SERVICE, target.rules_credentials),
                ):
                    current[0] = name
                    strategy = requests(service, request_classes(service), target.known, creds)

                    def one(request) -> None:
                        runner.check(target, request, tallies[current[0]], state)
                        progress.advance(bar)
                        done = sum(t.total for t in tallies.values())
                        if done == 1000:
                            rss["after_1000"] = round(rss_mb(), 1)
                        if done % 1000 == 0:
                            _write(log_path, tallies, rss)

                    share = total // 3
                    runner.examples(strategy, max(share - traced, 1), one)
                    with retained() as memory[name]:
                        runner.examples(strategy, min(traced, share), one)
                    rss[f"{name}_retained_mb"] = round(memory[name].mb, 2)
                with gateway.Gateway(
                    f"sqlite+aiosqlite:///{work}/http.db",
                    f"redis://127.0.0.1:{port}/0",
                    "fuzz-http",
                ) as http:
                    http_state = [http.snapshot()]

                    def one_http(request) -> None:
                        gateway.check(http, request, tallies["http"], http_state)
                        progress.advance(bar)
                        done = sum(t.total for t in tallies.values())
                        if done % 1000 == 0:
                            _write(log_path, tallies, rss)

                    runner.examples(gateway.http_requests(http), total - 2 * (total // 3), one_http)
            rss["end"] = round(rss_mb(), 1)
            _write(log_path, tallies, rss)
    finally:
        redis_proc.terminate()
        redis_proc.wait(10)
    return tallies, rss, memory, log_path


def fuzz_100k() -> Measurement:
    tallies, rss, _memory, log_path = _fuzz_run()
    failures = sum(
        t.by_code.get("INTERNAL", 0) + t.by_code.get("UNKNOWN", 0) for t in tallies.values()
    ) + sum(n for code, n in tallies["http"].by_code.items() if code >= "500")
    changed = sum(len(t.broken) for t in tallies.values()) - failures
    n = sum(t.total for t in tallies.values())
    codes = dict(sum((t.by_code for t in tallies.values()), collections.Counter()))
    return Measurement(
        "fuzzed requests answered INTERNAL/UNKNOWN",
        failures + changed,
        "bad answers",
        0,
        higher_is_better=False,
        detail=f"{n} requests; refusals that changed state {changed}; codes {codes}; "
        f"RSS MB {rss}; tally in {log_path}",
    )


def fuzz_memory() -> Measurement:
    _tallies, _rss, memory, _path = _fuzz_run()
    worst = max(memory.values(), key=lambda m: m.bytes)
    return Measurement(
        "services' memory kept of their last traced fuzzed requests",
        round(worst.mb, 2),
        "MB",
        RETAINED_MB_BAR,
        higher_is_better=False,
        detail="; ".join(f"{name} {m.describe()}" for name, m in memory.items()),
    )


BENCHMARKS = [fuzz_100k, fuzz_memory]
