"""The game log on Redis Streams (services/common/gamelog.py) against a real Redis:
compare-and-set appends, idempotency keys, lifecycle events, follow."""

from __future__ import annotations

import asyncio
import json

import pytest
import redis.asyncio as aioredis

from services.common.gamelog import GameLog, LogEntry


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
