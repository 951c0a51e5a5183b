"""The Celery worker lives through its Redis broker being killed (issue 33, item 2): kombu's
Redis transport restored the unacknowledged messages of the lost connection through a
transport whose connection info was already cleared (``AttributeError: 'NoneType' object has
no attribute 'hostname'`` in ``_connparams``, as in celery/kombu#582), Celery counted that
unrecoverable and the worker exited. The test runs its own redis-server, kills it with
``kill -9`` several times while bots play, starts it again each time, and checks that the
same worker process is alive and still plays bot games to the end.

It once failed by chance (the lobby not healthy 30 s after a Redis restart): the lobby's
consumers carried their restart back-off from one outage to the next, up to 30 s; a run of
10 s now starts it afresh (``Supervisor.reset_after_s``, ``services/platform/supervise.py``).
"""

from __future__ import annotations

import signal
import time

import pytest

from tests.integration.own_redis import bot_game_finishes, stack_on_own_redis, start_bot_table
from tests.integration.signin import signed_in_lobby

pytestmark = pytest.mark.integration

KILLS = 4


def test_the_worker_lives_through_redis_kills_and_still_plays(tmp_path):
    with stack_on_own_redis(tmp_path) as (stack, restart):
        worker = next(p for p in stack.procs if p.name == "worker")
        with signed_in_lobby(stack) as (_, lobby):
            bot_game_finishes(lobby, 60)
            for _ in range(KILLS):
                start_bot_table(lobby)  # the worker is taking this game's turns
                time.sleep(0.5)  # into the game: the kill lands mid-play, whatever its move
                restart(signal.SIGKILL)
                assert worker.popen.poll() is None, worker.log_path.read_text()[-3000:]
                bot_game_finishes(lobby, 60)
            stack.check_alive()  # no restart_workers: an exited worker fails here
            assert worker.popen.poll() is None
            log = worker.log_path.read_text()
    assert "Unrecoverable error" not in log
    assert log.count("Connection to broker lost") >= 1  # it saw the kills, and reconnected
