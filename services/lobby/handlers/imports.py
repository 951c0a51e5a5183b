"""Recorded games as tables: import a game recorded on 18xx.games, export a table's game.

How a recorded game becomes a table (``ImportRecordedGame``):

* The caller (``tables:write``) owns the table. The title's rules service replays the
  recording with every check on and stores it under the game id ``<title>-<table id>``,
  owner ``table:<table id>`` (``roundhouse.v1.e1894.Interchange/ImportGame``); a recording
  our rules refuse is relayed as it is (FAILED_PRECONDITION, the rule's code, ErrorInfo
  ``action_id``) and nothing is stored: the table is written only after the game was.
* The recorded players are *guests*: names (``Seat.guest``), not accounts, since nothing
  ties an 18xx.games player to one of our accounts. A finished recording's seats are
  ``empty`` seats with their guest; its result is recorded on the table at once, and the
  game is archived like any finished game (the archive's seats are the guests).
* An unfinished recording becomes a running table whose every seat is held by the caller
  (kind ``player``, the guest kept as the seat's name), who plays it on from there, seat
  after seat, like any player; the others watch.
* It counts as a new table of the caller (``tables_per_account``, ``table_rate``), checked
  before the import.

``ExportTable`` gives a finished table's game back in the title's interchange format.
"""

from __future__ import annotations

import uuid

import grpc

from roundhouse.v1 import e1894_interchange_pb2, e1894_interchange_pb2_grpc, lobby_pb2
from services.accounts.rules import TABLES_WRITE
from services.lobby.handlers.common import DENIED, TABLES, log
from services.lobby.messages import live_table, table_proto
from services.lobby.models import FINISHED, PLAYER, RUNNING
from services.lobby.store import SeatRecord, TableRecord
from services.lobby.tables import require_status
from services.platform.auth import require_scope
from services.platform.channels import game_metadata
from services.platform.grpc_errors import abort, relay
from services.rules.results import result_dict

INTERCHANGE_FORMATS = {"e1894": "18xx.games"}
"""The titles whose rules service serves an Interchange (import and export), and its format."""


class Imports:
    """The import and export handlers of :class:`services.lobby.server.LobbyServicer`."""

    def _interchange(self, title: str) -> e1894_interchange_pb2_grpc.InterchangeStub:
        self.rules(title)  # opens the title's channel on first use
        return e1894_interchange_pb2_grpc.InterchangeStub(self._channels[title])

    async def _require_interchange(self, title: str, context) -> None:
        if title not in INTERCHANGE_FORMATS or title not in self.settings.rules_addresses:
            known = ", ".join(sorted(INTERCHANGE_FORMATS))
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "no_interchange",
                f"recorded games are imported and exported for {known} only",
            )

    async def ImportRecordedGame(self, request, context):
        principal = await require_scope(context, TABLES_WRITE)
        if not principal.account_id:
            await abort(context, DENIED, "account_needed", "tables are owned by accounts")
        await self._require_interchange(request.title, context)
        table_id = uuid.uuid4().hex[:12]
        game_id = f"{request.title}-{table_id}"
        async with self.quotas.creating_table(principal.account_id):
            try:
                imported = await self._interchange(request.title).ImportGame(
                    e1894_interchange_pb2.ImportGameRequest(
                        game_json=request.game_json, game_id=game_id, owner=f"table:{table_id}"
                    ),
                    timeout=self.rules_timeout(context),
                    metadata=game_metadata(game_id, self.internal),
                )
            except grpc.aio.AioRpcError as err:
                await relay(context, err)
            finished = bool(imported.game_end_reason)
            names = list(imported.player_names)
            table = TableRecord(
                table_id=table_id,
                title=request.title,
                num_players=len(names),
                options_json=imported.info.options_json,
                seed=None,
                seats=[
                    SeatRecord(guest=name)
                    if finished
                    else SeatRecord(
                        kind=PLAYER,
                        account_id=principal.account_id,
                        username=principal.username,
                        guest=name,
                    )
                    for name in names
                ],
                owner_id=principal.account_id,
                owner=principal.username,
                status=FINISHED if finished else RUNNING,
                game_id=game_id,
                result=result_dict(imported.result) if finished else None,
            )
            try:
                await self.store.create(table)
            except BaseException:
                # the game is stored, the table is not: say so (the archive keeps a finished one)
                log.exception("imported game without a table", game_id=game_id, table_id=table_id)
                raise
        await self.hot.put(live_table(table))
        TABLES.labels(table.title, "imported").inc()
        log.info(
            "recorded game imported",
            table_id=table_id,
            game_id=game_id,
            actions=imported.version,
            finished=finished,
            owner=principal.account_id,
        )
        return table_proto(table)

    async def ExportTable(self, request, context):
        table = await self._table(request.table_id)
        await self._require_interchange(table.title, context)
        require_status(table, FINISHED)
        try:
            exported = await self._interchange(table.title).ExportGame(
                e1894_interchange_pb2.ExportGameRequest(game_id=table.game_id),
                timeout=self.rules_timeout(context),
                metadata=game_metadata(table.game_id, self.internal),
            )
        except grpc.aio.AioRpcError as err:
            await relay(context, err)
        return lobby_pb2.ExportTableResponse(
            table_id=table.table_id,
            format=INTERCHANGE_FORMATS[table.title],
            game_json=exported.game_json,
        )


__all__ = ["INTERCHANGE_FORMATS", "Imports"]
