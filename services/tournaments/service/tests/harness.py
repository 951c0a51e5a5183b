"""The tournament service in-process for tests and the benchmark: real gRPC over
loopback with the production interceptors, the real store (PostgreSQL or SQLite) and a
table runner (simulated by default; the lobby's in the lobby tests). Accounts and tokens
are made directly in the store."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Sequence

import grpc
import sqlalchemy as sa

from roundhouse.v1 import tournaments_pb2 as pb
from roundhouse.v1 import tournaments_pb2_grpc
from services.accounts.models import BOT, HUMAN, Account
from services.accounts.server import SYSTEM_BOTS
from services.accounts.store import AccountStore
from services.accounts.verifier import StoreVerifier
from services.platform.auth import bearer
from services.platform.db import create_engine
from services.platform.grpc_errors import ErrorMapping, error_info
from services.platform.settings import TournamentsSettings
from services.tournaments.service.director import Director
from services.tournaments.service.events import EventPublisher, RecordingPublisher
from services.tournaments.service.models import (
    Tournament,
    TournamentPlayer,
    TournamentRound,
    TournamentTable,
)
from services.tournaments.service.rating_store import RatingStore
from services.tournaments.service.server import build, tournament_interceptors
from services.tournaments.service.tables import TableRunner

INTERNAL_SECRET = "tournament-test-internal-secret"


@dataclasses.dataclass
class Caller:
    account: Account
    token: str

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return bearer(self.token)

    @property
    def name(self) -> str:
        return self.account.username


@dataclasses.dataclass
class Env:
    stub: tournaments_pb2_grpc.TournamentsStub
    director: Director
    accounts: AccountStore
    ratings: RatingStore
    events: EventPublisher
    engine: object
    address: str = ""

    async def person(
        self, name: str, scopes: Sequence[str] = ("play", "tournament:write"), admin: bool = False
    ) -> Caller:
        account = await self.accounts.create_account(name, None, HUMAN, is_admin=admin)
        secret, _ = await self.accounts.create_token(account, list(scopes), 0, "t")
        return Caller(account, secret)

    async def bot(self, owner: Caller, name: str, policy: str | None = "random") -> Caller:
        account = await self.accounts.create_account(
            name, None, BOT, owner_id=owner.account.id, hosted_policy=policy
        )
        secret, _ = await self.accounts.create_token(account, ["bot:play"], 0, "t")
        return Caller(account, secret)

    async def create(self, organiser: Caller, **settings) -> pb.Tournament:
        defaults = dict(name="Test Cup", title="railbarons", table_size=4, rounds=2, rated=True)
        defaults.update(settings)
        seed = defaults.pop("seed", 7)
        return await self.stub.CreateTournament(
            pb.CreateTournamentRequest(settings=pb.TournamentSettings(**defaults, seed=seed)),
            metadata=organiser.md,
        )

    async def enter(self, t: pb.Tournament, callers: Sequence[Caller]) -> pb.Tournament:
        """Register each caller himself; the whole tournament after."""
        for c in callers:
            entry = await self.stub.Register(
                pb.RegisterRequest(tournament_id=t.tournament_id), metadata=c.md
            )
            assert [p.username for p in entry.players] == [c.name]
        return await self.get(t.tournament_id)

    async def get(self, tournament_id: str) -> pb.Tournament:
        return await self.stub.GetTournament(pb.GetTournamentRequest(tournament_id=tournament_id))

    async def rows(self) -> list:
        """Every tournament row (to show a refusal wrote nothing; ``revision`` aside: a
        refused change rolls its bump back too)."""
        from services.platform.db import session_factory

        out = []
        async with session_factory(self.engine)() as s:
            for model in (Tournament, TournamentPlayer, TournamentRound, TournamentTable):
                for row in (await s.execute(sa.select(model))).scalars():
                    out.append(
                        tuple(
                            getattr(row, c.key)
                            for c in sa.inspect(model).columns
                            if c.key not in ("registered_at", "paired_at")
                        )
                    )
        return sorted(out, key=repr)


@contextlib.asynccontextmanager
async def running_tournaments(
    database_url: str,
    tables: TableRunner | None = None,
    events: EventPublisher | None = None,
    clock=None,
) -> AsyncIterator[Env]:
    engine = create_engine(database_url, TournamentsSettings(db_timeout_s=5.0))
    settings = TournamentsSettings(internal_secret=INTERNAL_SECRET)
    events = events or RecordingPublisher()
    servicer, director, accounts, ratings = build(engine, settings, tables, events)
    if clock is not None:
        director.clock = clock
    await accounts.ensure_system_bots(SYSTEM_BOTS)
    verifier = StoreVerifier(accounts, 5.0)
    server = grpc.aio.server(
        interceptors=[ErrorMapping(), *tournament_interceptors(verifier, settings)]
    )
    tournaments_pb2_grpc.add_TournamentsServicer_to_server(servicer, server)
    address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    await server.start()
    channel = grpc.aio.insecure_channel(address)
    try:
        yield Env(
            tournaments_pb2_grpc.TournamentsStub(channel),
            director,
            accounts,
            ratings,
            events,
            engine,
            address,
        )
    finally:
        await channel.close()
        await server.stop(None)
        await engine.dispose()


def reason(err: grpc.RpcError) -> tuple[grpc.StatusCode, str]:
    info = error_info(err)
    return err.code(), info.reason if info else ""
