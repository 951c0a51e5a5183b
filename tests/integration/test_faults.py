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

import aiohttp
import grpc
import pytest
import redis.asyncio as aioredis

from roundhouse.v1 import lobby_pb2_grpc
from services.accounts.auth import bearer
from services.accounts.store import AccountStore
from services.archive.store import ArchiveStore
from services.cli.launcher import Stack
from services.common.db import create_engine, session_factory
from services.common.gamelog import GameLog
from services.common.settings import Settings
from tests.integration import faults
from tests.integration.http_people import Front, Game, Players
from tests.integration.invariants import check_games, wait_finished
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
    found, players, before, after = asyncio.run(_person_through_a_gateway_kill(stack, fault_redis))
    assert players.errors == [], players.errors
    assert before >= 3 and after > before, (before, after)  # the kill was mid-game
    assert players.stream_breaks >= 1  # the event stream was cut, and resumed
    assert found == [], [str(v) for v in found]
    stack.check_alive()


async def _person_through_a_gateway_kill(stack, fault_redis):
    """A person (seat 0) against a random bot over HTTP; the gateway is killed after the
    person's third move. Returns the checks' findings, the players, and the person's
    moves acknowledged before the kill and in all."""
    engine = create_engine(stack.database_url, Settings())
    client = aioredis.from_url(fault_redis.url, decode_responses=True)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=60)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            players = Players(
                Front(session, [stack.gateway_address]),
                AccountStore(session_factory(engine)),
                "random",
            )
            game = Game(0, TITLE, 2, 0, 0)
            await players.make(game, f"gateway-kill-{stack.prefix}")
            await players.start(game)
            while len(players.posts) < 3 and not players.errors:
                await asyncio.sleep(0.05)
            before = len(players.posts)
            await asyncio.to_thread(faults.kill9, stack, "gateway")
            await asyncio.wait_for(asyncio.gather(*players.tasks), 180)
            token = game.person.headers["Authorization"].removeprefix("Bearer ")
            async with grpc.aio.insecure_channel(stack.lobby_address) as channel:
                lobby = lobby_pb2_grpc.LobbyStub(channel)
                await wait_finished([game.table_id], lobby, bearer(token), timeout_s=60)
                found = await check_games(
                    [game.table_id],
                    lobby,
                    bearer(token),
                    GameLog(client, stack.prefix),
                    ArchiveStore(engine),
                    players.acknowledged,
                )
            return found, players, before, len(players.posts)
    finally:
        await client.aclose()
        await engine.dispose()


def test_redis_paused_mid_game(fault_stack):
    stack, lobby, fault_redis, r, table_id = _game(fault_stack, 201)
    fault_redis.pause(3)
    faults.finish_and_verify(lobby, r, stack.prefix, table_id, timeout=120)
    stack.check_alive()


def test_redis_restarted_with_a_lost_tail(fault_stack):
    stack, lobby, fault_redis, r, table_id = _game(fault_stack, 202)
    fault_redis.snapshot()
    length = r.xlen(f"{stack.prefix}:game:{TITLE}-{table_id}:log")
    faults.wait_for_version(r, stack.prefix, TITLE, table_id, length + 3)
    fault_redis.crash_and_restart()  # back at the snapshot: the last moves are gone
    r = fault_redis.client()
    faults.finish_and_verify(lobby, r, stack.prefix, table_id, timeout=120)
    stack.check_alive()


def test_redis_out_of_memory_mid_game(fault_stack):
    stack, lobby, fault_redis, r, table_id = _game(fault_stack, 203)
    with fault_redis.out_of_memory():
        before = r.xlen(f"{stack.prefix}:game:{TITLE}-{table_id}:log")
        time.sleep(4)  # the bots' moves are refused meanwhile; no process may die
        stack.check_alive()
        assert r.xlen(f"{stack.prefix}:game:{TITLE}-{table_id}:log") == before
    faults.finish_and_verify(lobby, r, stack.prefix, table_id, timeout=120)
    stack.check_alive()
