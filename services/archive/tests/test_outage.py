"""The database down: the archiver keeps retrying and acknowledges nothing,
a stopped archiver leaves its entries pending, and once the server is back
every finished game is archived, none lost. Against a real PostgreSQL server
this test starts, stops and starts itself (the ``private_postgres`` fixture)."""

from __future__ import annotations

import asyncio

import pytest
import redis.exceptions

from services.archive.archiver import Archiver
from services.archive.store import ArchiveStore
from services.archive.tests.helpers import rig
from services.common.db import create_engine, is_unavailable

pytestmark = pytest.mark.integration


async def until(check, timeout=30.0):
    for _ in range(int(timeout / 0.1)):
        if await check():
            return True
        await asyncio.sleep(0.1)
    return False


def test_the_archiver_catches_up_after_the_database_comes_back(
    redis_url, key_prefix, private_postgres
):
    pg = private_postgres  # migrated to head
    url = pg.url

    async def go():
        async with rig(redis_url, key_prefix, url) as r:
            r.settings.db_timeout_s = 1.0
            engine = create_engine(url, r.settings)
            store = ArchiveStore(engine)
            lifecycle = r.gamelog.lifecycle_key
            ids = [f"down{i}" for i in range(3)]
            pg.stop()
            for i, game_id in enumerate(ids):  # games are still created and played
                await r.finished_game(game_id, seed=60 + i)
            with pytest.raises(Exception) as down:
                await store.load(ids[0])
            assert is_unavailable(down.value), repr(down.value)

            first = Archiver(r.settings, r.redis, engine, retry_max_wait_s=0.3)
            task = asyncio.create_task(first.run())

            async def delivered():
                try:
                    info = await r.redis.xpending(lifecycle, "archiver")
                except redis.exceptions.ResponseError:  # the group is not there yet
                    return False
                return info["pending"] >= 1

            assert await until(delivered)
            await asyncio.sleep(1.5)  # several failed tries
            assert (await r.redis.xpending(lifecycle, "archiver"))["pending"] >= 1
            assert not await r.redis.exists(f"{lifecycle}:dead")
            for game_id in ids:  # Redis still keeps every game, for good
                assert await r.redis.ttl(r.gamelog.log_key(game_id)) == -1
            first.stop.set()  # a restart during the outage
            await asyncio.wait_for(task, 10)
            assert (await r.redis.xpending(lifecycle, "archiver"))["pending"] >= 1

            second = Archiver(r.settings, r.redis, engine, retry_max_wait_s=0.3)
            task = asyncio.create_task(second.run())
            await asyncio.sleep(0.5)
            await asyncio.to_thread(pg.start)

            async def archived():
                return all([await store.has(g) for g in ids])

            try:
                assert await until(archived)
                assert await until(lambda: _no_pending(r.redis, lifecycle)), (
                    "entries left unacknowledged"
                )
            finally:
                second.stop.set()
                await asyncio.wait_for(task, 10)
            for game_id in ids:
                stored = await store.load(game_id)
                assert stored.entries == await r.gamelog.entries(game_id)
                assert await r.redis.ttl(r.gamelog.log_key(game_id)) > 0
            assert not await r.redis.exists(f"{lifecycle}:dead")
            await engine.dispose()

    asyncio.run(go())


async def _no_pending(client, lifecycle) -> bool:
    return (await client.xpending(lifecycle, "archiver"))["pending"] == 0
