"""Redis restarted empty under a running stack (issue 13, item 5): the
consumer groups are gone (``NOGROUP``). No process exits; the lobby's health
comes back to SERVING; the dispatcher and the lobby's result consumer create
their groups again, so a new game of bots is played and its result recorded,
without restarting anything. The test runs its own redis-server and
restarts it."""

from __future__ import annotations

import shutil
import subprocess
import time

import grpc
import pytest
from tenacity import retry, retry_if_exception, stop_after_delay, wait_fixed

from roundhouse.v1 import lobby_pb2, lobby_pb2_grpc
from services.cli.launcher import Stack, free_port, redis_server_command, wait_for_redis

pytestmark = pytest.mark.integration
TITLE = "railbarons"


def _redis(port, workdir):
    proc = subprocess.Popen(
        redis_server_command(port, workdir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for_redis(f"redis://127.0.0.1:{port}/0")
    return proc


@retry(  # as a client is told to: UNAVAILABLE (a pooled connection to the old Redis) is retried
    retry=retry_if_exception(
        lambda e: isinstance(e, grpc.RpcError) and e.code() == grpc.StatusCode.UNAVAILABLE
    ),
    stop=stop_after_delay(15),
    wait=wait_fixed(0.5),
    reraise=True,
)
def _start_bot_table(lobby) -> str:
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=2))
    for seat in range(2):
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy="random"))
    lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    return table.table_id


def _bot_game_finishes(lobby, timeout_s: float) -> None:
    table_id = _start_bot_table(lobby)
    deadline = time.monotonic() + timeout_s
    while True:
        status = lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id)).status
        if status == lobby_pb2.TABLE_STATUS_FINISHED:
            return
        assert time.monotonic() < deadline, "the bot game did not finish and get its result"
        time.sleep(0.2)


def test_the_stack_carries_on_after_redis_restarts_empty(tmp_path):
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
            with grpc.insecure_channel(stack.lobby_address) as channel:
                lobby = lobby_pb2_grpc.LobbyStub(channel)
                _bot_game_finishes(lobby, 60)
                redis_proc.terminate()
                redis_proc.wait(10)
                time.sleep(1)
                redis_proc = _redis(port, tmp_path)  # empty: no streams, no groups
                time.sleep(6)  # past the lobby's 5 s readiness check: health now tells
                stack.wait_healthy(stack.lobby_address, timeout=30)
                # well under the sweeper's 60 s stall: the events are read again
                _bot_game_finishes(lobby, 40)
                stack.check_alive()
            logs = {p.name: p.log_path.read_text() for p in stack.procs}
    finally:
        redis_proc.terminate()
        redis_proc.wait(10)
    assert "consumer group missing" in logs["lobby"]
    assert "consumer group missing" in logs["dispatcher"]
