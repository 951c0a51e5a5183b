"""The lobby's table cache (``services/lobby/table_cache.py``): a cached table changes the
moment it is changed, in the lobby that changed it and, over Redis pub/sub, in another
lobby replica; a read that began before a change never puts the old record back; a caller
changing what it was given does not change the cache."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import redis.asyncio as aioredis

from services.accounts.store import AccountStore
from services.lobby.models import EMPTY, FINISHED, PLAYER, RUNNING
from services.lobby.store import SeatRecord, TableFilter, TableRecord, TableStore
from services.lobby.table_cache import TableCache, follow_changes, publish_change
from services.platform.db import create_engine, session_factory


async def _until(predicate, seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "not within the deadline"
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def _two_lobbies(store_url: str, redis_url: str, prefix: str) -> AsyncIterator[tuple]:
    """Two stores on one database, each with its own cache (an hour), announcing and
    following changes as two lobby processes do; and the owner's account id."""
    engine = create_engine(store_url)
    sessions = session_factory(engine)
    client = aioredis.Redis.from_url(redis_url)
    stop = asyncio.Event()
    caches = [TableCache(3600), TableCache(3600)]
    stores = [
        TableStore(sessions, cache, lambda t: publish_change(client, prefix, t)) for cache in caches
    ]
    followers = [
        asyncio.create_task(follow_changes(client, prefix, cache, stop)) for cache in caches
    ]
    try:
        ada = await AccountStore(sessions).create_account("ada", None)
        await stores[0].create(
            TableRecord("T1", "railbarons", 2, "", None, [SeatRecord(), SeatRecord()], ada.id)
        )
        # subscribed (each follower empties its cache once it is): a read is then kept
        await asyncio.sleep(0.3)
        yield stores, caches, ada.id
    finally:
        stop.set()
        await asyncio.gather(*followers)
        await client.aclose()
        await engine.dispose()


def _sit(account_id: str):
    def change(table: TableRecord) -> None:
        table.seats[0] = SeatRecord(PLAYER, account_id, "ada")

    return change


def test_a_change_reaches_the_cache_of_both_lobbies(store_url, redis_url, key_prefix):
    async def go():
        async with _two_lobbies(store_url, redis_url, key_prefix) as (stores, caches, ada):
            here, there = stores
            for store, cache in zip(stores, caches, strict=True):
                assert (await store.get("T1")).seats[0].kind == EMPTY
                assert cache.cached("T1")
            await here.change("T1", _sit(ada))
            # the lobby that changed it: at once, without waiting for any message
            assert (await here.get("T1")).seats[0].account_id == ada
            # the other replica: as soon as the announcement arrives
            await _until(lambda: not caches[1].cached("T1"))
            assert (await there.get("T1")).seats[0].account_id == ada
            assert caches[1].cached("T1")  # and kept again

            def finish(table: TableRecord) -> None:
                table.status = FINISHED
                table.result = {"scores": [1, 2], "ranks": [2, 1], "end_reason": "normal"}

            await there.change("T1", lambda t: setattr(t, "status", RUNNING))
            await there.change("T1", finish)
            await _until(lambda: not caches[0].cached("T1"))
            (listed,), _ = await here.list(TableFilter(statuses=(FINISHED,)), 10)
            assert listed.status == FINISHED and listed.result["ranks"] == [2, 1]
            assert (await here.get("T1")).status == FINISHED

    asyncio.run(go())


def test_a_refused_change_leaves_the_cached_table_as_it_was(store_url, redis_url, key_prefix):
    async def go():
        async with _two_lobbies(store_url, redis_url, key_prefix) as (stores, _, ada):
            here = stores[0]
            await here.get("T1")

            def refuse(table: TableRecord) -> None:
                table.seats[1] = SeatRecord(PLAYER, ada, "ada")
                raise ValueError("refused")

            try:
                await here.change("T1", refuse)
            except ValueError:
                pass
            assert [s.kind for s in (await here.get("T1")).seats] == [EMPTY, EMPTY]

    asyncio.run(go())


def test_changing_a_returned_record_does_not_change_the_cache():
    cache = TableCache(3600)
    cache.put(TableRecord("T1", "railbarons", 2, "", None, [SeatRecord()], "owner"), 0)
    got = cache.get("T1")
    assert got is not None
    got.status = FINISHED
    got.seats[0].kind = PLAYER
    again = cache.get("T1")
    assert again is not None and again.status != FINISHED and again.seats[0].kind == EMPTY


def test_a_read_begun_before_a_change_is_not_kept():
    cache = TableCache(3600)
    generation = cache.generation()  # a read of the store starts
    cache.forget("T1")  # meanwhile the table changes (here or announced by another lobby)
    cache.put(TableRecord("T1", "railbarons", 2, "", None, [], "owner"), generation)
    assert not cache.cached("T1")
    cache.put(TableRecord("T1", "railbarons", 2, "", None, [], "owner"), cache.generation())
    assert cache.cached("T1")


def test_no_cache_when_its_time_is_zero():
    cache = TableCache(0)
    cache.put(TableRecord("T1", "railbarons", 2, "", None, [], "owner"), cache.generation())
    assert cache.get("T1") is None


def test_a_listing_shows_a_table_created_in_another_lobby(store_url, redis_url, key_prefix):
    async def go():
        async with _two_lobbies(store_url, redis_url, key_prefix) as (stores, caches, ada):
            here, there = stores
            listed, _ = await here.list(TableFilter(), 10)
            assert [t.table_id for t in listed] == ["T1"]
            assert caches[0].page((TableFilter(), 10, "")) is not None  # the page is kept
            await there.create(
                TableRecord("T2", "railbarons", 2, "", None, [SeatRecord(), SeatRecord()], ada)
            )
            await _until(lambda: caches[0].page((TableFilter(), 10, "")) is None)
            listed, _ = await here.list(TableFilter(), 10)
            assert sorted(t.table_id for t in listed) == ["T1", "T2"]

    asyncio.run(go())


def test_a_kept_answer_goes_with_any_table_s_change():
    cache = TableCache(3600)
    cache.keep_answer(("table", "T1"), "answer", cache.generation())
    assert cache.answer(("table", "T1")) == "answer"
    cache.forget("T2")  # another table changed: it may be in any listing, so every answer goes
    assert cache.answer(("table", "T1")) is None
    generation = cache.generation()  # an answer is being built
    cache.forget("T1")  # meanwhile a change
    cache.keep_answer(("table", "T1"), "old", generation)
    assert cache.answer(("table", "T1")) is None
    cache.keep_answer(("table", "T1"), "new", cache.generation())
    cache.clear()  # a (re)subscription
    assert cache.answer(("table", "T1")) is None
    off = TableCache(0)
    off.keep_answer(("table", "T1"), "answer", off.generation())
    assert off.answer(("table", "T1")) is None
