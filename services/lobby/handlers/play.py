"""Playing at a table: a seat's view and moves, a move, resigning, pausing and resuming,
and recording a seat's timeout."""

from __future__ import annotations

import base64
import json

import grpc

from roundhouse.v1 import game_pb2
from services.lobby.handlers.common import (
    DENIED,
    MOVES,
    log,
)
from services.lobby.hot_tables import LiveTable
from services.lobby.messages import (
    live_table,
    table_proto,
)
from services.lobby.models import FINISHED, RUNNING
from services.lobby.store import TableRecord
from services.lobby.tables import require_status
from services.match.controls import ClockSettings, parse_clock_settings
from services.match.resignation import resignation_policy, takeover_on_resign
from services.platform.auth import (
    Principal,
    require_principal,
)
from services.platform.channels import game_metadata
from services.platform.gamelog import legal_moves_fields, parse_legal_moves
from services.platform.grpc_errors import ServiceError, abort, error_info, relay
from services.rules.results import result_dict


class Play:
    """The play handlers of :class:`services.lobby.server.LobbyServicer`."""

    async def GetSeatView(self, request, context):
        live = await self._live(request.table_id)
        view = game_pb2.GetViewRequest(game_id=live.game_id)
        if request.HasField("seat"):
            principal = await self._player(context)
            self._own_seat(live, request.seat, principal)
            view.seat = request.seat
        return await self._call_rules(live.title, "GetView", view, context)

    async def ListMoves(self, request, context):
        principal = await self._player(context)
        if not request.HasField("seat"):
            await abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "no_seat", "ListMoves needs a seat"
            )
        live, stored = await self._live_and_moves(request.table_id, request.seat)
        self._own_seat(live, request.seat, principal)
        if stored is not None:
            return stored
        legal = game_pb2.ListLegalActionsRequest(game_id=live.game_id, seat=request.seat)
        return await self._call_rules(live.title, "ListLegalActions", legal, context)

    async def _live_and_moves(
        self, table_id: str, seat: int
    ) -> tuple[LiveTable, game_pb2.ListLegalActionsResponse | None]:
        """:meth:`_live` and :meth:`_stored_moves`; in one Redis round trip when this lobby
        already knows the table's game (the link is checked against the table read with the
        moves: a table playing another game is read again)."""
        game_id = self._game_of_table.get(table_id)
        if game_id is not None:
            key = self.gamelog.moves_key(game_id)
            live, values = await self.hot.get_with_fields(table_id, key, legal_moves_fields(seat))
            if live is not None and live.game_id == game_id:
                return live, _moves_answer(parse_legal_moves(values), seat)
        live = await self._live(table_id)
        self._game_of_table[table_id] = live.game_id
        return live, await self._stored_moves(live.game_id, seat)

    async def _stored_moves(
        self, game_id: str, seat: int
    ) -> game_pb2.ListLegalActionsResponse | None:
        """The seat's legal moves as the rules service stored them with the game's latest
        entry (``services.platform.gamelog``, written with the entry, so never behind the log):
        its answer, or an empty one at that version for a seat that is not active; None when
        none are stored for the seat (a finished game, a game stored before they were): the
        caller asks the rules service."""
        return _moves_answer(await self.gamelog.legal_moves(game_id, seat), seat)

    async def SubmitMove(self, request, context):
        """Forward a seat's move. At a finished table only a retry (same
        idempotency key and request) of a move that was applied is answered,
        with its first answer; anything else there is ``not_running``."""
        principal = await self._player(context)
        live = await self._live(request.table_id)
        retry_after_end = live.status == FINISHED and bool(request.idempotency_key)
        if not retry_after_end:
            require_status(live, RUNNING)
        try:
            self._own_seat(live, request.seat, principal)
        except ServiceError:
            MOVES.labels(live.title, "denied").inc()
            raise
        await self.quotas.move(principal.account_id)
        forward = game_pb2.SubmitActionRequest(
            game_id=live.game_id,
            seat=request.seat,
            expected_version=request.expected_version,
            idempotency_key=request.idempotency_key,
        )
        which = request.WhichOneof("move")
        if which == "action":
            forward.action.CopyFrom(request.action)
        elif which == "action_json":
            forward.action_json = request.action_json
        else:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "missing_action",
                "the request carries no move",
            )
        try:
            response = await self.rules(live.title).SubmitAction(
                forward,
                timeout=self.rules_timeout(context),
                metadata=game_metadata(live.game_id, self.internal),
            )
        except grpc.aio.AioRpcError as err:
            MOVES.labels(live.title, err.code().name.lower()).inc()
            if retry_after_end:  # not a retry of an applied move
                require_status(live, RUNNING)
            await relay(context, err)
        MOVES.labels(live.title, "applied").inc()
        return response

    async def Resign(self, request, context):
        """The seat's account gives up (see ``services/match/resignation.py``).
        ``continue`` titles: the seat is handed to the takeover policy first (so
        the dispatcher plays its turns), then the resignation is recorded; if the
        rules service refuses, the seat is handed back."""
        principal = await self._player(context)
        if not request.HasField("seat"):
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "no_seat", "Resign needs a seat")
        seat = request.seat
        live = await self._live(request.table_id)
        require_status(live, RUNNING)
        self._own_seat(live, seat, principal)
        policy = resignation_policy(live.title, self.settings.resignation)
        clock = parse_clock_settings(live.clock) if live.clock else None
        takeover = takeover_on_resign(policy, clock)

        def hand_over(t: TableRecord) -> None:
            require_status(t, RUNNING)
            self._own_seat(t, seat, principal)
            t.seats[seat].resigned = True
            t.seats[seat].policy = takeover

        table = await self._change(request.table_id, hand_over)
        await self.hot.put(live_table(table))
        try:
            answer = await self.rules(live.title).Resign(
                game_pb2.ResignRequest(game_id=live.game_id, seat=seat),
                timeout=self.rules_timeout(context),
                metadata=game_metadata(live.game_id, self.internal),
            )
        except grpc.aio.AioRpcError as err:

            def hand_back(t: TableRecord) -> None:
                t.seats[seat].resigned, t.seats[seat].policy = False, ""

            table = await self.store.change(request.table_id, hand_back)
            await self.hot.put(live_table(table))
            await relay(context, err)
        log.info(
            "seat resigned",
            table_id=table.table_id,
            seat=seat,
            game_ends=answer.finished,
            takeover=takeover,
        )
        if answer.finished:
            res = await self._call_rules(
                live.title, "GetResult", game_pb2.GetResultRequest(game_id=live.game_id), context
            )
            table = await self.record_result(table.table_id, result_dict(res.result))
        return table_proto(table)

    def _require_organiser(self, t: TableRecord, principal: Principal) -> None:
        """The table's owner, an admin, or an internal service (the tournament
        service pausing its tables); else PERMISSION_DENIED ``not_organiser``."""
        if principal.is_internal:
            return
        if principal.account_id != t.owner_id and not principal.is_admin:
            raise ServiceError(
                DENIED,
                "not_organiser",
                f"only the table's organiser ({t.owner}) or an admin may pause or resume it",
                owner=t.owner,
            )

    async def _set_paused(self, request, context, paused: bool):
        principal = await require_principal(context)
        table = await self._table(request.table_id)
        self._require_organiser(table, principal)
        require_status(table, RUNNING)
        try:
            await self.rules(table.title).SetPaused(
                game_pb2.SetPausedRequest(game_id=table.game_id, paused=paused),
                timeout=self.rules_timeout(context),
                metadata=game_metadata(table.game_id, self.internal),
            )
        except grpc.aio.AioRpcError as err:
            info = error_info(err)
            # the game is so already (a write of the copy below was lost): the copy follows
            already = info is not None and info.reason == (
                "already_paused" if paused else "not_paused"
            )
            if already and table.paused != paused:
                await self._record_paused(table.table_id, paused)
            await relay(context, err)
        table = await self._record_paused(table.table_id, paused)
        log.info("table paused" if paused else "table resumed", table_id=table.table_id)
        return table_proto(table)

    async def _record_paused(self, table_id: str, paused: bool) -> TableRecord:
        """The table's copy of the game's pause (``Table.paused``)."""

        def change(t: TableRecord) -> None:
            t.paused = paused

        return await self.store.change(table_id, change)

    async def PauseTable(self, request, context):
        """The organiser stops the table's clocks (module docstring of services/clocks)."""
        return await self._set_paused(request, context, True)

    async def ResumeTable(self, request, context):
        return await self._set_paused(request, context, False)

    async def record_timeout(self, table_id: str, fields: dict[str, str]) -> None:
        """A seat timed out (lifecycle ``timed_out``): the table shows the bot
        that plays it now (``takeover``) from the entry's version, and a
        forfeited seat as resigned (idempotent)."""
        seat = int(fields["timed_out"])
        takeover = json.loads(fields.get("takeover", "{}"))
        version = int(fields["version"])

        def change(t: TableRecord) -> None:
            record = t.seats[seat]
            if record.taken_over_at is not None or record.resigned:
                return
            clock = parse_clock_settings(t.clock) if t.clock else ClockSettings()
            if clock.timeout_policy == "forfeit":
                record.resigned = True
            if str(seat) in takeover:
                record.policy = takeover[str(seat)]
                record.taken_over_at = version

        table = await self.store.change(table_id, change)
        await self.hot.put(live_table(table))


def _moves_answer(
    found: tuple[int, list[int], str] | None, seat: int
) -> game_pb2.ListLegalActionsResponse | None:
    """ListMoves' answer from the stored moves (``GameLog.legal_moves``): the seat's, or an
    empty one at that version for a seat that is not active; None when none are stored for
    an active seat, or none at all."""
    if found is None:
        return None
    version, active, field = found
    if field:
        return game_pb2.ListLegalActionsResponse.FromString(base64.b64decode(field))
    if seat not in active:
        return game_pb2.ListLegalActionsResponse(version=version)
    return None
