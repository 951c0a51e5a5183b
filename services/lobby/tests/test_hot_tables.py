"""The hot index's game -> table link (services/lobby/hot_tables.py) against a real Redis:
kept in memory once read, never taken for a table now playing another game."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from services.lobby.hot_tables import RUNNING, HotTables, LiveSeat, LiveTable


def test_by_game_keeps_the_link_and_refuses_a_table_playing_another_game(redis_url, key_prefix):
    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        hot = HotTables(r, key_prefix)
        first = LiveTable("t1", "g1", "railbarons", RUNNING, [LiveSeat("a"), LiveSeat("b")])
        await hot.put(first)
        assert (await hot.by_game("g1")) == first
        # the link is kept: gone from Redis, still found (a game id never changes table)
        await r.delete(hot.game_key("g1"))
        assert (await hot.by_game("g1")) == first
        # the table's record now names another game (its first start failed, a second one
        # made g2): g1's kept link does not make g2's table g1's
        second = LiveTable("t1", "g2", "railbarons", RUNNING, [LiveSeat("a"), LiveSeat("b")])
        await hot.put(second)
        assert await hot.by_game("g1") is None
        assert (await hot.by_game("g2")) == second
        assert await hot.by_game("unknown") is None
        # a start that failed forgets its link
        await hot.drop("t1", "g2")
        assert await hot.by_game("g2") is None
        await r.aclose()

    asyncio.run(go())
