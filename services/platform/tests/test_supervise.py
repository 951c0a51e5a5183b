"""Supervised background tasks (services/platform/supervise.py): a death is
logged with its traceback, turns the supervisor (and a gRPC server's health)
unhealthy, and a restartable task comes back after a back-off (issue 13,
item 5)."""

from __future__ import annotations

import asyncio
import io

import pytest
from grpc import aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.platform.logging import configure_logging
from services.platform.server import GrpcServer
from services.platform.supervise import Supervisor
from services.platform.tests.test_logging import json_lines, restore_logging  # noqa: F401


def test_a_dying_task_is_logged_marked_down_and_restarted():
    out = io.StringIO()
    configure_logging("INFO", "json", stream=out)

    async def go():
        runs = []
        release = asyncio.Event()

        async def flaky():
            runs.append(len(runs))
            if len(runs) <= 2:
                raise RuntimeError(f"boom {len(runs)}")
            await release.wait()

        sup = Supervisor("test", backoff_s=0.05, max_backoff_s=0.2)
        sup.start("flaky", flaky)
        health = []
        for _ in range(100):
            health.append(sup.healthy)
            if len(runs) == 3:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert len(runs) == 3
        assert False in health  # down between a death and its restart
        assert sup.healthy and sup.down() == []
        release.set()
        await sup.wait("flaky", 1)
        await sup.stop()

    asyncio.run(go())
    lines = json_lines(out.getvalue())
    deaths = [line for line in lines if line["event"] == "background task died"]
    assert [d["task"] for d in deaths] == ["flaky", "flaky"]
    assert all("RuntimeError: boom" in d["exception"] for d in deaths)
    assert all(d["level"] == "error" for d in deaths)
    assert [line["event"] for line in lines].count("restarting background task") == 2


def test_a_task_that_may_not_restart_stays_down():
    async def go():
        async def dies():
            raise ValueError("gone")

        async def ends():
            return None

        sup = Supervisor("test")
        sup.start("dies", dies, restart=False)
        sup.start("ends", ends, restart=False)
        await asyncio.sleep(0.05)
        assert not sup.healthy
        assert sorted(sup.down()) == ["dies", "ends"]
        await sup.stop()

    asyncio.run(go())


def test_the_health_service_is_not_serving_while_a_task_is_down():
    async def go():
        release = asyncio.Event()
        sup = Supervisor("test", backoff_s=0.3, max_backoff_s=0.3)

        async def once_dead():
            if not release.is_set():
                release.set()
                raise RuntimeError("consumer died")
            await asyncio.Event().wait()

        server = GrpcServer(
            "test",
            ["roundhouse.test.Nothing"],
            lambda s: None,
            "127.0.0.1:0",
            grace_seconds=0.1,
            readiness_interval_s=0.05,
            supervisor=sup,
        )
        await server.start()
        statuses = set()
        async with aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            sup.start("consumer", once_dead)
            for _ in range(40):
                answer = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                statuses.add(answer.status)
                await asyncio.sleep(0.02)
        await server.stop()
        await sup.stop()
        return statuses

    statuses = asyncio.run(go())
    assert health_pb2.HealthCheckResponse.NOT_SERVING in statuses
    assert health_pb2.HealthCheckResponse.SERVING in statuses  # back once restarted


@pytest.mark.parametrize(
    "reset_after_s, attempts",
    [
        (0.1, [1, 1]),  # each long run restarts at once; each quick failure waits backoff_s
        (5.0, [1, 2, 3, 4, 5, 6]),  # runs shorter than reset_after_s: the wait climbs
    ],
)
def test_a_run_of_reset_after_s_starts_the_back_off_afresh(reset_after_s, attempts):
    """Separate outages, each after a run of at least ``reset_after_s``, do not add up: the
    task is restarted at once, and a failure right after waits ``backoff_s`` again. Runs
    shorter than that are failures in a row, and the exponential wait climbs."""
    out = io.StringIO()
    configure_logging("INFO", "json", stream=out)

    async def go():
        runs = []

        async def consumer():
            runs.append(len(runs))
            if len(runs) in (2, 5):  # the outage still on at the first retry
                raise ConnectionError("redis down")
            if len(runs) < 7:
                await asyncio.sleep(0.15)  # ran a while, then Redis went
                raise ConnectionError("redis down")
            await asyncio.Event().wait()

        sup = Supervisor("test", backoff_s=0.01, max_backoff_s=5, reset_after_s=reset_after_s)
        sup.start("consumer", consumer)
        for _ in range(500):
            if len(runs) == 7:
                break
            await asyncio.sleep(0.01)
        assert len(runs) == 7
        await sup.stop()

    asyncio.run(go())
    restarts = [
        line for line in json_lines(out.getvalue()) if line["event"] == "restarting background task"
    ]
    assert [r["attempt"] for r in restarts] == attempts
    assert [r["wait_s"] for r in restarts] == [0.01 * 2 ** (a - 1) for a in attempts]
