"""The supervisor (``services/cli/supervisor.py``): a process killed with ``kill -9`` is
started again and counted; one that keeps crashing is restarted with growing delays
(tenacity's exponential backoff), not in a hot loop; each exit and restart is logged."""

from __future__ import annotations

import os
import signal
import sys

import pytest
from structlog.testing import capture_logs
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_fixed

from services.cli.launcher import Stack
from services.cli.supervisor import BACKOFF, RUNNING, Supervisor, backoff_s, default_wait


def _until(predicate, timeout_s: float = 60):
    """Poll ``predicate`` until it is true (AssertionError after ``timeout_s``)."""
    try:
        return Retrying(
            stop=stop_after_delay(timeout_s),
            wait=wait_fixed(0.05),
            retry=retry_if_result(lambda ok: not ok),
        )(predicate)
    except Exception as exc:
        raise AssertionError(f"never true: {predicate}") from exc


def _row(sup: Supervisor, name: str) -> dict:
    return next(r for r in sup.status() if r["name"] == name)


def test_the_backoff_doubles_from_half_a_second_up_to_thirty():
    wait = default_wait()
    assert [backoff_s(wait, n) for n in range(1, 9)] == [0.5, 1, 2, 4, 8, 16, 30, 30]


@pytest.fixture
def stack(tmp_path):
    stack = Stack(["railbarons"], run_dir=tmp_path)
    yield stack
    stack.stop(timeout=5)


def test_a_killed_process_is_started_again_and_a_crashing_one_backs_off(stack):
    sleeper = stack.spawn("sleeper", [sys.executable, "-c", "import time; time.sleep(600)"])
    stack.spawn("crasher", [sys.executable, "-c", "import sys; sys.exit(3)"])
    sup = Supervisor(stack, watch=lambda name: True, every_s=0.02)
    with capture_logs() as logs:
        sup.start()
        try:
            os.kill(sleeper.popen.pid, signal.SIGKILL)
            _until(lambda: _row(sup, "sleeper")["restarts"] == 1)
            _until(lambda: _row(sup, "crasher")["restarts"] >= 4)
        finally:
            sup.stop()
    row = _row(sup, "sleeper")
    assert row["state"] == RUNNING and row["last_exit"] == -9
    assert row["pid"] != sleeper.popen.pid
    assert [p.name for p in stack.procs].count("sleeper") == 1  # replaced, not added
    assert next(p for p in stack.procs if p.name == "sleeper").popen.poll() is None

    crasher = sup.children["crasher"]
    assert _row(sup, "crasher")["last_exit"] == 3
    # restart k+1 waited at least the (k+1)-th delay: 1 s, 2 s, 4 s...; no hot loop
    gaps = [b - a for a, b in zip(crasher.starts, crasher.starts[1:], strict=False)]
    assert len(gaps) >= 3
    for k, gap in enumerate(gaps, start=2):
        assert gap >= backoff_s(sup.wait, k) - 0.01, (k, gaps)
    assert crasher.backoff_s >= 4
    assert _row(sup, "crasher")["state"] in (RUNNING, BACKOFF)

    exited = [e for e in logs if e["event"] == "process_exited"]
    restarted = [e for e in logs if e["event"] == "process_restarted"]
    assert {"process": "sleeper", "exit_status": -9} in [
        {"process": e["process"], "exit_status": e["exit_status"]} for e in exited
    ]
    assert sum(e["process"] == "crasher" for e in restarted) == crasher.restarts
    assert all(e["log_level"] == "warning" for e in exited + restarted)


def test_an_unwatched_process_that_exits_is_left_stopped(stack):
    stack.spawn("once", [sys.executable, "-c", "pass"])
    sup = Supervisor(stack, watch=lambda name: name != "once", every_s=0.02)
    sup.start()
    try:
        _until(lambda: _row(sup, "once")["state"] == "stopped")
        sup.tick()
    finally:
        sup.stop()
    assert _row(sup, "once")["restarts"] == 0
