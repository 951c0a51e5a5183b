"""The bot dispatcher's handling of lifecycle events (services/bots/dispatcher.py),
against a real Redis with a recording stand-in for Celery: one task per
active bot seat, nothing for players or unknown games, and never twice for
the same (game, version, seat)."""

from __future__ import annotations

import asyncio
import json

import redis.asyncio as aioredis

from services.bots.dispatcher import Dispatcher
from services.common.settings import Settings
from services.lobby.tables import BOT, PLAYER, SeatRecord, TableRecord


class RecordingCelery:
    def __init__(self):
        self.sent = []

    def send_task(self, name, args, queue):
        self.sent.append((name, tuple(args), queue))


def test_one_task_per_bot_turn_and_never_twice(redis_url, key_prefix):
    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        celery = RecordingCelery()
        d = Dispatcher(Settings(redis_url=redis_url, key_prefix=key_prefix), r, celery)
        table = TableRecord(
            "t1",
            "railbarons",
            3,
            "",
            None,
            [
                SeatRecord(PLAYER, "ada"),
                SeatRecord(BOT, "bot:greedy", "greedy"),
                SeatRecord(BOT, "bot:random", "random"),
            ],
        )
        await r.set(f"{key_prefix}:table:t1", table.to_json())
        await r.set(f"{key_prefix}:game-table:g1", "t1")
        event = {
            "type": "turn",
            "game_id": "g1",
            "title": "railbarons",
            "version": "7",
            "active": json.dumps([0, 1, 2]),
        }
        assert await d.handle(event) == 2
        assert await d.handle(event) == 0  # re-delivered: nothing new
        assert celery.sent == [
            (
                "roundhouse.bots.play_turn",
                ("railbarons", "g1", 1, 7, "greedy"),
                f"{key_prefix}-bots",
            ),
            (
                "roundhouse.bots.play_turn",
                ("railbarons", "g1", 2, 7, "random"),
                f"{key_prefix}-bots",
            ),
        ]
        assert await d.handle({**event, "active": json.dumps([0])}) == 0  # a player's turn
        assert await d.handle({**event, "game_id": "imported"}) == 0  # no table
        assert await d.handle({**event, "type": "game_finished"}) == 0
        await r.aclose()

    asyncio.run(go())
