"""The fault suite, bounded (issue 13, item 9): one bot game per fault on a
stack with its own Redis; ``kill -9`` of each kind of process mid-game (then
a restart), a Redis pause, a Redis crash restarted from an older snapshot (a
lost tail), Redis out of memory. Every game finishes by itself and replays
to the result the lobby recorded. ``kill -9`` of the gateway while a person
plays over HTTP: the person's requests are sent again (a move with its
idempotency key), its event stream resumes, and the game passes every check of
``tests/integration/invariants.py``. The full runs (more games, every title) are
``benchmarks/bench_faults.py`` and ``benchmarks/bench_load_faults.py`` (``make bench``)."""

from __future__ import annotations

import asyncio
import shutil
import time

import pytest

from services.cli.launcher import Stack
from services.platform.hotstore import KeySpace
from tests.integration import faults
from tests.integration.http_people import person_through_a_kill
from tests.integration.signin import signed_in_lobby

pytestmark = pytest.mark.integration
TITLE = "transsib"
"""Its random 2-player games are about 115 moves (Chicago Express: about 210); the full
run, ``benchmarks/bench_faults.py``, plays every title."""
POLICIES = ["random", "random"]


@pytest.fixture(scope="module")
def fault_stack(tmp_path_factory):
    if shutil.which("redis-server") is None:
        pytest.fail("the fault suite needs redis-server installed")
    root = tmp_path_factory.mktemp("faults")
    fault_redis = faults.FaultRedis(root / "redis")
    with pytest.MonkeyPatch.context() as env:
        for name, value in faults.STACK_ENV.items():
            env.setenv(name, value)  # the stack's processes, restarted ones too
        try:
            run = root / "run"
            with Stack(
                [TITLE], redis_url=fault_redis.url, workers=1, run_dir=run, gateway=True
            ) as stack:
                with signed_in_lobby(stack) as (_, lobby):
                    yield stack, lobby, fault_redis
        finally:
            fault_redis.stop()


def _game(fault_stack, seed):
    stack, lobby, fault_redis = fault_stack
    r = fault_redis.client()
    table_id = faults.start_bot_game(lobby, TITLE, POLICIES, seed)
    faults.wait_for_version(r, stack.prefix, TITLE, table_id, 3)
    return stack, lobby, fault_redis, r, table_id


@pytest.mark.parametrize("kind", faults.PROCESS_KINDS)
def test_kill_9_of_a_process_mid_game(fault_stack, kind):
    stack, lobby, _, r, table_id = _game(fault_stack, 100 + faults.PROCESS_KINDS.index(kind))
    faults.kill9(stack, kind)
    faults.finish_and_verify(lobby, r, stack.prefix, table_id, timeout=120)
    stack.check_alive()


def test_kill_9_of_the_gateway_while_a_person_plays_over_http(fault_stack):
    stack, _, fault_redis = fault_stack
    found, players, before, after = asyncio.run(
        person_through_a_kill(stack, fault_redis.url, "gateway", TITLE)
    )
    assert players.errors == [], players.errors
    assert before >= 3 and after > before, (before, after)  # the kill was mid-game
    assert players.stream_breaks >= 1  # the event stream was cut, and resumed
    assert found == [], [str(v) for v in found]
    stack.check_alive()


def test_redis_paused_mid_game(fault_stack):
    stack, lobby, fault_redis, r, table_id = _game(fault_stack, 201)
    fault_redis.pause(3)
    faults.finish_and_verify(lobby, r, stack.prefix, table_id, timeout=120)
    stack.check_alive()


def test_redis_restarted_with_a_lost_tail(fault_stack):
    stack, lobby, fault_redis, r, table_id = _game(fault_stack, 202)
    fault_redis.snapshot()
    length = r.xlen(KeySpace(stack.prefix).log(f"{TITLE}-{table_id}"))
    faults.wait_for_version(r, stack.prefix, TITLE, table_id, length + 3)
    fault_redis.crash_and_restart()  # back at the snapshot: the last moves are gone
    r = fault_redis.client()
    faults.finish_and_verify(lobby, r, stack.prefix, table_id, timeout=120)
    stack.check_alive()


def test_redis_out_of_memory_mid_game(fault_stack):
    stack, lobby, fault_redis, r, table_id = _game(fault_stack, 203)
    with fault_redis.out_of_memory():
        before = r.xlen(KeySpace(stack.prefix).log(f"{TITLE}-{table_id}"))
        time.sleep(4)  # the bots' moves are refused meanwhile; no process may die
        stack.check_alive()
        assert r.xlen(KeySpace(stack.prefix).log(f"{TITLE}-{table_id}")) == before
    faults.finish_and_verify(lobby, r, stack.prefix, table_id, timeout=120)
    stack.check_alive()
