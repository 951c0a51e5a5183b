"""A bot worker killed (kill -9) mid-turn (issue 13, item 8): a new worker is
started and the turn resumes within 10 s, far below the dispatcher's 60 s
stall sweep, because the dead task's heartbeat expires
(services/bots/heartbeat.py). The game then finishes and no seat moved twice
(the stream is one entry per version)."""

from __future__ import annotations

import os
import signal
import time

import grpc
import pytest

from roundhouse.v1 import lobby_pb2, lobby_pb2_grpc
from services.cli.launcher import Proc, Stack
from tests.integration.slow_worker import DELAY_ENV

pytestmark = pytest.mark.integration
TITLE = "railbarons"


def spawn_worker(stack: Stack, name: str, delay_s: float, ready: bool = True) -> Proc:
    argv = [
        a if a != "services.bots.celery_app" else "tests.integration.slow_worker"
        for a in stack.worker_argv()
    ]
    argv[argv.index("-n") + 1] = f"{name}-{stack.prefix}@%h"
    ready_file = stack.run_dir / f"{name}.ready"
    proc = stack.spawn(
        name,
        argv,
        extra_env={DELAY_ENV: str(delay_s), "ROUNDHOUSE_WORKER_READY_FILE": str(ready_file)},
    )
    if ready:
        stack.wait_for_file(ready_file, name)
    return proc


def kill9(stack: Stack, proc: Proc) -> None:
    os.killpg(proc.popen.pid, signal.SIGKILL)  # the worker and its pool processes
    proc.popen.wait(10)
    stack.procs.remove(proc)


def version_of(rdb, prefix: str, game_id: str) -> int:
    last = rdb.xrevrange(f"{prefix}:game:{game_id}:log", count=1)
    return int(last[0][1]["version"]) if last else 0


def test_a_killed_workers_turn_resumes_within_10_s(redis_url, rdb_for, tmp_path):
    stack = Stack([TITLE], redis_url=redis_url, workers=1, run_dir=tmp_path, log_level="INFO")
    with stack:
        rdb = rdb_for(stack)
        kill9(stack, next(p for p in stack.procs if p.name == "worker"))
        slow = spawn_worker(stack, "slow", delay_s=60)
        with grpc.insecure_channel(stack.lobby_address) as channel:
            lobby = lobby_pb2_grpc.LobbyStub(channel)
            table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=2))
            for seat in range(2):
                lobby.AddBot(
                    lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy="random")
                )
            table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
            time.sleep(2)  # the slow worker holds the first turn now (for 60 s)
            held = version_of(rdb, stack.prefix, table.game_id)
            kill9(stack, slow)
            killed_at = time.monotonic()
            spawn_worker(stack, "fresh", delay_s=0, ready=False)
            while version_of(rdb, stack.prefix, table.game_id) <= held:
                assert time.monotonic() - killed_at < 10, "the held turn did not resume in 10 s"
                time.sleep(0.05)
            deadline = time.monotonic() + 60
            while lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table.table_id)).status != (
                lobby_pb2.TABLE_STATUS_FINISHED
            ):
                assert time.monotonic() < deadline, "the game did not finish"
                time.sleep(0.2)
        entries = rdb.xrange(f"{stack.prefix}:game:{table.game_id}:log")
        assert [int(f["version"]) for _, f in entries] == list(range(1, len(entries) + 1))
        assert rdb.hlen(f"{stack.prefix}:bot-turns") == 0  # every heartbeat entry is gone
