"""The game log on Redis Streams (services/platform/gamelog.py) against a real Redis:
compare-and-set appends, idempotency keys, lifecycle events, follow."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time

import pytest
import redis
import redis.asyncio as aioredis

from services.cli.launcher import free_port, redis_server_command, wait_for_redis
from services.platform.gamelog import GameLog, LogEntry
from services.platform.hotstore import NotReplicated


def entry(version: int, finished: bool = False) -> LogEntry:
    return LogEntry(version, 0, json.dumps({"type": "t", "n": version}), "[]", (0,), finished)


@pytest.fixture
def gamelog(redis_url, key_prefix):
    async def make():
        return GameLog(aioredis.from_url(redis_url, decode_responses=True), key_prefix)

    return make


def run(coro):
    return asyncio.run(coro)


def test_create_is_once_only_and_announced(gamelog):
    async def go():
        log = await gamelog()
        assert await log.create("g1", {"seed": 1}, {"type": "game_created", "game_id": "g1"})
        assert not await log.create("g1", {"seed": 2}, {"type": "game_created", "game_id": "g1"})
        assert (await log.meta("g1")) == {"seed": 1}
        events = await log.r.xrange(log.lifecycle_key("g1"))
        assert [e[1]["type"] for e in events] == ["game_created"]
        assert await log.meta("nope") is None

    run(go())


def test_append_is_compare_and_set_on_the_version(gamelog):
    async def go():
        log = await gamelog()
        ok = await log.append("g", 0, entry(1), "", "{}", {"type": "turn"})
        assert (ok.status, ok.version) == ("ok", 1)
        stale = await log.append("g", 0, entry(1), "", "{}", {"type": "turn"})
        assert (stale.status, stale.version) == ("stale", 1)
        ahead = await log.append("g", 5, entry(6), "", "{}", {"type": "turn"})
        assert (ahead.status, ahead.version) == ("stale", 1)
        assert [e.version for e in await log.entries("g")] == [1]
        assert len(await log.r.xrange(log.lifecycle_key("g"))) == 1

    run(go())


def test_concurrent_writers_never_both_append_a_version(gamelog):
    async def go():
        log = await gamelog()
        results = await asyncio.gather(
            *[log.append("g", 0, entry(1), "", "{}", None) for _ in range(20)]
        )
        assert sorted(r.status for r in results).count("ok") == 1
        assert len(await log.entries("g")) == 1

    run(go())


def test_idempotency_key_returns_the_first_answer_and_appends_once(gamelog):
    async def go():
        log = await gamelog()
        first = await log.append("g", 0, entry(1), "k1", '{"first": true}', None)
        again = await log.append("g", 0, entry(1), "k1", '{"second": true}', None)
        assert first.status == "ok"
        assert (again.status, again.answer) == ("duplicate", '{"first": true}')
        assert await log.answer("g", "k1") == '{"first": true}'
        assert await log.answer("g", "") is None
        assert len(await log.entries("g")) == 1

    run(go())


def test_follow_replays_then_streams_live_and_ends_when_finished(gamelog):
    async def go():
        log = await gamelog()
        await log.append("g", 0, entry(1), "", "{}", None)
        await log.append("g", 1, entry(2), "", "{}", None)
        seen = []

        async def reader():
            async for e in log.follow("g", 1, block_ms=100):
                seen.append(e.version)

        task = asyncio.create_task(reader())
        await asyncio.sleep(0.2)
        await log.append("g", 2, entry(3), "", "{}", None)
        await log.append("g", 3, entry(4, finished=True), "", "{}", None)
        await asyncio.wait_for(task, 5)
        assert seen == [2, 3, 4]
        assert (await log.last_entry("g")).version == 4
        assert await log.last_entry("no-such-game") is None

    run(go())


def replica_streaming(primary: redis.Redis) -> bool:
    """The primary streams its writes to its replica: a write is WAITed for on it.

    ``state=online`` in ``INFO replication`` is not enough. After a diskless full sync
    Redis 7.0 marks the replica online but holds its command stream until the replica's
    first ``REPLCONF ACK``, which the replica sends from its once-a-second replication cron
    ("Waiting for REPLCONF ACK from slave to enable streaming" in the primary's log). Until
    then a ``WAIT`` cannot be answered, its GETACK sitting in the held stream: that is how
    the old fixture let the first 100 ms WAIT miss (about 1 start in 15 here, measured with
    a probe of the fixture's own start-up)."""
    if primary.info("replication").get("slave0", {}).get("state") != "online":
        return False
    primary.set("fixture:first-sync", 1)
    return primary.wait(1, 2_000) == 1


def stopped(proc: subprocess.Popen) -> bool:
    """The process is in the stopped state (``T`` in ``/proc/PID/stat``): a SIGSTOP it was
    sent has taken effect, so it can acknowledge nothing."""
    with open(f"/proc/{proc.pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


@pytest.fixture
def primary_with_replica(tmp_path):
    """A private Redis and a replica of it (the replica can be paused: SIGSTOP)."""
    procs = []
    port, replica_port = free_port(), free_port()
    for p, extra in (
        (port, ["--repl-diskless-sync-delay", "0"]),
        (replica_port, ["--replicaof", "127.0.0.1", str(port)]),
    ):
        (tmp_path / str(p)).mkdir()
        procs.append(
            subprocess.Popen(
                redis_server_command(p, tmp_path / str(p)) + extra,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        wait_for_redis(f"redis://127.0.0.1:{p}/0")
    primary = redis.Redis(port=port, decode_responses=True)
    deadline = time.monotonic() + 20
    while not replica_streaming(primary):
        assert time.monotonic() < deadline, "the replica did not come online and stream"
        time.sleep(0.05)
    primary.close()
    yield f"redis://127.0.0.1:{port}/0", procs[1]
    for proc in procs:
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        proc.wait(10)


def test_with_wait_a_move_is_acknowledged_only_once_a_replica_has_it(primary_with_replica):
    """WAIT on (one replica): a move the replica has is acknowledged; with the replica
    stalled the move is stored but refused NotReplicated, and so are a retry with its key
    and a read of its stored answer, until the replica has it: then the retry gets the
    first answer. Refusals and reads of a stale version are not held up by WAIT.

    Deterministic by construction: the writes that must be acknowledged WAIT up to 30 s
    (WAIT answers as soon as the replica has them, so this costs nothing when the machine is
    quick, and a busy machine cannot make them miss); the writes that must be refused WAIT
    100 ms while the replica is *known* to be stopped (``/proc`` state ``T``), so no timing
    can let it acknowledge them. (The old test gave every write 100 ms, and its fixture did not
    wait for the primary to start streaming to the replica: see ``replica_streaming``.)"""
    url, replica = primary_with_replica

    async def go():
        client = aioredis.from_url(url, decode_responses=True)
        log = GameLog(client, "w", wait_replicas=1, wait_timeout_ms=30_000)
        stalled = GameLog(client, "w", wait_replicas=1, wait_timeout_ms=100)
        assert await log.create("g", {"seed": 1}, {"type": "game_created", "game_id": "g"})
        ok = await log.append("g", 0, entry(1), "0:a", '{"v":1}', {"type": "turn", "game_id": "g"})
        assert (ok.status, ok.version) == ("ok", 1)
        replica.send_signal(signal.SIGSTOP)
        try:
            deadline = time.monotonic() + 10
            while not stopped(replica):
                assert time.monotonic() < deadline, "the replica did not stop"
                await asyncio.sleep(0.01)
            with pytest.raises(NotReplicated) as refused:
                await stalled.append("g", 1, entry(2), "0:b", '{"v":2}', {"type": "turn"})
            assert (refused.value.replicas, refused.value.wanted) == (0, 1)
            assert [e.version for e in await stalled.entries("g")] == [1, 2]  # on the primary
            with pytest.raises(NotReplicated):  # the retry: the stored answer, not yet safe
                await stalled.append("g", 1, entry(2), "0:b", '{"v":2}', {"type": "turn"})
            with pytest.raises(NotReplicated):
                await stalled.answer("g", "0:b")
            stale = await stalled.append("g", 0, entry(1), "0:c", "{}", {"type": "turn"})
            assert (stale.status, stale.version) == ("stale", 2)  # no WAIT for a refusal
            assert await stalled.answer("g", "0:none") is None
        finally:
            replica.send_signal(signal.SIGCONT)
        again = await log.append("g", 1, entry(2), "0:b", '{"v":2}', {"type": "turn"})
        assert (again.status, again.answer) == ("duplicate", '{"v":2}')
        assert await log.answer("g", "0:b") == '{"v":2}'
        await client.aclose()

    run(go())


def test_the_legal_moves_are_replaced_with_each_entry_and_only_by_one(gamelog):
    """The stored legal moves are those of the stream's last entry: an append replaces them
    (or removes them when it brings none), a refused append leaves them, and the repair after a
    lost tail drops them."""

    async def go():
        log = await gamelog()
        at0 = {"version": "0", "active": "[0]", "0": "zero"}
        assert await log.create("g", {"seed": 1}, {"type": "game_created"}, at0)
        assert await log.legal_moves("g", 0) == (0, [0], "zero")
        assert await log.legal_moves("g", 1) == (0, [0], "")
        at1 = {"version": "1", "active": "[1]", "1": "one"}
        assert (await log.append("g", 0, entry(1), "", "{}", None, at1)).status == "ok"
        assert await log.legal_moves("g", 1) == (1, [1], "one")
        stale = {"version": "9", "active": "[0]", "0": "never"}
        assert (await log.append("g", 0, entry(1), "", "{}", None, stale)).status == "stale"
        assert await log.legal_moves("g", 1) == (1, [1], "one")
        assert (await log.append("g", 1, entry(2), "", "{}", None)).status == "ok"
        assert await log.legal_moves("g", 1) is None
        at3 = {"version": "3", "active": "[0]", "0": "three"}
        assert (await log.append("g", 2, entry(3), "", "{}", None, at3)).status == "ok"
        await log.repair_after_loss("g")
        assert await log.legal_moves("g", 0) is None
        assert await log.legal_moves("nope", 0) is None

    run(go())
