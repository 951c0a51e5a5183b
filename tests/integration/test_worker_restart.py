"""``Stack(restart_workers=True)``: a Celery worker that exits is started again, as a
Kubernetes Deployment would (the fault benchmark relies on it: the worker exits when its
Redis broker dies under it), and the restart is counted with its exit status."""

from __future__ import annotations

import os
import signal
import time

import pytest

from services.cli.launcher import Stack

pytestmark = pytest.mark.integration


def test_a_worker_that_exits_is_started_again_and_counted(tmp_path):
    with Stack(
        ["railbarons"], private_redis=True, workers=1, run_dir=tmp_path, restart_workers=True
    ) as stack:
        first = next(p for p in stack.procs if p.name == "worker")
        ready = tmp_path / "worker.ready"
        ready.unlink()
        os.killpg(first.popen.pid, signal.SIGKILL)
        stack.wait_for_file(ready, "the restarted worker", timeout=90)
        again = next(p for p in stack.procs if p.name == "worker")
        assert again.popen.pid != first.popen.pid and again.popen.poll() is None
        assert stack.restarts == [("worker", -9)]
        stack.check_alive()  # the restarted stack is whole
        time.sleep(1.5)  # one more look of the watchdog: a running worker is left alone
        assert stack.restarts == [("worker", -9)]
    without = Stack(["railbarons"], private_redis=True, workers=1, run_dir=tmp_path / "b")
    assert not without.restart_workers and without.restarts == []
