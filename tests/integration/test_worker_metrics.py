"""The Celery bot worker serves Prometheus metrics on its metrics port: tasks
done by state and outcome, and their durations, summed over its pool
processes (services/bots/worker_metrics.py). A real worker on its own queue,
against the session stack's rules services."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from celery import Celery
from prometheus_client.parser import text_string_to_metric_families

from services.bots.celery_app import bot_queue
from services.cli.launcher import Stack, free_port

pytestmark = pytest.mark.integration

TASK = "roundhouse.bots.play_turn"


def _samples(port: int) -> dict[tuple[str, tuple], float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_the_worker_counts_and_times_its_tasks(stack, tmp_path):
    mine = Stack([], redis_url=stack.redis_url, run_dir=tmp_path, workers=2)
    port = free_port()
    ready = tmp_path / "worker.ready"
    broker = Celery(broker=stack.redis_url)
    try:
        mine.spawn(
            "worker",
            mine.worker_argv(),
            extra_env={
                "ROUNDHOUSE_METRICS_PORT": str(port),
                "ROUNDHOUSE_WORKER_READY_FILE": str(ready),
                "ROUNDHOUSE_RULES_ADDRESSES": json.dumps(stack.rules_addresses),
                # the rules services answer only callers with their stack's secret
                "ROUNDHOUSE_INTERNAL_SECRET": stack.internal_secret,
            },
        )
        mine.wait_for_file(ready, "the metrics worker")
        queue = bot_queue(mine.prefix)
        for n in range(3):  # no such game: the task ends "stale"
            broker.send_task(TASK, args=["railbarons", f"nope-{n}", 0, 0, "random"], queue=queue)
        broker.send_task(TASK, args=["no-such-title", "g", 0, 0, "random"], queue=queue)  # fails
        stale = (
            "roundhouse_bot_tasks_total",
            (("outcome", "stale"), ("state", "success"), ("task", TASK)),
        )
        failed = (
            "roundhouse_bot_tasks_total",
            (("outcome", ""), ("state", "failure"), ("task", TASK)),
        )
        count = ("roundhouse_bot_task_seconds_count", (("task", TASK),))
        deadline = time.monotonic() + 60
        while True:
            samples = _samples(port)
            if samples.get(stale) == 3 and samples.get(failed) == 1 and samples.get(count) == 4:
                break
            assert time.monotonic() < deadline, f"metrics never showed the tasks: {samples}"
            time.sleep(0.2)
        assert samples[("roundhouse_bot_task_seconds_sum", (("task", TASK),))] > 0
    finally:
        broker.close()
        mine.stop()
