"""The bot seats of games started before the games' records named them (a one-off backfill).

The bot dispatcher learns which seats hosted bots play from the game's own creation record
(``bots``, written by the rules service from ``CreateGame``'s ``bot_policies``), never from the
lobby's records. A game the lobby started before that record existed has no ``bots``, so its
bots would never be asked to move. :func:`backfill_game_bots` gives each such running game
its bots from the lobby's durable table record (the seats of kind ``bot``: the ones the
platform played from the start; seats taken over later are named by the events'
``takeover``) and announces ``bots_recorded`` on the lifecycle stream, so the dispatcher
looks at the game again and plays a bot that holds the move.

The lobby runs it once at start-up, as a supervised background task beside serving
(:func:`services.lobby.server.serve`; a pass that fails is run again after a back-off); it is
idempotent (a record that has ``bots`` is left alone, so a second run, or a second lobby
replica, changes nothing and announces nothing).
See docs/deploy.md "Games started before the bot seats were recorded".
"""

from __future__ import annotations

from services.lobby.models import BOT, RUNNING
from services.lobby.store import TableFilter, TableStore
from services.platform.gamelog import GameLog
from services.platform.logging import get_logger

log = get_logger("lobby")

PAGE = 200
"""Running tables read per page."""


async def backfill_game_bots(store: TableStore, gamelog: GameLog) -> list[str]:
    """Give every running game whose creation record has no ``bots`` the bot seats of its
    table, and announce ``bots_recorded`` (``game_id``, ``title``) for each.

    Returns:
        the game ids backfilled, in the order done (empty when there is nothing to do).
    """
    done: list[str] = []
    token = ""
    while True:
        tables, token = await store.list(TableFilter(statuses=(RUNNING,)), PAGE, token)
        for table in tables:
            bots = {i: s.policy for i, s in enumerate(table.seats) if s.kind == BOT and s.policy}
            if not table.game_id or not bots:
                continue
            if not await gamelog.record_bots(table.game_id, bots):
                continue  # already named (or the game is gone from Redis)
            await gamelog.announce(
                {"type": "bots_recorded", "game_id": table.game_id, "title": table.title}
            )
            log.info("bot seats recorded", game_id=table.game_id, table_id=table.table_id)
            done.append(table.game_id)
        if not token:
            return done
