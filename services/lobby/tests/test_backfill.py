"""Games started before the games' creation records named their bots get them from the lobby's
table records (services/lobby/backfill.py), once, with a ``bots_recorded`` announcement."""

from __future__ import annotations

import json

from roundhouse.v1 import lobby_pb2
from services.lobby.backfill import backfill_game_bots
from services.platform.gamelog import GameLog


async def _started(env, owner, bots: dict[int, str], players: int = 3) -> str:
    table = await env.table(owner, players)
    tid = table.table_id
    await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=owner.md)
    for seat, policy in bots.items():
        await env.lobby.AddBot(
            lobby_pb2.AddBotRequest(table_id=tid, seat=seat, policy=policy), metadata=owner.md
        )
    table = await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=owner.md)
    return table.game_id


async def _forget_bots(env, gamelog: GameLog, game_id: str) -> None:
    """Make the game's record look like one written before records named their bots."""
    record = await gamelog.meta(game_id)
    del record["bots"]
    await env.redis.set(gamelog.meta_key(game_id), json.dumps(record))


async def _announced(env, gamelog: GameLog) -> list[dict]:
    entries = await gamelog.lifecycle_entries()
    return [f for _, f in entries if f.get("type") == "bots_recorded"]


def test_old_games_get_their_bot_seats_once(lobby_env):
    async def body(env):
        gamelog = GameLog(env.redis, env.settings.key_prefix)
        ada = await env.person("ada")
        old = await _started(env, ada, {1: "greedy", 2: "random"})
        new = await _started(env, ada, {1: "random"}, players=2)
        gone = await _started(env, ada, {1: "random", 2: "random"})
        await _forget_bots(env, gamelog, old)
        await env.redis.delete(gamelog.meta_key(gone))  # its game left Redis: nothing to do
        before = (await gamelog.meta(new))["bots"]

        assert await backfill_game_bots(env.store, gamelog) == [old]
        assert (await gamelog.meta(old))["bots"] == {"1": "greedy", "2": "random"}
        assert (await gamelog.meta(new))["bots"] == before  # already named: untouched
        assert await gamelog.meta(gone) is None
        assert await _announced(env, gamelog) == [
            {"type": "bots_recorded", "game_id": old, "title": "railbarons"}
        ]
        # a second run (a restart, another lobby replica) changes and announces nothing
        assert await backfill_game_bots(env.store, gamelog) == []
        assert len(await _announced(env, gamelog)) == 1

    lobby_env(body)


def test_only_the_platform_s_own_bot_seats_are_recorded(lobby_env):
    """A seat a bot took over later (a timeout or a resignation) is not a bot seat of the
    record: the events' ``takeover`` names those."""

    async def body(env):
        gamelog = GameLog(env.redis, env.settings.key_prefix)
        ada = await env.person("ada")
        game_id = await _started(env, ada, {1: "random"}, players=2)
        await _forget_bots(env, gamelog, game_id)

        def takeover(t):
            t.seats[0].policy = "greedy"  # seat 0 (ada's) now played by a bot

        table = await env.store.by_game(game_id)
        await env.store.change(table.table_id, takeover)
        assert await backfill_game_bots(env.store, gamelog) == [game_id]
        assert (await gamelog.meta(game_id))["bots"] == {"1": "random"}

    lobby_env(body)
