"""The lobby: ``roundhouse.v1.Lobby``, the public entry point, on accounts.

Every call passes through :class:`services.platform.auth.AuthInterceptor`
(``authorization: Bearer <token>``); spectating needs no token. A table is
owned by the account that created it (scope ``tables:write``); only the owner
or an admin adds bots to it, starts it or aborts it. ``JoinSeat`` binds a
seat to the caller's account (``play``, or ``bot:play`` for bot accounts), and
from then on that account's tokens, from any client, are the seat's
credential for its view, moves, leaving and resigning. Hosted bots sit as
accounts too: a policy's system account (``greedy-bot``) or a bot account its
owner bound to a hosted policy.

The durable truth of a table is the database (:mod:`services.lobby.store`,
row-locked changes); a started table is also copied into the Redis hot index
(:mod:`services.lobby.hot_tables`) for the move path and the clock keeper.
Starting creates the game on the title's rules service with the lobby's
internal-service credentials. A background consumer of the lifecycle stream
(group ``lobby_group``) records results when games finish; another (group
``events_group``) turns it into account events (:mod:`services.lobby.events`),
which ``StreamEvents`` streams to each account.

Errors follow ``proto/roundhouse/v1/lobby.proto``; the rules service's errors
are relayed unchanged (:func:`services.platform.grpc_errors.relay`). A refused
call changes nothing, in the database or in Redis.

Run: ``python -m services.lobby.server``.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import uuid
from collections.abc import Callable

import grpc
from cachetools import LRUCache
from prometheus_client import Counter

from roundhouse.v1 import game_pb2, game_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from services.accounts.limiter import peer_host
from services.accounts.models import BOT as BOT_ACCOUNT
from services.accounts.models import SYSTEM
from services.accounts.revocations import follow_revocations
from services.accounts.rules import BOT_PLAY, PLAY, TABLES_WRITE
from services.accounts.store import AccountStore
from services.accounts.verifier import StoreVerifier
from services.kernel.engine import InvalidOptions
from services.lobby.backfill import backfill_game_bots
from services.lobby.events import (
    TABLE_ABORTED,
    TABLE_JOINED,
    YOUR_TURN,
    AccountEvents,
    BadEventId,
    Event,
    EventHub,
    Pushed,
    check_event_id,
    follow_on,
    lifecycle_to_events,
)
from services.lobby.fanout import WatchHub
from services.lobby.hot_tables import GAME_LINKS_KEPT, HotTables, LiveTable
from services.lobby.messages import (
    STATUS_OF,
    clock_request,
    live_table,
    standings_proto,
    table_proto,
)
from services.lobby.models import ABORTED, BOT, FINISHED, OPEN, PLAYER, RUNNING, STARTING
from services.lobby.options import canonical_options
from services.lobby.quotas import LobbyQuotas
from services.lobby.store import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    BadPageToken,
    SeatRecord,
    TableFilter,
    TableNotFound,
    TableRecord,
    TableStore,
)
from services.lobby.sweeper import sweep_open_tables
from services.lobby.tables import (
    check_seat_index,
    not_seated,
    open_seat,
    require_startable,
    require_status,
)
from services.match.botcatalogue import POLICY_NAMES, policy_available
from services.match.controls import ClockSettings, InvalidClock, parse_clock_settings
from services.match.resignation import resignation_policy, takeover_on_resign
from services.platform import db
from services.platform.auth import (
    ANONYMOUS_METHODS,
    AuthInterceptor,
    Principal,
    current_principal,
    internal,
    require_principal,
    require_scope,
)
from services.platform.bounds import LOBBY, LOBBY_FIELDS, FieldBounds, lobby_bounds
from services.platform.channels import game_metadata, rules_aio_channel
from services.platform.consumer import consume
from services.platform.gamelog import GameLog, legal_moves_fields, parse_legal_moves
from services.platform.grpc_errors import ServiceError, abort, error_info, relay
from services.platform.logging import configure_logging, get_logger
from services.platform.server import redis_client, run_service, service_server
from services.platform.settings import Settings, get_settings, listen_address
from services.platform.supervise import Supervisor
from services.rules.results import result_dict
from services.rules.titles import TITLE_MODULES, get_game

log = get_logger("lobby")

WATCH_RETRIES = 5
"""Times in a row the lobby resumes a dropped watch before it gives up."""
WATCH_START_POLL_S = 0.25
"""How often a watch of a table that has not started looks for the start (Redis)."""
WATCH_ABORT_CHECK_S = 5.0
"""How often such a watch checks the database for an abort."""
START_RETRY_AFTER_S = 60.0
"""A start that stayed ``starting`` this long (a lobby died mid-start) may be retried."""

EVENTS_READ_COUNT = 500
"""Account events one read of ``StreamEvents`` takes at most."""
RESULTS_LINGER_MS = 50
"""The results consumer's wait after a batch (``services.platform.consumer``): it acts only on
finished games."""
EVENTS_LINGER_MS = 10
"""The account events consumer's: short, since ``yourTurn`` waits for it (bar: 100 ms p99)."""

LOBBY_ANONYMOUS = ANONYMOUS_METHODS | {"/roundhouse.v1.Lobby/GetSeatView"}
"""Lobby methods callable without a token (GetSeatView: the spectators' view
only; a seat's view needs its account's token)."""

TABLES = Counter("roundhouse_lobby_tables_total", "Tables by event", ["title", "event"])
MOVES = Counter("roundhouse_lobby_moves_total", "Player moves forwarded", ["title", "outcome"])

DENIED = grpc.StatusCode.PERMISSION_DENIED
REFUSED = grpc.StatusCode.FAILED_PRECONDITION


def _require_owner(t: TableRecord, principal: Principal) -> None:
    """The table's owner, an admin, or an internal service (the tournament service runs the
    tables it created for an organiser)."""
    if principal.account_id != t.owner_id and not principal.is_admin and not principal.is_internal:
        raise ServiceError(
            DENIED,
            "not_owner",
            f"only the table's owner ({t.owner}) or an admin may do this",
            owner=t.owner,
        )


class LobbyServicer(lobby_pb2_grpc.LobbyServicer):
    """``roundhouse.v1.Lobby`` over the table store, the hot index, the
    accounts and the rules services.

    Args:
        store: tables in the database.
        hot: the Redis hot index of started tables.
        accounts: the accounts store (hosted bots' accounts).
        settings: rules addresses and call timeout, the internal secret, the
            resignation overrides.
        events: the account event log (default: on the hot index's Redis).
        hub: wakes ``StreamEvents`` readers (its :meth:`EventHub.run` must
            run beside the server; without it readers poll every
            ``events_poll_s``).
    """

    def __init__(
        self,
        store: TableStore,
        hot: HotTables,
        accounts: AccountStore,
        settings: Settings,
        events: AccountEvents | None = None,
        hub: EventHub | None = None,
    ) -> None:
        self.store = store
        self.hot = hot
        self.accounts = accounts
        self.settings = settings
        self.events = events or AccountEvents(hot.r, settings.key_prefix, settings.events_maxlen)
        self.hub = hub or EventHub(
            hot.r,
            self.events.channel,
            settings.event_streams_per_account,
            settings.lobby_max_event_streams,
        )
        self.gamelog = GameLog.for_settings(hot.r, settings)
        self._game_of_table: LRUCache[str, str] = LRUCache(maxsize=GAME_LINKS_KEPT)
        self.internal = internal(settings.internal_secret, "lobby")
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._stubs: dict[str, game_pb2_grpc.GameRulesStub] = {}
        self.quotas = LobbyQuotas(settings, store.sessions, hot.r)
        self.watches = WatchHub(
            self._watch_game,
            settings.lobby_max_watches,
            settings.watches_per_account,
            settings.watches_per_peer,
            retries=WATCH_RETRIES,
        )

    def rules(self, title: str) -> game_pb2_grpc.GameRulesStub:
        """The title's rules service stub (one channel and one stub per title, made on first
        use: a stub builds a callable per method, too much to do per move). The channel
        routes each game's calls to one replica: pass :func:`game_metadata`
        (``services/platform/channels.py``)."""
        stub = self._stubs.get(title)
        if stub is None:
            channel = self._channels[title] = rules_aio_channel(
                self.settings.rules_addresses[title]
            )
            stub = self._stubs[title] = game_pb2_grpc.GameRulesStub(channel)
        return stub

    async def close(self) -> None:
        await self.watches.close()
        await self.quotas.close()
        for channel in self._channels.values():
            await channel.close()

    def rules_timeout(self, context) -> float:
        """Seconds a call to a rules service may take: the caller's remaining
        time, at most ``rules_call_timeout_s`` (also when the caller set none)."""
        cap = self.settings.rules_call_timeout_s
        remaining = context.time_remaining()
        return cap if remaining is None else max(0.0, min(remaining, cap))

    async def _call_rules(self, title: str, method: str, request, context):
        try:
            return await getattr(self.rules(title), method)(
                request,
                timeout=self.rules_timeout(context),
                metadata=game_metadata(request.game_id, self.internal),
            )
        except grpc.aio.AioRpcError as err:
            await relay(context, err)

    # ------------------------------------------------------------------ records

    async def _table(self, table_id: str) -> TableRecord:
        try:
            return await self.store.get(table_id)
        except TableNotFound:
            raise _unknown(table_id) from None

    async def _change(self, table_id: str, change) -> TableRecord:
        try:
            return await self.store.change(table_id, change)
        except TableNotFound:
            raise _unknown(table_id) from None

    async def _live(self, table_id: str) -> LiveTable:
        """A started table from the hot index (rebuilt from the database when
        Redis lost it); FAILED_PRECONDITION ``not_running`` before the start."""
        live = await self.hot.get(table_id)
        if live is None:
            table = await self._table(table_id)
            require_status(table, RUNNING, FINISHED)
            live = live_table(table)
            await self.hot.put(live)
        return live

    async def _player(self, context) -> Principal:
        """The caller, with the scope its kind plays with (``bot:play`` for
        bot accounts, ``play`` for people)."""
        principal = await require_principal(context)
        return await require_scope(context, BOT_PLAY if principal.is_bot else PLAY)

    def _own_seat(self, live: LiveTable | TableRecord, seat: int, principal: Principal) -> None:
        """The caller's account holds ``seat`` and plays it itself."""
        check_seat_index(len(live.seats), seat)
        record = live.seats[seat]
        if not record.account_id or record.account_id != principal.account_id:
            raise ServiceError(
                DENIED, "not_your_seat", f"seat {seat} is not held by your account", seat=seat
            )
        if record.resigned:
            raise ServiceError(REFUSED, "seat_resigned", f"seat {seat} has resigned", seat=seat)
        if record.policy:
            raise ServiceError(
                DENIED, "bot_seat", f"seat {seat} is played by a hosted bot ({record.policy})"
            )

    async def _tell(self, account_id: str, type: str, table: TableRecord, seat: int) -> None:
        """Publish one account event of a table (after the change was committed:
        a Redis failure is logged, the call still succeeds)."""
        try:
            await self.events.publish(
                account_id,
                type,
                table_id=table.table_id,
                game_id=table.game_id,
                title=table.title,
                seat=seat,
            )
        except Exception:  # noqa: BLE001 - the table changed; the event is best effort here
            log.exception("account event not published", type=type, table_id=table.table_id)

    # ------------------------------------------------------------------ tables

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

    async def GetTable(self, request, context):
        return table_proto(await self._table(request.table_id))

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

    async def JoinSeat(self, request, context):
        if request.account:
            principal = await require_principal(context)
            if not principal.is_internal:
                await abort(
                    context, DENIED, "internal_only", "only internal services seat another account"
                )
            account = await self.accounts.by_username(request.account)
            if account is None or account.kind == SYSTEM:
                await abort(context, grpc.StatusCode.NOT_FOUND, "unknown_account", "no such player")
            account_id, username, is_bot = account.id, account.username, account.kind == BOT_ACCOUNT
        else:
            principal = await self._player(context)
            account_id, username = principal.account_id, principal.username
            is_bot = principal.is_bot

        def change(t: TableRecord) -> None:
            open_seat(t, request.seat)
            not_seated(t, account_id, username)
            t.seats[request.seat] = SeatRecord(PLAYER, account_id, username, is_bot)

        table = await self._change(request.table_id, change)
        log.info("seat joined", table_id=table.table_id, seat=request.seat, account=account_id)
        await self._tell(account_id, TABLE_JOINED, table, request.seat)
        return table_proto(table)

    async def LeaveSeat(self, request, context):
        principal = await self._player(context)
        if not request.HasField("seat"):
            await abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "no_seat", "LeaveSeat needs a seat"
            )

        def change(t: TableRecord) -> None:
            check_seat_index(t.num_players, request.seat)
            require_status(t, OPEN)
            self._own_seat(t, request.seat, principal)
            t.seats[request.seat] = SeatRecord()

        return table_proto(await self._change(request.table_id, change))

    async def AddBot(self, request, context):
        principal = await require_scope(context, TABLES_WRITE)
        table = await self._table(request.table_id)
        _require_owner(table, principal)
        which = request.WhichOneof("who")
        if which == "bot":
            account = await self.accounts.by_username(request.bot)
            if account is None:
                await abort(
                    context, grpc.StatusCode.NOT_FOUND, "unknown_account", "no such bot account"
                )
            if account.kind != BOT_ACCOUNT:
                await abort(
                    context, REFUSED, "not_a_bot", f"{account.username} is not a bot account"
                )
            if (
                account.owner_id != principal.account_id
                and not principal.is_admin
                and not principal.is_internal
            ):
                await abort(
                    context, DENIED, "not_bot_owner", f"{account.username} is not your bot account"
                )
            # "" = the bot plays itself (its own program, its own tokens): no worker moves for it
            policy = account.hosted_policy or ""
        else:
            policy = request.policy
            if policy not in POLICY_NAMES:
                await abort(
                    context,
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "unknown_policy",
                    f"unknown bot policy; known: {', '.join(POLICY_NAMES)}",
                )
            account = await self.accounts.by_username(f"{policy}-bot")
            if account is None or account.kind != SYSTEM:
                raise ServiceError(
                    grpc.StatusCode.INTERNAL, "internal", f"no system account for {policy}"
                )
        if policy and not policy_available(policy, table.title):
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "policy_unavailable",
                f"bot policy {policy!r} cannot play {table.title}",
            )

        def change(t: TableRecord) -> None:
            _require_owner(t, principal)
            open_seat(t, request.seat)
            if account.kind != SYSTEM:
                not_seated(t, account.id, account.username)
            t.seats[request.seat] = SeatRecord(BOT, account.id, account.username, True, policy)

        table = await self._change(request.table_id, change)
        if not policy:  # a self-playing bot learns of its seat on its event stream
            await self._tell(account.id, TABLE_JOINED, table, request.seat)
        return table_proto(table)

    async def StartTable(self, request, context):
        """Open -> starting (row-locked: one start wins, the other is refused
        ``not_open``) -> the game on the rules service -> running. A failed
        creation puts the table back to open."""
        principal = await require_scope(context, TABLES_WRITE)

        def begin(t: TableRecord) -> None:
            _require_owner(t, principal)
            require_startable(t, db.utcnow(), START_RETRY_AFTER_S)
            t.status, t.start_attempt_at = STARTING, db.utcnow()
            t.game_id = f"{t.title}-{t.table_id}"

        table = await self._change(request.table_id, begin)
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

        table = await self._change(request.table_id, finish)
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
            _require_owner(t, principal)
            require_status(t, OPEN)
            t.status = ABORTED

        table = await self._change(request.table_id, change)
        TABLES.labels(table.title, "aborted").inc()
        log.info("table aborted", table_id=table.table_id, by=principal.account_id)
        for seat, record in enumerate(table.seats):
            if record.account_id and not record.policy:
                await self._tell(record.account_id, TABLE_ABORTED, table, seat)
        return table_proto(table)

    # ------------------------------------------------------------------ play

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

    # ------------------------------------------------------------------ clocks

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

    async def ReclaimSeat(self, request, context):
        """The seat's account takes the seat back from its takeover bot
        (``reclaim`` tables, within the window; the rules service decides)."""
        principal = await self._player(context)
        if not request.HasField("seat"):
            await abort(
                context, grpc.StatusCode.INVALID_ARGUMENT, "no_seat", "ReclaimSeat needs a seat"
            )
        seat = request.seat
        table = await self._table(request.table_id)
        require_status(table, RUNNING)
        check_seat_index(table.num_players, seat)
        if table.seats[seat].account_id != principal.account_id:
            raise ServiceError(
                DENIED, "not_your_seat", f"seat {seat} is not held by your account", seat=seat
            )
        await self._call_rules(
            table.title,
            "Reclaim",
            game_pb2.ResignRequest(game_id=table.game_id, seat=seat),
            context,
        )

        def hand_back(t: TableRecord) -> None:
            t.seats[seat].policy, t.seats[seat].taken_over_at = "", None

        table = await self._change(request.table_id, hand_back)
        await self.hot.put(live_table(table))
        log.info("seat reclaimed", table_id=table.table_id, seat=seat)
        return table_proto(table)

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


def _unknown(table_id: str) -> ServiceError:
    """NOT_FOUND ``unknown_table`` (the id is not echoed: it is the caller's text)."""
    return ServiceError(grpc.StatusCode.NOT_FOUND, "unknown_table", "no such table")


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


async def record_finished_game(servicer: LobbyServicer, fields: dict[str, str]) -> None:
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


async def _table_of(servicer: LobbyServicer, game_id: str) -> str | None:
    live = await servicer.hot.by_game(game_id)
    if live is not None:
        return live.table_id
    table = await servicer.store.by_game(game_id)
    return table.table_id if table else None


def lobby_interceptors(verifier: StoreVerifier, settings: Settings) -> list:
    """The lobby's auth interceptor (production and tests use the same)."""
    return [
        FieldBounds(LOBBY, LOBBY_FIELDS),
        AuthInterceptor(verifier, settings.internal_secret, anonymous=LOBBY_ANONYMOUS),
    ]


async def serve(
    address: str | None = None,
    interceptors: Callable[[StoreVerifier, Settings], list] = lobby_interceptors,
) -> None:
    """Run the lobby until SIGTERM/SIGINT. ``interceptors`` builds the
    interceptors inside the error mapping (production: :func:`lobby_interceptors`;
    only a benchmark program passes anything else, see
    ``benchmarks/lobby_without_auth.py``)."""
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    address = address or listen_address(settings, settings.lobby_address)
    url = db.database_url(settings)
    if db.is_sqlite(url):
        await db.upgrade_async(url)  # embedded mode: the process keeps its own store current
    engine = db.create_engine(url, settings)
    sessions = db.session_factory(engine)
    accounts = AccountStore(sessions)
    client = redis_client(
        settings.redis_url, settings.redis_max_connections, cluster=settings.redis_cluster
    )
    servicer = LobbyServicer(
        TableStore(sessions), HotTables(client, settings.key_prefix), accounts, settings
    )
    gamelog = GameLog.for_settings(client, settings)
    stop = asyncio.Event()
    background = Supervisor("lobby")  # a dead results consumer: logged, NOT_SERVING, restarted
    # games started before their records named their bots get them: once, beside serving (a
    # pass over every running table need not hold up the start); idempotent, so a failed pass
    # is simply run again after the supervisor's back-off
    background.start("bot-seat-backfill", lambda: backfill_game_bots(servicer.store, gamelog))
    background.start(
        "lobby-results",
        lambda: consume(
            client,
            gamelog.lifecycle_keys,
            settings.lobby_group,
            f"{settings.consumer_name}-lobby",
            lambda fields: record_finished_game(servicer, fields),
            stop=stop,
            linger_ms=RESULTS_LINGER_MS,
        ),
    )

    background.start(  # account events from every move (services/lobby/events.py)
        "lobby-events",
        lambda: consume(
            client,
            gamelog.lifecycle_keys,
            settings.events_group,
            f"{settings.consumer_name}-lobby-events",
            lambda fields: lifecycle_to_events(
                servicer.hot, servicer.events, fields, servicer.gamelog.moves_key
            ),
            block_ms=500,
            stop=stop,
            linger_ms=EVENTS_LINGER_MS,
        ),
    )
    background.start("event-wakeups", lambda: servicer.hub.run(stop))

    verifier = StoreVerifier(accounts, settings.token_cache_seconds)
    background.start(  # revoked tokens leave this lobby's token cache at once
        "token-revocations",
        lambda: follow_revocations(client, settings.key_prefix, verifier, stop),
    )
    background.start(  # tables that never start are aborted after open_table_ttl_s
        "open-table-sweeper", lambda: sweep_open_tables(servicer.store, settings, stop)
    )

    async def close() -> None:
        stop.set()
        await background.wait("lobby-results", 5)
        await background.wait("lobby-events", 5)
        await background.wait("event-wakeups", 5)
        await background.wait("token-revocations", 5)
        await background.wait("open-table-sweeper", 5)
        await servicer.close()
        await client.aclose()
        await engine.dispose()

    async def ready() -> bool:
        await db.ping(engine)
        return await client.ping()

    server = service_server(
        "lobby",
        settings,
        [lobby_pb2.DESCRIPTOR.services_by_name["Lobby"].full_name],
        lambda s: lobby_pb2_grpc.add_LobbyServicer_to_server(servicer, s),
        address,
        lobby_bounds(settings.lobby_max_watches + settings.lobby_max_event_streams),
        on_stop=close,
        ready=ready,
        interceptors=interceptors(verifier, settings),
        supervisor=background,
    )
    await server.run_until_signal()


def main() -> None:
    run_service(serve())


if __name__ == "__main__":
    main()
