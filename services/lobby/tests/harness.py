"""A lobby in-process for tests and benchmarks: real gRPC over loopback, the
real store (PostgreSQL or SQLite), a real Redis, real rules services (with
their internal-credentials interceptor) and the lobby with the production
interceptors. Accounts and tokens are made directly in the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import timedelta

import grpc
import redis.asyncio as aioredis
import sqlalchemy as sa

from roundhouse.v1 import game_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from services.accounts.models import BOT, HUMAN, Account, ApiToken
from services.accounts.server import SYSTEM_BOTS
from services.accounts.store import AccountStore
from services.accounts.verifier import StoreVerifier
from services.lobby.events import lifecycle_to_events
from services.lobby.handlers.results import record_finished_game
from services.lobby.hot_tables import HotTables
from services.lobby.models import Table, TableSeat
from services.lobby.server import LobbyServicer, lobby_interceptors
from services.lobby.store import TableStore
from services.lobby.table_cache import TableCache
from services.match.resignation import resignation_policy
from services.platform import bounds
from services.platform.auth import bearer, internal
from services.platform.bounds import LOBBY_DEFAULT_MESSAGE_BYTES, LOBBY_MESSAGE_BYTES, FieldBounds
from services.platform.channels import rules_aio_channel
from services.platform.consumer import consume
from services.platform.db import create_engine, session_factory, utcnow
from services.platform.gamelog import GameLog
from services.platform.grpc_errors import ErrorMapping, error_info
from services.platform.server import KEEPALIVE_OPTIONS
from services.platform.settings import LobbySettings
from services.rules.serve import internal_only
from services.rules.servicer import GameRulesServicer

INTERNAL_SECRET = "lobby-test-internal-secret"


@dataclasses.dataclass
class Caller:
    """An account and one of its tokens (``md``: the call metadata)."""

    account: Account
    token: str
    token_id: str

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return bearer(self.token)

    @property
    def name(self) -> str:
        return self.account.username


@dataclasses.dataclass
class LobbyEnv:
    lobby: lobby_pb2_grpc.LobbyStub
    rules: dict[str, game_pb2_grpc.GameRulesStub]
    accounts: AccountStore
    store: TableStore
    hot: HotTables
    redis: aioredis.Redis
    settings: LobbySettings
    lobby_address: str
    servicer: LobbyServicer | None = None
    bare_rules: dict[str, game_pb2_grpc.GameRulesStub] = dataclasses.field(default_factory=dict)
    """The rules stubs without credentials (``rules`` sends the internal secret as ``tests``)."""

    async def person(
        self, name: str, scopes: Sequence[str] = ("play", "tables:write"), admin: bool = False
    ) -> Caller:
        account = await self.accounts.create_account(name, None, HUMAN, is_admin=admin)
        return await self.token(account, scopes)

    async def bot_account(self, owner: Caller, name: str, policy: str | None = None) -> Caller:
        """A bot account of ``owner`` (hosted when ``policy`` is given) and a
        ``bot:play`` token."""
        account = await self.accounts.create_account(
            name, None, BOT, owner_id=owner.account.id, hosted_policy=policy
        )
        return await self.token(account, ("bot:play", "tables:write"))

    async def token(self, account: Account, scopes: Sequence[str], lifetime_s: int = 0) -> Caller:
        secret, record = await self.accounts.create_token(account, list(scopes), lifetime_s, "t")
        return Caller(account, secret, record.id)

    async def expire(self, caller: Caller) -> None:
        async with self.accounts.sessions.begin() as s:
            await s.execute(
                sa.update(ApiToken)
                .where(ApiToken.id == caller.token_id)
                .values(expires_at=utcnow() - timedelta(seconds=1))
            )

    async def table(self, owner: Caller, players: int = 3, title: str = "railbarons", **kw):
        return await self.lobby.CreateTable(
            lobby_pb2.CreateTableRequest(title=title, num_players=players, **kw), metadata=owner.md
        )

    async def rows(self) -> tuple[list[tuple], list[tuple]]:
        """Every table and seat row (to show that a refusal wrote nothing)."""
        async with self.store.sessions() as s:
            tables = (await s.execute(sa.select(Table).order_by(Table.id))).scalars().all()
            seats = (
                await s.execute(sa.select(TableSeat).order_by(TableSeat.table_id, TableSeat.seat))
            ).scalars()
            return (
                [
                    (t.id, t.status, t.game_id, t.open_seats, t.result_json, t.revision)
                    for t in tables
                ],
                [
                    (x.table_id, x.seat, x.kind, x.account_id, x.policy, x.resigned_at)
                    for x in seats
                ],
            )

    async def redis_keys(self) -> list[str]:
        return sorted([k async for k in self.redis.scan_iter(f"{self.settings.key_prefix}:*")])


Interceptors = Callable[[StoreVerifier, LobbySettings], list]


@contextlib.asynccontextmanager
async def running_lobby(
    database_url: str,
    redis_url: str,
    key_prefix: str,
    titles: Sequence[str] = ("railbarons",),
    resignation: dict[str, str] | None = None,
    cache_seconds: float = 5.0,
    interceptors: Interceptors = lobby_interceptors,
    results: bool = True,
    time=None,
    events: bool = False,
    events_poll_s: float = 10.0,
    **settings_overrides,
) -> AsyncIterator[LobbyEnv]:
    """Rules services for ``titles`` and a lobby on free loopback ports.

    Args:
        resignation: title -> ``end``/``continue`` overrides (both servers).
        cache_seconds: the token cache of the lobby's verifier.
        interceptors: the lobby's interceptors after the error mapping
            (production's by default).
        results: run the lobby's lifecycle consumer (results of finished games).
        time: the rules services' clock (``services.match.timesource``; the wall clock if None).
        settings_overrides: more lobby settings (quotas, say).
        events: run the account-event consumer and the event wake-ups
            (``StreamEvents``), as the lobby process does.
    """
    engine = create_engine(database_url, LobbySettings(db_timeout_s=2.0))
    sessions = session_factory(engine)
    accounts = AccountStore(sessions)
    await accounts.ensure_system_bots(SYSTEM_BOTS)
    client = aioredis.from_url(redis_url, decode_responses=True)
    servers, addresses = [], {}
    for title in titles:
        rules = GameRulesServicer(
            title,
            GameLog(client, key_prefix),
            resignation=resignation_policy(title, resignation),
            **({} if time is None else {"time": time}),
        )
        server = grpc.aio.server(  # the bounds of production (services/rules/serve.py)
            interceptors=[
                ErrorMapping(bounds.RULES_MESSAGE_BYTES),
                FieldBounds(bounds.RULES, bounds.RULES_FIELDS),
                internal_only(INTERNAL_SECRET),
            ],
            options=KEEPALIVE_OPTIONS,
        )
        game_pb2_grpc.add_GameRulesServicer_to_server(rules, server)
        addresses[title] = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
        await server.start()
        servers.append(server)
    settings = LobbySettings(
        redis_url=redis_url,
        key_prefix=key_prefix,
        rules_addresses=addresses,
        internal_secret=INTERNAL_SECRET,
        resignation=resignation or {},
        token_cache_seconds=cache_seconds,
        **settings_overrides,
        events_poll_s=events_poll_s,
    )
    hot = HotTables(client, key_prefix)
    store = TableStore(sessions, TableCache(settings.table_cache_seconds))  # as the lobby's
    servicer = LobbyServicer(store, hot, accounts, settings)
    verifier = StoreVerifier(accounts, cache_seconds)
    lobby_server = grpc.aio.server(
        interceptors=[
            ErrorMapping(LOBBY_MESSAGE_BYTES, LOBBY_DEFAULT_MESSAGE_BYTES),
            *interceptors(verifier, settings),
        ],
        options=KEEPALIVE_OPTIONS,
    )
    lobby_pb2_grpc.add_LobbyServicer_to_server(servicer, lobby_server)
    lobby_address = f"127.0.0.1:{lobby_server.add_insecure_port('127.0.0.1:0')}"
    await lobby_server.start()
    stop = asyncio.Event()
    consumer = None
    background = []
    if events:
        background.append(
            asyncio.create_task(
                consume(
                    client,
                    GameLog(client, key_prefix).lifecycle_keys,
                    settings.events_group,
                    "test-lobby-events",
                    lambda fields: lifecycle_to_events(
                        hot, servicer.events, fields, servicer.gamelog.moves_key
                    ),
                    block_ms=200,
                    stop=stop,
                )
            )
        )
        background.append(asyncio.create_task(servicer.hub.run(stop)))
    if results:
        consumer = asyncio.create_task(
            consume(
                client,
                GameLog(client, key_prefix).lifecycle_keys,
                settings.lobby_group,
                "test-lobby",
                lambda fields: record_finished_game(servicer, fields),
                stop=stop,
            )
        )
    channel = grpc.aio.insecure_channel(lobby_address)
    rules_channels = {
        t: rules_aio_channel(a, internal(INTERNAL_SECRET, "tests")) for t, a in addresses.items()
    }
    bare_channels = {t: grpc.aio.insecure_channel(a) for t, a in addresses.items()}
    try:
        yield LobbyEnv(
            lobby_pb2_grpc.LobbyStub(channel),
            {t: game_pb2_grpc.GameRulesStub(c) for t, c in rules_channels.items()},
            accounts,
            store,
            hot,
            client,
            settings,
            lobby_address,
            servicer,
            bare_rules={t: game_pb2_grpc.GameRulesStub(c) for t, c in bare_channels.items()},
        )
    finally:
        stop.set()
        for task in [consumer, *background]:
            if task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 5)
        await channel.close()
        for c in [*rules_channels.values(), *bare_channels.values()]:
            await c.close()
        await lobby_server.stop(None)
        await servicer.close()
        for server in servers:
            await server.stop(None)
        await client.aclose()
        await engine.dispose()


async def refused(call, code: grpc.StatusCode, reason: str | None = None) -> grpc.aio.AioRpcError:
    """Awaits ``call``, which must fail with ``code`` (and ``reason``); the error."""
    try:
        await call
    except grpc.aio.AioRpcError as err:
        info = error_info(err)
        assert err.code() == code, (err.code(), err.details())
        assert info is not None, "every refusal carries an ErrorInfo"
        if reason is not None:
            assert info.reason == reason, (info.reason, err.details())
        return err
    raise AssertionError(f"the call succeeded; expected {code} {reason or ''}")
