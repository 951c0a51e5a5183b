"""A bot worker whose turns take ``ROUNDHOUSE_TEST_TURN_DELAY_S`` seconds
longer, so a test or a benchmark can kill it mid-turn:
``celery -A tests.integration.slow_worker worker ...``. The delay runs in
``task_prerun`` after the worker's own receivers (the heartbeat has started),
i.e. inside the turn."""

from __future__ import annotations

import os
import time

from celery.signals import task_prerun

from services.bots.celery_app import app  # noqa: F401 - the -A target

DELAY_ENV = "ROUNDHOUSE_TEST_TURN_DELAY_S"


@task_prerun.connect
def _think_slowly(**_: object) -> None:
    time.sleep(float(os.environ.get(DELAY_ENV, "0")))
