"""Rematch (issue 32, item 2): ``OfferRematch``, ``AnswerRematch``, ``GetRematch``. The store
and the rules are :mod:`services.lobby.rematch`.

Account events (:mod:`services.lobby.events`), to the persons seated at the finished table
only: ``rematchOffer`` (data ``offered_by``) to each but the offerer, ``rematchDeclined``
(data ``by``) to each but the one who declined, ``rematchStarted`` (data ``new_table_id``) to
each; the new game's ``gameStart`` and ``yourTurn`` follow as for any table.

If the new table cannot be started (a rules service down), it stays open with every seat
filled and the offer ``starting`` with its ``new_table_id``: the owner starts it with
``StartTable``.
"""

from __future__ import annotations

import json
import uuid

import grpc

from roundhouse.v1 import lobby_pb2
from services.lobby.events import REMATCH_DECLINED, REMATCH_OFFER, REMATCH_STARTED
from services.lobby.handlers.common import DENIED, log
from services.lobby.models import FINISHED
from services.lobby.rematch import (
    DECLINED,
    PENDING,
    STARTED,
    STARTING,
    Rematch,
    RematchStore,
    must_accept,
    no_offer,
    require_rematchable,
    rotated,
)
from services.lobby.store import TableRecord
from services.lobby.tables import require_status
from services.platform.auth import Principal
from services.platform.db import utcnow
from services.platform.grpc_errors import ServiceError

REFUSED = grpc.StatusCode.FAILED_PRECONDITION


def rematch_proto(row: Rematch, table: TableRecord) -> lobby_pb2.Rematch:
    """An offer as the ``Rematch`` message (usernames from the finished table's seats)."""
    names = {s.account_id: s.username for s in table.seats if s.account_id}
    accepted = set(json.loads(row.accepted_json))
    accepted |= {s.account_id for s in table.seats if s.account_id} - must_accept(table.seats)
    waiting = must_accept(table.seats) - accepted
    return lobby_pb2.Rematch(
        table_id=row.table_id,
        offered_by=names.get(row.offered_by_id, ""),
        status=row.status,
        accepted=sorted(names[a] for a in accepted if a in names),
        waiting=sorted(names[a] for a in waiting if a in names),
        new_table_id=row.new_table_id or "",
        declined_by=names.get(row.declined_by_id or "", ""),
    )


class Rematches:
    """The rematch handlers of :class:`services.lobby.server.LobbyServicer`."""

    @property
    def rematches(self) -> RematchStore:
        return RematchStore(self.store.sessions)

    async def _finished_seated(self, table_id: str, principal: Principal) -> TableRecord:
        table = await self._table(table_id)
        require_status(table, FINISHED)
        if not any(s.account_id == principal.account_id for s in table.seats if s.account_id):
            raise ServiceError(DENIED, "not_seated", "only a player of this table may do this")
        require_rematchable(table)
        return table

    async def _notify(self, table: TableRecord, type: str, skip: str = "", **data) -> None:
        """One event to each person seated at ``table`` but ``skip`` (best effort)."""
        for seat, s in enumerate(table.seats):
            if s.account_id in must_accept(table.seats) and s.account_id != skip:
                try:
                    await self.events.publish(
                        s.account_id,
                        type,
                        table_id=table.table_id,
                        title=table.title,
                        seat=seat,
                        data=data,
                    )
                except Exception:  # noqa: BLE001 - the offer changed; the event is best effort
                    log.exception("rematch event not published", type=type)

    async def OfferRematch(self, request, context):
        principal = await self._player(context)
        table = await self._finished_seated(request.table_id, principal)
        if not await self.rematches.offer(
            table.table_id, principal.account_id, {principal.account_id}, utcnow()
        ):
            return await self._answer(table, principal, True, context)
        log.info("rematch offered", table_id=table.table_id, by=principal.account_id)
        await self._notify(
            table, REMATCH_OFFER, principal.account_id, offered_by=principal.username
        )
        return await self._answer(table, principal, True, context)

    async def AnswerRematch(self, request, context):
        principal = await self._player(context)
        table = await self._finished_seated(request.table_id, principal)
        return await self._answer(table, principal, request.accept, context)

    async def GetRematch(self, request, context):
        table = await self._table(request.table_id)
        row = await self.rematches.get(table.table_id)
        if row is None:
            raise no_offer()
        return rematch_proto(row, table)

    async def _answer(self, table: TableRecord, principal: Principal, accept: bool, context):
        needed = must_accept(table.seats)
        went = {}

        def change(row: Rematch) -> None:
            went["before"] = row.status
            if row.status != PENDING:
                state = STARTED if row.status == STARTING else row.status
                if accept and row.status in (STARTING, STARTED):
                    return  # accepting a started rematch again: the answer is the same
                raise ServiceError(
                    REFUSED, f"rematch_{state}", f"this rematch is {state}", status=state
                )
            if not accept:
                row.status, row.declined_by_id = DECLINED, principal.account_id
                return
            accepted = set(json.loads(row.accepted_json)) | {principal.account_id}
            row.accepted_json = json.dumps(sorted(accepted))
            if needed <= accepted:
                row.status = STARTING
                row.new_table_id = uuid.uuid4().hex[:12]

        row = await self.rematches.change(table.table_id, change)
        if went["before"] == PENDING and row.status == DECLINED:
            log.info("rematch declined", table_id=table.table_id, by=principal.account_id)
            await self._notify(table, REMATCH_DECLINED, principal.account_id, by=principal.username)
        elif went["before"] == PENDING and row.status == STARTING:
            row = await self._start_rematch(table, row, context)
        return rematch_proto(row, table)

    async def _start_rematch(self, table: TableRecord, row: Rematch, context) -> Rematch:
        """Create the new table (seats rotated) and start it; the offer ``started``."""
        assert row.new_table_id
        fresh = TableRecord(
            table_id=row.new_table_id,
            title=table.title,
            num_players=table.num_players,
            options_json=table.options_json,
            seed=None,
            seats=rotated(table.seats),
            owner_id=table.owner_id,
            owner=table.owner,
            clock=table.clock,
        )
        await self.store.create(fresh)
        await self._start_table(fresh.table_id, lambda t: None, context)

        def started(r: Rematch) -> None:
            r.status = STARTED

        row = await self.rematches.change(table.table_id, started)
        log.info("rematch started", table_id=table.table_id, new_table_id=fresh.table_id)
        await self._notify(table, REMATCH_STARTED, new_table_id=fresh.table_id)
        return row


__all__ = ["Rematches", "rematch_proto"]
