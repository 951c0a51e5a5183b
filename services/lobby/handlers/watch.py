"""Watching: a table's game as a stream of updates, and an account's event stream."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json

import grpc

from roundhouse.v1 import game_pb2, lobby_pb2
from services.accounts.limiter import peer_host
from services.lobby.events import (
    YOUR_TURN,
    BadEventId,
    Event,
    Pushed,
    check_event_id,
    follow_on,
)
from services.lobby.handlers.common import DENIED
from services.lobby.hot_tables import LiveTable
from services.lobby.messages import live_table
from services.lobby.models import FINISHED, OPEN, RUNNING, STARTING
from services.lobby.tables import require_status
from services.platform.auth import (
    current_principal,
    require_principal,
)
from services.platform.channels import game_metadata
from services.platform.grpc_errors import abort, relay

WATCH_RETRIES = 5
"""Times in a row the lobby resumes a dropped watch before it gives up."""
WATCH_START_POLL_S = 0.25
"""How often a watch of a table that has not started looks for the start (Redis)."""
WATCH_ABORT_CHECK_S = 5.0
"""How often such a watch checks the database for an abort."""
EVENTS_READ_COUNT = 500
"""Account events one read of ``StreamEvents`` takes at most."""


class Watch:
    """The watch handlers of :class:`services.lobby.server.LobbyServicer`."""

    async def WatchTable(self, request, context):
        """Relay the game's updates; on a table that has not started, wait for
        the start first. The watches of one game share one upstream watch
        (:mod:`services.lobby.fanout`, which also resumes it when a rules
        replica restarts); open watches per account and per connection are
        bounded, and so is the rate of new ones (:mod:`services.lobby.quotas`)."""
        principal = current_principal()
        account_id = principal.account_id if principal is not None else ""
        connection = context.peer()
        with self.watches.admit(account_id, connection):
            await self.quotas.watch_opened(account_id or f"peer:{peer_host(connection)}")
            live = await self._wait_for_start(request.table_id)
            await self._check_watch_version(live, request.from_version, context)
            try:
                async for update in self.watches.follow(
                    live.title, live.game_id, request.from_version
                ):
                    yield update
            except grpc.aio.AioRpcError as err:
                await relay(context, err)

    def _watch_game(self, title: str, game_id: str, from_version: int):
        """The rules service's ``WatchGame`` stream (the fan-out hub's upstream)."""
        watch = game_pb2.WatchGameRequest(game_id=game_id, from_version=from_version)
        return self.rules(title).WatchGame(watch, metadata=game_metadata(game_id, self.internal))

    async def _check_watch_version(self, live: LiveTable, from_version: int, context) -> None:
        """``from_version`` within the game, as the rules service's ``WatchGame``
        checks it (the shared upstream always starts at 0)."""
        if from_version == 0:
            return
        if from_version < 0:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_version",
                "from_version must be 0 or more",
                from_version=from_version,
                min_version=0,
            )
        view = await self._call_rules(
            live.title, "GetView", game_pb2.GetViewRequest(game_id=live.game_id), context
        )
        if from_version > view.version:
            await abort(
                context,
                grpc.StatusCode.OUT_OF_RANGE,
                "bad_version",
                f"from_version must be at most {view.version} (the game's current version)",
                from_version=from_version,
                max_version=view.version,
                current_version=view.version,
            )

    async def _wait_for_start(self, table_id: str) -> LiveTable:
        """The table once its game exists. Polls the hot index (written just
        before the game is created), confirming in the database, which it also
        reads now and then: NOT_FOUND for an unknown table, and an abort ends
        the wait with FAILED_PRECONDITION ``table_aborted``."""
        polls_per_check = max(1, int(WATCH_ABORT_CHECK_S / WATCH_START_POLL_S))
        for poll in itertools.count():
            live = await self.hot.get(table_id)
            if live is not None or poll % polls_per_check == 0:
                table = await self._table(table_id)
                if table.status in (RUNNING, FINISHED):
                    if live is None:
                        live = live_table(table)
                        await self.hot.put(live)
                    return live
                require_status(table, OPEN, STARTING)
            await asyncio.sleep(WATCH_START_POLL_S)
        raise AssertionError("unreachable")  # pragma: no cover

    async def StreamEvents(self, request, context):
        """The caller's account events (see :mod:`services.lobby.events`): the
        ones after ``after_event_id``, or the pending ones, then live ones
        until the caller hangs up. With ``with_moves`` a ``yourTurn`` still current when it
        is sent carries the seat's legal moves (those stored with the game's entry). An
        account holds at most ``event_streams_per_account`` open streams on one lobby
        (RESOURCE_EXHAUSTED ``too_many_streams``), a lobby at most
        ``lobby_max_event_streams`` (``too_many_watchers``)."""
        principal = await require_principal(context)
        if not principal.account_id:
            await abort(context, DENIED, "account_needed", "events belong to accounts")
        account_id = principal.account_id
        waiter = self.hub.register(account_id)  # QuotaExceeded too_many_streams
        try:
            if request.after_event_id:
                try:
                    last = check_event_id(request.after_event_id)
                except BadEventId as exc:
                    await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "bad_event_id", str(exc))
                read = await self.events.after(account_id, last)
            else:
                read, last = await self.events.opening(account_id)
            batch: list[Pushed] | None = [Pushed("", event) for event in read]
            while True:
                for item in batch or ():
                    yield await self._event_message(item, request.with_moves)
                    last = item.event.event_id
                # a batch short of the read's bound was everything up to the read; what
                # was published after it set the waiter (cleared before the read), so the
                # stream waits after it too, instead of reading once more to find nothing
                read_again = len(batch or ()) >= EVENTS_READ_COUNT
                if not read_again:
                    try:
                        async with asyncio.timeout(self.settings.events_poll_s):
                            await waiter.wait()
                    except TimeoutError:
                        read_again = True  # the poll, in case a message was missed
                waiter.clear()
                pushed, reread = waiter.take()
                # the events announced since, when they follow on from the last one sent;
                # else (a message missed, a poll, a full read) the stream after it
                batch = None if read_again or reread else follow_on(pushed, last)
                if batch is None:
                    read = await self.events.after(account_id, last, EVENTS_READ_COUNT)
                    batch = [Pushed("", event) for event in read]
        finally:
            self.hub.unregister(account_id, waiter)

    async def _event_message(self, item: Pushed, with_moves: bool) -> lobby_pb2.AccountEvent:
        """One event as sent; with ``with_moves`` a yourTurn carries the seat's legal moves
        when they are those of its version: from its announcement, or (an event read from
        the stream, or announced without them) from where the rules service stores them."""
        event = item.event
        message = _event_proto(event)
        if not with_moves or event.type != YOUR_TURN:
            return message
        if item.moves is None:
            moves = await self._stored_moves(event.game_id, event.seat)
        elif item.moves:
            moves = game_pb2.ListLegalActionsResponse.FromString(base64.b64decode(item.moves))
        else:  # announced without: they were not current when it was published
            return message
        if moves is not None and moves.version == event.version and moves.actions_json:
            message.moves.CopyFrom(moves)
        return message


def _event_proto(e: Event) -> lobby_pb2.AccountEvent:
    return lobby_pb2.AccountEvent(
        event_id=e.event_id,
        type=e.type,
        table_id=e.table_id,
        game_id=e.game_id,
        title=e.title,
        seat=e.seat,
        version=e.version,
        at_ms=e.at_ms,
        data_json=json.dumps(e.data, sort_keys=True, separators=(",", ":")),
    )
