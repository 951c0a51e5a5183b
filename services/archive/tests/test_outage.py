"""The database down: ListGames and a game Redis does not hold answer
UNAVAILABLE ``database_unavailable``, games are still created; the archiver
keeps retrying and acknowledges nothing,
a stopped archiver leaves its entries pending, and once the server is back
every finished game is archived, none lost. Against a real PostgreSQL server
this test starts, stops and starts itself (the ``private_postgres`` fixture)."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
import pytest
import redis.exceptions

from roundhouse.v1 import archive_pb2, archive_pb2_grpc, game_pb2, game_pb2_grpc
from services.archive.archiver import Archiver
from services.archive.fallback import ArchiveFallback
from services.archive.server import ArchiveServicer
from services.archive.store import ArchiveStore
from services.archive.tests.helpers import rig
from services.platform.db import create_engine, is_unavailable
from services.platform.grpc_errors import ErrorMapping, error_reason
from services.rules.servicer import GameRulesServicer

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
            lifecycle = r.gamelog.lifecycle_keys  # every shard
            ids = [f"down{i}" for i in range(3)]
            pg.stop()
            for i, game_id in enumerate(ids):  # games are still created and played
                await r.finished_game(game_id, seed=60 + i)
            with pytest.raises(Exception) as down:
                await store.load(ids[0])
            assert is_unavailable(down.value), repr(down.value)
            assert await served_while_down(store, r) == [
                (grpc.StatusCode.UNAVAILABLE, "database_unavailable"),
                (grpc.StatusCode.UNAVAILABLE, "database_unavailable"),
            ]

            first = Archiver(r.settings, r.redis, engine, retry_max_wait_s=0.3)
            task = asyncio.create_task(first.run())

            async def delivered():
                try:
                    return await _pending(r.redis, lifecycle) >= 1
                except redis.exceptions.ResponseError:  # the group is not there yet
                    return False

            assert await until(delivered)
            await asyncio.sleep(1.5)  # several failed tries
            assert await _pending(r.redis, lifecycle) >= 1
            for key in lifecycle:
                assert not await r.redis.exists(f"{key}:dead")
            for game_id in ids:  # Redis still keeps every game, for good
                assert await r.redis.ttl(r.gamelog.log_key(game_id)) == -1
            first.stop.set()  # a restart during the outage
            await asyncio.wait_for(task, 10)
            assert await _pending(r.redis, lifecycle) >= 1

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
                # labels are not archived (the fallback describes the moves again on replay)
                live = [dataclasses.replace(e, label="") for e in await r.gamelog.entries(game_id)]
                assert stored.entries == live
                assert await r.redis.ttl(r.gamelog.log_key(game_id)) > 0
            assert not await r.redis.exists(f"{lifecycle}:dead")
            await engine.dispose()

    asyncio.run(go())


async def served_while_down(store, r) -> list:
    """ListGames, and GetView of a game Redis does not hold, through real gRPC
    servers with the error interceptor while the database is down: (code,
    reason) of each."""
    server = grpc.aio.server(interceptors=[ErrorMapping()])
    archive_pb2_grpc.add_ArchiveServicer_to_server(ArchiveServicer(store), server)
    rules = GameRulesServicer("railbarons", r.gamelog, archive=ArchiveFallback("railbarons", store))
    game_pb2_grpc.add_GameRulesServicer_to_server(rules, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    out = []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            calls = [
                archive_pb2_grpc.ArchiveStub(channel).ListGames(archive_pb2.ListGamesRequest()),
                game_pb2_grpc.GameRulesStub(channel).GetView(
                    game_pb2.GetViewRequest(game_id="archived-or-not")
                ),
            ]
            for call in calls:
                try:
                    await call
                except grpc.aio.AioRpcError as err:
                    out.append((err.code(), error_reason(err)))
    finally:
        await server.stop(None)
    return out


async def _pending(client, lifecycle) -> int:
    """Entries of the lifecycle shards delivered to the archiver and not acknowledged."""
    return sum([(await client.xpending(key, "archiver"))["pending"] for key in lifecycle])


async def _no_pending(client, lifecycle) -> bool:
    return await _pending(client, lifecycle) == 0
