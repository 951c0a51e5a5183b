"""The Celery worker lives through its Redis broker being killed (issue 33, item 2): kombu's
Redis transport restored the unacknowledged messages of the lost connection through a
transport whose connection info was already cleared (``AttributeError: 'NoneType' object has
no attribute 'hostname'`` in ``_connparams``, as in celery/kombu#582), Celery counted that
unrecoverable and the worker exited. The test runs its own redis-server, kills it with
``kill -9`` several times while bots play, starts it again each time, and checks that the
same worker process is alive and still plays bot games to the end.

Not in ``make test``: it failed by chance in a full clean-clone run (2026-12-07, 12:48 UTC:
the lobby was not healthy 30 s after a Redis restart, ``wait_healthy``) and once in 6 runs
beside ``test_faults.py``. The likely cause, mended in ``services/platform/supervise.py``
(``reset_after_s`` 60 s -> 10 s): the lobby's consumers carried their restart back-off from one
outage to the next, up to 30 s, and the lobby is NOT_SERVING while one is down. It goes back
into ``make test`` once it has passed many runs under load with that fix. Run it by hand::

    .venv/bin/python -m pytest benchmarks/check_worker_redis_kills.py
"""

from __future__ import annotations

import shutil
import signal
import time

import pytest

from services.cli.launcher import Stack, free_port
from tests.integration.signin import signed_in_lobby
from tests.integration.test_redis_restart import TITLE, _bot_game_finishes, _redis, _start_bot_table

pytestmark = pytest.mark.integration

KILLS = 4


def test_the_worker_lives_through_redis_kills_and_still_plays(tmp_path):
    if shutil.which("redis-server") is None:
        pytest.fail("this test needs redis-server installed")
    port = free_port()
    redis_proc = _redis(port, tmp_path)
    try:
        with Stack(
            [TITLE],
            redis_url=f"redis://127.0.0.1:{port}/0",
            workers=1,
            run_dir=tmp_path / "run",
            log_level="INFO",
        ) as stack:
            worker = next(p for p in stack.procs if p.name == "worker")
            with signed_in_lobby(stack) as (_, lobby):
                _bot_game_finishes(lobby, 60)
                for _ in range(KILLS):
                    _start_bot_table(lobby)  # the worker is taking this game's turns
                    time.sleep(0.5)
                    redis_proc.send_signal(signal.SIGKILL)
                    redis_proc.wait(10)
                    time.sleep(1)
                    redis_proc = _redis(port, tmp_path)  # back, empty
                    time.sleep(6)  # past the lobby's 5 s readiness check
                    stack.wait_healthy(stack.lobby_address, timeout=30)
                    assert worker.popen.poll() is None, worker.log_path.read_text()[-3000:]
                    _bot_game_finishes(lobby, 60)
                stack.check_alive()  # no restart_workers: an exited worker fails here
                assert worker.popen.poll() is None
                log = worker.log_path.read_text()
    finally:
        redis_proc.terminate()
        redis_proc.wait(10)
    assert "Unrecoverable error" not in log
    assert log.count("Connection to broker lost") >= 1  # it saw the kills, and reconnected
