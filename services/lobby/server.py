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

The servicer is thin: its handlers live by resource in :mod:`services.lobby.handlers`
(``tables``, ``seats``, ``play``, ``watch``, ``results``, ``imports``); this module holds
what they share (the records, the rules stubs) and the server around them.

Run: ``python -m services.lobby.server``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import grpc
from cachetools import LRUCache

from roundhouse.v1 import game_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from services.accounts.revocations import follow_revocations
from services.accounts.rules import BOT_PLAY, PLAY
from services.accounts.store import AccountStore
from services.accounts.verifier import StoreVerifier
from services.lobby.backfill import backfill_game_bots
from services.lobby.chat import ChatHub, ChatLog
from services.lobby.events import (
    AccountEvents,
    EventHub,
    lifecycle_to_events,
)
from services.lobby.fanout import WatchHub
from services.lobby.handlers.chat import Chat
from services.lobby.handlers.common import DENIED, REFUSED, log, unknown_table
from services.lobby.handlers.imports import Imports
from services.lobby.handlers.play import Play
from services.lobby.handlers.results import Results, record_finished_game
from services.lobby.handlers.reviews import Reviews
from services.lobby.handlers.seats import Seats
from services.lobby.handlers.tables import Tables
from services.lobby.handlers.watch import WATCH_RETRIES, Watch
from services.lobby.hot_tables import GAME_LINKS_KEPT, HotTables, LiveTable
from services.lobby.messages import live_table
from services.lobby.models import FINISHED, RUNNING
from services.lobby.quotas import LobbyQuotas, RateLimits
from services.lobby.store import (
    TableNotFound,
    TableRecord,
    TableStore,
)
from services.lobby.sweeper import sweep_open_tables
from services.lobby.table_cache import TableCache, follow_changes, publish_change
from services.lobby.tables import (
    check_seat_index,
    require_status,
)
from services.platform import db
from services.platform.auth import (
    ANONYMOUS_METHODS,
    AuthInterceptor,
    Principal,
    internal,
    require_principal,
    require_scope,
)
from services.platform.bounds import LOBBY, LOBBY_FIELDS, FieldBounds, lobby_bounds
from services.platform.channels import game_metadata, rules_aio_channel
from services.platform.consumer import consume
from services.platform.gamelog import GameLog
from services.platform.grpc_errors import ServiceError, relay
from services.platform.logging import configure_logging
from services.platform.server import redis_client, run_service, service_server
from services.platform.settings import LobbySettings, get_settings, listen_address
from services.platform.supervise import Supervisor

RESULTS_LINGER_MS = 50
"""The results consumer's wait after a batch (``services.platform.consumer``): it acts only on
finished games."""
EVENTS_LINGER_MS = 10
"""The account events consumer's: short, since ``yourTurn`` waits for it (bar: 100 ms p99)."""

LOBBY_ANONYMOUS = ANONYMOUS_METHODS | {
    "/roundhouse.v1.Lobby/GetSeatView",
    "/roundhouse.v1.Lobby/ExportTable",
}
"""Lobby methods callable without a token (GetSeatView: the spectators' view
only; a seat's view needs its account's token)."""


class LobbyServicer(
    Tables, Seats, Play, Watch, Results, Imports, Reviews, Chat, lobby_pb2_grpc.LobbyServicer
):
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
        settings: LobbySettings,
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
        # table chat (services/lobby/chat.py): its log, wake-ups and its own rate limit
        self.chat = ChatLog(hot.r, settings.key_prefix, settings.chat_maxlen, store.sessions)
        self.chat_hub = ChatHub(hot.r, self.chat.channel)
        self.chat_rates = RateLimits(
            settings.redis_url,
            settings.key_prefix,
            {"chat": settings.chat_per_account},
            cluster=settings.redis_cluster,
        )

    def rules(self, title: str) -> game_pb2_grpc.GameRulesStub:
        """The title's rules service stub (one channel and one stub per title, made on first
        use: a stub builds a callable per method, too much to do per move). The channel
        routes each game's calls to one replica: pass :func:`game_metadata`
        (``services/platform/channels.py``)."""
        stub = self._stubs.get(title)
        if stub is None:
            channel = self._channels[title] = rules_aio_channel(
                self.settings.rules_addresses[title], self.internal
            )
            stub = self._stubs[title] = game_pb2_grpc.GameRulesStub(channel)
        return stub

    async def close(self) -> None:
        await self.watches.close()
        await self.quotas.close()
        await self.chat_rates.close()
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

    async def _table(self, table_id: str) -> TableRecord:
        try:
            return await self.store.get(table_id)
        except TableNotFound:
            raise unknown_table(table_id) from None

    async def _change(self, table_id: str, change) -> TableRecord:
        try:
            return await self.store.change(table_id, change)
        except TableNotFound:
            raise unknown_table(table_id) from None

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


def lobby_interceptors(verifier: StoreVerifier, settings: LobbySettings) -> list:
    """The lobby's auth interceptor (production and tests use the same)."""
    return [
        FieldBounds(LOBBY, LOBBY_FIELDS),
        AuthInterceptor(verifier, settings.internal_secret, anonymous=LOBBY_ANONYMOUS),
    ]


async def serve(
    address: str | None = None,
    interceptors: Callable[[StoreVerifier, LobbySettings], list] = lobby_interceptors,
) -> None:
    """Run the lobby until SIGTERM/SIGINT. ``interceptors`` builds the
    interceptors inside the error mapping (production: :func:`lobby_interceptors`;
    only a benchmark program passes anything else, see
    ``benchmarks/lobby_without_auth.py``)."""
    settings = get_settings(LobbySettings)
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
    tables = TableCache(settings.table_cache_seconds)  # dropped on every change, everywhere
    store = TableStore(
        sessions, tables, lambda table_id: publish_change(client, settings.key_prefix, table_id)
    )
    servicer = LobbyServicer(store, HotTables(client, settings.key_prefix), accounts, settings)
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
    background.start("chat-wakeups", lambda: servicer.chat_hub.run(stop))

    verifier = StoreVerifier(accounts, settings.token_cache_seconds)
    background.start(  # revoked tokens leave this lobby's token cache at once
        "token-revocations",
        lambda: follow_revocations(client, settings.key_prefix, verifier, stop),
    )
    background.start(  # tables changed by another lobby leave this one's cache at once
        "table-changes", lambda: follow_changes(client, settings.key_prefix, tables, stop)
    )
    background.start(  # tables that never start are aborted after open_table_ttl_s
        "open-table-sweeper", lambda: sweep_open_tables(servicer.store, settings, stop)
    )

    async def close() -> None:
        stop.set()
        await background.wait("lobby-results", 5)
        await background.wait("lobby-events", 5)
        await background.wait("event-wakeups", 5)
        await background.wait("chat-wakeups", 5)
        await background.wait("token-revocations", 5)
        await background.wait("table-changes", 5)
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
