"""The lobby's tables: create, read, list, start and abort a table."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc

from roundhouse.v1 import game_pb2, lobby_pb2
from services.accounts.rules import TABLES_WRITE
from services.kernel.engine import InvalidOptions
from services.lobby.events import TABLE_ABORTED
from services.lobby.handlers.common import (
    DENIED,
    REFUSED,
    TABLES,
    log,
    require_owner,
)
from services.lobby.messages import (
    STATUS_OF,
    clock_request,
    live_table,
    table_proto,
)
from services.lobby.models import ABORTED, OPEN, RUNNING, STARTING
from services.lobby.options import canonical_options
from services.lobby.store import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    BadPageToken,
    SeatRecord,
    TableFilter,
    TableRecord,
)
from services.lobby.tables import (
    require_startable,
    require_status,
)
from services.match.botcatalogue import POLICY_NAMES, policy_available
from services.match.controls import ClockSettings, InvalidClock, parse_clock_settings
from services.platform import db
from services.platform.auth import require_scope
from services.platform.channels import game_metadata
from services.platform.grpc_errors import ServiceError, abort, relay
from services.rules.titles import TITLE_MODULES, get_game

START_RETRY_AFTER_S = 60.0
"""A start that stayed ``starting`` this long (a lobby died mid-start) may be retried."""


M = TypeVar("M", lobby_pb2.Table, lobby_pb2.ListTablesResponse)


class Tables:
    """The tables handlers of :class:`services.lobby.server.LobbyServicer`."""

    async def CreateTable(self, request, context):
        principal = await require_scope(context, TABLES_WRITE)
        owner_id, owner = principal.account_id, principal.username
        if request.owner:
            if not principal.is_internal:
                await abort(
                    context, DENIED, "internal_only", "only internal services set a table's owner"
                )
            account = await self.accounts.by_username(request.owner)
            if account is None:
                await abort(context, grpc.StatusCode.NOT_FOUND, "unknown_account", "no such owner")
            owner_id, owner = account.id, account.username
        if not owner_id:
            await abort(context, DENIED, "account_needed", "tables are owned by accounts")
        if request.title not in TITLE_MODULES or request.title not in self.settings.rules_addresses:
            known = ", ".join(sorted(self.settings.rules_addresses))
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "unknown_title",
                f"unknown title; known: {known}",
            )
        game = get_game(request.title)
        if not game.min_players <= request.num_players <= game.max_players:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_player_count",
                f"{request.title} takes {game.min_players} to {game.max_players} "
                f"players, got {request.num_players}",
                num_players=request.num_players,
                min_players=game.min_players,
                max_players=game.max_players,
            )
        try:
            options_json = canonical_options(game, request.options_json)
        except InvalidOptions as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "bad_options", str(exc))
        clock = await self._clock_settings(request, context)
        table = TableRecord(
            table_id=uuid.uuid4().hex[:12],
            title=request.title,
            num_players=request.num_players,
            options_json=options_json,
            seed=request.seed if request.HasField("seed") else None,
            seats=[SeatRecord() for _ in range(request.num_players)],
            owner_id=owner_id,
            owner=owner,
            clock=None if clock is None else clock.to_json(),
            tournament_id=request.tournament_id,
        )
        async with self.quotas.creating_table(principal.account_id):
            await self.store.create(table)
        TABLES.labels(table.title, "created").inc()
        log.info(
            "table created",
            table_id=table.table_id,
            title=table.title,
            players=table.num_players,
            owner=owner_id,
        )
        return table_proto(table)

    async def _clock_settings(self, request, context) -> ClockSettings | None:
        """CreateTable's validated clock (None when the request sets none);
        INVALID_ARGUMENT ``bad_time_control``, ``bad_timeout_policy``,
        ``reclaim_not_casual``, ``bad_clock_settings``, ``unknown_policy``,
        ``policy_unavailable`` (the takeover bot)."""
        asked = clock_request(request)
        if set(asked) == {"casual"}:
            return None
        try:
            clock = parse_clock_settings(asked)
        except InvalidClock as exc:
            await abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, exc.code, exc.reason, field=exc.field
            )
        if clock.takeover_policy not in POLICY_NAMES:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "unknown_policy",
                f"unknown takeover bot policy; known: {', '.join(POLICY_NAMES)}",
            )
        if not policy_available(clock.takeover_policy, request.title):
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "policy_unavailable",
                f"bot policy {clock.takeover_policy!r} cannot play {request.title}",
            )
        return clock

    async def _kept(self, key: tuple, build: Callable[[], Awaitable[M]]) -> M:
        """``await build()``'s message, or a copy of the one kept under ``key`` in the table
        cache's answers (:meth:`services.lobby.table_cache.TableCache.answer`: dropped on any
        table's change); an error ``build`` raises is not kept."""
        cache = self.store.cache
        if cache is None:
            return await build()
        found = cache.answer(key)
        if found is not None:
            out = type(found)()
            out.CopyFrom(found)
            return out
        generation = cache.generation()
        answer = await build()
        kept = type(answer)()
        kept.CopyFrom(answer)
        cache.keep_answer(key, kept, generation)
        return answer

    async def GetTable(self, request, context):
        async def build() -> lobby_pb2.Table:
            return table_proto(await self._table(request.table_id))

        return await self._kept(("table", request.table_id), build)

    async def ListTables(self, request, context):
        size = request.page_size or DEFAULT_PAGE_SIZE
        if not 1 <= size <= MAX_PAGE_SIZE:
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_page_size",
                f"page_size must be 1..{MAX_PAGE_SIZE} (0 = {DEFAULT_PAGE_SIZE})",
                max_page_size=MAX_PAGE_SIZE,
            )
        unknown = [s for s in request.status if s not in STATUS_OF]
        if unknown:
            await abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "bad_status", "unknown table status"
            )
        where = TableFilter(
            title=request.title,
            statuses=tuple(STATUS_OF[s] for s in request.status),
            open_seat=request.open_seat,
            player=request.player,
        )

        async def build() -> lobby_pb2.ListTablesResponse:
            try:
                tables, token = await self.store.list(where, size, request.page_token)
            except BadPageToken:
                await abort(
                    context,
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "bad_page_token",
                    "page_token is not one ListTables gave",
                )
            return lobby_pb2.ListTablesResponse(
                tables=[table_proto(t) for t in tables], next_page_token=token
            )

        return await self._kept(("list", where, size, request.page_token), build)

    async def StartTable(self, request, context):
        """Open -> starting (row-locked: one start wins, the other is refused
        ``not_open``) -> the game on the rules service -> running. A failed
        creation puts the table back to open."""
        principal = await require_scope(context, TABLES_WRITE)
        return await self._start_table(
            request.table_id, lambda t: require_owner(t, principal), context
        )

    async def _start_table(self, table_id: str, allowed, context):
        """Start ``table_id`` (as :meth:`StartTable`) once ``allowed(table)`` did not raise
        (the owner check; a rematch: nothing more, every seat accepted)."""

        def begin(t: TableRecord) -> None:
            allowed(t)
            require_startable(t, db.utcnow(), START_RETRY_AFTER_S)
            t.status, t.start_attempt_at = STARTING, db.utcnow()
            t.game_id = f"{t.title}-{t.table_id}"

        table = await self._change(table_id, begin)
        game_id, owner = table.game_id, f"table:{table.table_id}"
        # The hot index first: the dispatcher must find the bot seats as soon as the game exists.
        running = live_table(table)
        running.status = RUNNING
        create = game_pb2.CreateGameRequest(
            title=table.title,
            num_players=table.num_players,
            options_json=table.options_json,
            game_id=game_id,
            owner=owner,
            bot_policies=table.bot_seats(),
        )
        if table.seed is not None:
            create.seed = table.seed
        if table.clock is not None:
            create.clock_json = json.dumps(table.clock)
        try:  # Redis refusing the hot index (full, down) undoes the start like a failed creation
            await self.hot.put(running)
            await self._create_game(table, create, context)
        except grpc.aio.AioRpcError as err:
            await self._undo_start(table)  # before the abort: the call ends with it
            await relay(context, err)
        except BaseException:  # game_id_taken, a cancelled call, a bug
            await asyncio.shield(self._undo_start(table))
            raise

        def finish(t: TableRecord) -> None:
            if t.status == STARTING:
                t.status, t.start_attempt_at = RUNNING, None

        table = await self._change(table_id, finish)
        TABLES.labels(table.title, "started").inc()
        log.info("table started", table_id=table.table_id, game_id=game_id)
        return table_proto(table)

    async def _create_game(self, table: TableRecord, create, context) -> None:
        """Create the table's game. Raises the rules service's error
        (AioRpcError), or ServiceError ``game_id_taken`` when the game id
        exists and another owner's game has it."""
        rules = self.rules(table.title)
        timeout = self.rules_timeout(context)
        try:
            await rules.CreateGame(
                create, timeout=timeout, metadata=game_metadata(create.game_id, self.internal)
            )
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.ALREADY_EXISTS:
                raise
            # a retried start is fine, but only for the game this table created
            view = await rules.GetView(
                game_pb2.GetViewRequest(game_id=create.game_id),
                timeout=timeout,
                metadata=game_metadata(create.game_id, self.internal),
            )
            if view.info.owner != create.owner:
                raise ServiceError(
                    REFUSED,
                    "game_id_taken",
                    f"game {create.game_id} exists and does not belong to this table",
                ) from None

    async def _undo_start(self, table: TableRecord) -> None:
        def undo(t: TableRecord) -> None:
            if t.status == STARTING:
                t.status, t.start_attempt_at, t.game_id = OPEN, None, ""

        try:
            await self.store.change(table.table_id, undo)
            await self.hot.drop(table.table_id, table.game_id)
        except Exception:  # noqa: BLE001 - the start's own error is the one to report
            log.exception("could not undo a failed start", table_id=table.table_id)

    async def AbortTable(self, request, context):
        principal = await require_scope(context, TABLES_WRITE)

        def change(t: TableRecord) -> None:
            require_owner(t, principal)
            require_status(t, OPEN)
            t.status = ABORTED

        table = await self._change(request.table_id, change)
        TABLES.labels(table.title, "aborted").inc()
        log.info("table aborted", table_id=table.table_id, by=principal.account_id)
        for seat, record in enumerate(table.seats):
            if record.account_id and not record.policy:
                await self._tell(record.account_id, TABLE_ABORTED, table, seat)
        return table_proto(table)
