"""Results: a finished table's result, and recording it when its game ends."""

from __future__ import annotations

import json

from roundhouse.v1 import game_pb2
from services.lobby.handlers.common import TABLES
from services.lobby.messages import (
    live_table,
    standings_proto,
)
from services.lobby.models import FINISHED, RUNNING
from services.lobby.store import TableRecord
from services.lobby.tables import require_status
from services.rules.results import result_dict


class Results:
    """The results handlers of :class:`services.lobby.server.LobbyServicer`."""

    async def GetTableResult(self, request, context):
        """Standings and seed of a finished game; the rules service refuses
        (FAILED_PRECONDITION ``game_not_over``) while it runs, so the seed
        is only ever given after the end."""
        table = await self._table(request.table_id)
        require_status(table, FINISHED, RUNNING)
        res = await self._call_rules(
            table.title, "GetResult", game_pb2.GetResultRequest(game_id=table.game_id), context
        )
        if table.result is None:
            table = await self.record_result(table.table_id, result_dict(res.result))
        answer = standings_proto(table)
        answer.seed = res.seed
        return answer

    async def record_result(self, table_id: str, result: dict) -> TableRecord:
        """Mark a table finished with ``result`` (``{"scores", "ranks",
        "end_reason"}``); a table keeps its first recorded result."""

        first = []

        def change(t: TableRecord) -> None:
            if t.result is None:
                t.status, t.result = FINISHED, result
                first.append(True)

        table = await self.store.change(table_id, change)
        await self.hot.put(live_table(table))
        if first:
            TABLES.labels(table.title, "finished").inc()
        return table


async def record_finished_game(servicer, fields: dict[str, str]) -> None:
    """Lifecycle handler: record a seat's timeout on its table (the bot that
    plays it now), and store the result of a finished game on its table
    (idempotent: a table keeps its first recorded result)."""
    if "timed_out" in fields:
        table_id = await _table_of(servicer, fields["game_id"])
        if table_id is not None:
            await servicer.record_timeout(table_id, fields)
    if fields.get("type") != "game_finished":
        return
    table_id = await _table_of(servicer, fields["game_id"])
    if table_id is not None:
        await servicer.record_result(table_id, json.loads(fields["result"]))


async def _table_of(servicer, game_id: str) -> str | None:
    live = await servicer.hot.by_game(game_id)
    if live is not None:
        return live.table_id
    table = await servicer.store.by_game(game_id)
    return table.table_id if table else None
