"""A test's own redis-server (it is stopped, killed and started again, which the shared
Redis of the other tests must never be), a stack on it, and bot games to check that the
stack still plays: the Redis restart and Redis kill tests.

:func:`stack_on_own_redis` yields the running :class:`~services.cli.launcher.Stack` and a
``restart(sig)`` that stops Redis with ``sig`` (SIGTERM: a clean stop; SIGKILL: a crash),
starts it again empty (no streams, no consumer groups) on the same port, and waits until
the lobby reports SERVING again."""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from tenacity import retry, retry_if_exception, stop_after_delay, wait_fixed

from roundhouse.v1 import lobby_pb2
from services.cli.launcher import Stack, free_port, redis_server_command, wait_for_redis

TITLE = "railbarons"

DOWN_S = 1.0
"""How long Redis stays away in a restart (seconds)."""

READINESS_S = 6.0
"""Past the lobby's readiness check (``GrpcServer.readiness_interval_s``, 5 s,
``services/platform/server.py``): after this long its health tells of the new Redis (before
it, a SERVING answer may still be the old one's)."""

HEALTHY_S = 30.0
"""How long the lobby may then take to report SERVING (seconds): a consumer that died in
the outage is restarted after the supervisor's back-off, at most ``max_backoff_s`` (30 s,
``services/platform/supervise.py``); with ``reset_after_s`` (10 s) a new outage starts its
back-off afresh at 0.5 s, so it is seconds in practice. The bound: a back-off begun in the
outage ends at most 30 s after Redis is back, and the next readiness check within 5 s more;
:data:`READINESS_S` + :data:`HEALTHY_S` (36 s) covers both."""


class OwnRedis:
    """A private redis-server on a free port, its files under ``workdir``."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Start it and wait until it answers PING."""
        self.proc = subprocess.Popen(
            redis_server_command(self.port, self.workdir),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_redis(self.url)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Send ``sig`` and wait (at most 10 s) for it to exit."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)

    def restart(self, sig: int = signal.SIGTERM) -> None:
        """Stop it with ``sig``, wait :data:`DOWN_S`, start it again (empty)."""
        self.stop(sig)
        time.sleep(DOWN_S)  # the outage itself, not a wait for anything
        self.start()


@contextlib.contextmanager
def own_redis(workdir: Path) -> Iterator[OwnRedis]:
    """A started :class:`OwnRedis`, stopped on the way out. Fails the test (not skips)
    where redis-server is not installed."""
    if shutil.which("redis-server") is None:
        pytest.fail("this test needs redis-server installed")
    redis = OwnRedis(workdir)
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()


@contextlib.contextmanager
def stack_on_own_redis(workdir: Path) -> Iterator[tuple[Stack, Callable[[int], None]]]:
    """A stack of :data:`TITLE`'s rules service with one worker on its own Redis (logs at
    INFO under ``workdir/run``), and its ``restart(sig)``: Redis restarted (see
    :meth:`OwnRedis.restart`), then the lobby healthy again. Raises TimeoutError if the lobby
    is not SERVING :data:`HEALTHY_S` after :data:`READINESS_S`."""
    with (
        own_redis(workdir) as redis,
        Stack(
            [TITLE], redis_url=redis.url, workers=1, run_dir=workdir / "run", log_level="INFO"
        ) as stack,
    ):

        def restart(sig: int = signal.SIGTERM) -> None:
            redis.restart(sig)
            time.sleep(READINESS_S)  # the readiness check's period, see READINESS_S
            stack.wait_healthy(stack.lobby_address, timeout=HEALTHY_S)

        yield stack, restart


@retry(  # as a client is told to: UNAVAILABLE (a pooled connection to the old Redis) is retried
    retry=retry_if_exception(
        lambda e: isinstance(e, grpc.RpcError) and e.code() == grpc.StatusCode.UNAVAILABLE
    ),
    stop=stop_after_delay(15),
    wait=wait_fixed(0.5),
    reraise=True,
)
def start_bot_table(lobby) -> str:
    """A started two-seat table of random bots; its id."""
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=2))
    for seat in range(2):
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy="random"))
    lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    return table.table_id


def bot_game_finishes(lobby, timeout_s: float) -> None:
    """Start a bot table and wait until the lobby has its result (AssertionError after
    ``timeout_s``)."""
    table_id = start_bot_table(lobby)
    deadline = time.monotonic() + timeout_s
    while True:
        status = lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id)).status
        if status == lobby_pb2.TABLE_STATUS_FINISHED:
            return
        assert time.monotonic() < deadline, "the bot game did not finish and get its result"
        time.sleep(0.2)
