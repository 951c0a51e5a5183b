"""Prometheus metrics of a Celery bot worker, on ``ROUNDHOUSE_METRICS_PORT``.

The worker runs its tasks in forked pool processes, so the metrics use
prometheus_client's multiprocess mode: every process writes its samples to
files in ``PROMETHEUS_MULTIPROC_DIR`` and the worker's main process serves
their sum. The directory is the environment's ``PROMETHEUS_MULTIPROC_DIR``
if set (emptied at start), else a private temporary one removed at shutdown.

Metrics:

* ``roundhouse_bot_tasks_total{task, state, outcome}``: tasks done; ``state``
  is ``success``, ``failure`` or ``retry``; ``outcome`` is what a successful
  task returned (``play_turn``: ``moved``, ``stale`` or ``refused``), else ``""``.
* ``roundhouse_bot_task_seconds{task}``: task durations in seconds (histogram).

:func:`start` runs from the ``worker_init`` signal, before the pool forks and
before anything imports prometheus_client in the worker (its value class is
chosen at import: afterwards it would be too late for multiprocess mode).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from services.platform.logging import get_logger
from services.platform.settings import CommonSettings

log = get_logger("bots")

ENV = "PROMETHEUS_MULTIPROC_DIR"

_tasks: Any = None  # Counter, once started
_seconds: Any = None  # Histogram, once started
_started: dict[str, float] = {}  # task id -> perf_counter at prerun (per process)
_own_dir: str | None = None


def start(settings: CommonSettings) -> None:
    """Serve the worker's metrics on ``settings.metrics_port`` (0: do nothing).

    Raises:
        MetricsPortInUse: the port cannot be bound.
        RuntimeError: prometheus_client was imported before (a programming error:
            multiprocess mode could not take effect).
    """
    global _tasks, _seconds, _own_dir
    if not settings.metrics_port:
        return
    if "prometheus_client" in sys.modules:
        raise RuntimeError(
            "prometheus_client was imported before the worker's metrics were set up; "
            "its multiprocess mode needs PROMETHEUS_MULTIPROC_DIR set first"
        )
    directory = os.environ.get(ENV)
    if directory:
        for stale in Path(directory).glob("*.db"):  # samples of an earlier run
            stale.unlink()
    else:
        directory = _own_dir = tempfile.mkdtemp(prefix="roundhouse-worker-metrics-")
        os.environ[ENV] = directory

    from prometheus_client import CollectorRegistry, Counter, Histogram, multiprocess

    from services.platform.metrics import serve_metrics

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    serve_metrics(settings.metrics_port, settings.bind_host, registry)
    _tasks = Counter("roundhouse_bot_tasks_total", "Bot tasks done", ["task", "state", "outcome"])
    _seconds = Histogram(
        "roundhouse_bot_task_seconds",
        "Bot task duration",
        ["task"],
        buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
    )
    log.info("serving worker metrics", port=settings.metrics_port, directory=directory)


def task_started(task_id: str) -> None:
    """``task_prerun``: remember when the task started (in its pool process)."""
    if _tasks is not None:
        _started[task_id] = time.perf_counter()


def task_done(task_id: str, task_name: str, state: str | None, retval: object) -> None:
    """``task_postrun``: count the task by state and outcome, observe its duration."""
    if _tasks is None:
        return
    began = _started.pop(task_id, None)
    state = (state or "").lower()
    outcome = retval if state == "success" and isinstance(retval, str) else ""
    _tasks.labels(task_name, state, outcome).inc()
    if began is not None:
        _seconds.labels(task_name).observe(time.perf_counter() - began)


def stop() -> None:
    """``worker_shutdown``: remove the private sample directory, if one was made."""
    if _own_dir:
        shutil.rmtree(_own_dir, ignore_errors=True)
