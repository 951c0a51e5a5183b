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

from roundhouse.v1 import lobby_pb2
from services.cli.launcher import Stack, free_port, redis_server_command, wait_for_redis
from tests.integration.signin import signed_in_lobby

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
            with signed_in_lobby(stack) as (_, lobby):
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


def test_the_first_stream_after_a_redis_restart_is_503_with_retry_after(tmp_path):
    """The gateway's own Redis calls (the stream slots) met the dead pooled connections of the
    old Redis with an error it did not map: 500 ``internal``. It is 503 ``storage_unavailable``
    with ``retry_after_s`` (and ``Retry-After``), as the services answer, while Redis is down
    and on the first request after it is back; then streams open again."""
    import asyncio

    from services.platform.db import upgrade
    from services.web.tests.harness import running_gateway

    if shutil.which("redis-server") is None:
        pytest.fail("this test needs redis-server installed")
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    database = f"sqlite+aiosqlite:///{tmp_path / 'rh.db'}"
    upgrade(database)
    procs = [_redis(port, tmp_path)]

    async def open_stream(env, tid, ada):
        """The stream's answer: its status, and its body if refused (a 200 stream is left)."""
        async with env.http.stream("GET", f"/api/tables/{tid}/stream", headers=ada) as r:
            if r.status_code >= 400:
                await r.aread()
            return r

    def unavailable(r) -> bool:
        if r.status_code != 503:
            return False
        body = r.json()
        assert body["code"] == "storage_unavailable", r.text
        assert int(body["details"]["retry_after_s"]) >= 1 and int(r.headers["Retry-After"]) >= 1
        return True

    async def body():
        async with running_gateway(database, url, "restart") as env:
            ada = await env.person("ada")
            r = await env.http.post(
                "/api/tables", json={"title": TITLE, "num_players": 2}, headers=ada
            )
            tid = r.json()["table_id"]
            async with env.http.stream("GET", f"/api/tables/{tid}/stream", headers=ada) as s:
                assert s.status_code == 200
            for restart in range(2):
                procs[0].terminate()
                procs[0].wait(10)
                if restart == 0:  # while Redis is down
                    r = await open_stream(env, tid, ada)
                    assert unavailable(r), (r.status_code, r.text)
                procs[0] = _redis(port, tmp_path)  # back, empty
                statuses = []
                for _ in range(40):
                    r = await open_stream(env, tid, ada)
                    assert r.status_code in (200, 404, 503), (r.status_code, r.status_code)
                    if r.status_code != 503 or not unavailable(r):
                        statuses.append(r.status_code)
                        break
                    statuses.append(503)
                    await asyncio.sleep(0.25)
                assert statuses[-1] in (200, 404), statuses  # the table's state is gone

    try:
        asyncio.run(body())
    finally:
        procs[0].terminate()
        procs[0].wait(10)
