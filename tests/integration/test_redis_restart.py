"""Redis restarted empty under a running stack (issue 13, item 5): the
consumer groups are gone (``NOGROUP``). No process exits; the lobby's health
comes back to SERVING; the dispatcher and the lobby's result consumer create
their groups again, so a new game of bots is played and its result recorded,
without restarting anything. The test runs its own redis-server and
restarts it."""

from __future__ import annotations

import gc
import logging

import pytest

from tests.integration.own_redis import TITLE, bot_game_finishes, own_redis, stack_on_own_redis
from tests.integration.signin import signed_in_lobby

pytestmark = pytest.mark.integration


def test_the_stack_carries_on_after_redis_restarts_empty(tmp_path):
    with stack_on_own_redis(tmp_path) as (stack, restart):
        with signed_in_lobby(stack) as (_, lobby):
            bot_game_finishes(lobby, 60)
            restart()  # empty: no streams, no groups; the lobby SERVING again
            # well under the sweeper's 60 s stall: the events are read again
            bot_game_finishes(lobby, 40)
            stack.check_alive()
        logs = {p.name: p.log_path.read_text() for p in stack.procs}
    assert "consumer group missing" in logs["lobby"]
    assert "consumer group missing" in logs["dispatcher"]


def test_the_first_stream_after_a_redis_restart_is_503_with_retry_after(tmp_path):
    """The gateway's own Redis calls (the stream slots) met the dead pooled connections of the
    old Redis with an error it did not map: 500 ``internal``. It is 503 ``storage_unavailable``
    with ``retry_after_s`` (and ``Retry-After``), as the services answer, while Redis is down
    and on the first request after it is back; then streams open again. The server logs no
    "Exception in ASGI application" meanwhile: the 503 ends the request."""
    import asyncio

    from services.platform.db import upgrade
    from services.web.tests.harness import running_gateway

    database = f"sqlite+aiosqlite:///{tmp_path / 'rh.db'}"
    upgrade(database)
    escaped: list[logging.LogRecord] = []

    class Escapes(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            message = record.getMessage()
            if "Exception in ASGI application" in message or "never retrieved" in message:
                escaped.append(record)

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

    async def body(redis):
        async with running_gateway(database, redis.url, "restart") as env:
            # uvicorn.error is configured by now (it keeps this handler); asyncio's own logger
            # tells of a task's error that no one took ("Task exception was never retrieved")
            loggers = [logging.getLogger("uvicorn.error"), logging.getLogger("asyncio")]
            escapes = Escapes()
            for logger in loggers:
                logger.addHandler(escapes)
            try:
                await play(env, redis)
                gc.collect()  # a finished task's untaken error is told when it is collected
            finally:
                for logger in loggers:
                    logger.removeHandler(escapes)

    async def play(env, redis):
        ada = await env.person("ada")
        r = await env.http.post("/api/tables", json={"title": TITLE, "num_players": 2}, headers=ada)
        tid = r.json()["table_id"]
        async with env.http.stream("GET", f"/api/tables/{tid}/stream", headers=ada) as s:
            assert s.status_code == 200
        for restart in range(2):
            redis.stop()
            if restart == 0:  # while Redis is down
                r = await open_stream(env, tid, ada)
                assert unavailable(r), (r.status_code, r.text)
            redis.start()  # back, empty
            statuses = []
            for _ in range(40):
                r = await open_stream(env, tid, ada)
                assert r.status_code in (200, 404, 503), (r.status_code, r.text)
                if r.status_code != 503 or not unavailable(r):
                    statuses.append(r.status_code)
                    break
                statuses.append(503)
                await asyncio.sleep(0.25)
            assert statuses[-1] in (200, 404), statuses  # the table's state is gone

    with own_redis(tmp_path) as redis:
        asyncio.run(body(redis))
    assert not escaped, escaped[0].exc_info
