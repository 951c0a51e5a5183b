"""The tournament service: ``roundhouse.v1.Tournaments`` (``proto/.../tournaments.proto``).

Every call passes through :class:`services.platform.auth.AuthInterceptor`; reading needs
no token. The organiser (the creating account, scope ``tournament:write``; admins too)
starts, pauses, ends and advances his tournament and may enter or withdraw bot accounts
he owns; players enter and withdraw themselves (``play``, ``bot:play`` for bot accounts).
A refusal is a gRPC status with a ``google.rpc.ErrorInfo`` reason and changes nothing.

Background work in the same process: the lifecycle consumer of the tournament tables'
results (group ``tournament_group``), the rating consumer of every finished game (group
``ratings_group``, :class:`services.tournaments.service.rating_store.GameRater`) and the
reconciler (:meth:`Director.reconcile_all` every ``tournament_reconcile_s``, in the one
replica that holds the ``tournament-reconciler`` lease, :mod:`services.platform.lease`).

Run: ``roundhouse serve tournaments`` or ``python -m services.tournaments.service.server``.
"""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from roundhouse.v1 import tournaments_pb2 as pb
from roundhouse.v1 import tournaments_pb2_grpc
from services.accounts.models import BOT, SYSTEM
from services.accounts.revocations import follow_revocations
from services.accounts.rules import BOT_PLAY, PLAY, TOURNAMENT_WRITE
from services.accounts.store import AccountStore
from services.accounts.verifier import StoreVerifier
from services.lobby.events import AccountEvents
from services.lobby.messages import time_control_dict
from services.lobby.store import TableStore
from services.platform import db
from services.platform.auth import (
    ANONYMOUS_METHODS,
    AuthInterceptor,
    Principal,
    require_principal,
    require_scope,
)
from services.platform.bounds import TOURNAMENTS_BOUNDS
from services.platform.consumer import consume
from services.platform.gamelog import GameLog
from services.platform.grpc_errors import ServiceError
from services.platform.lease import Lease
from services.platform.logging import configure_logging, get_logger
from services.platform.settings import TournamentsSettings, get_settings, listen_address
from services.platform.supervise import Supervisor
from services.tournaments.config import DEFAULT_TABLE_TIMEOUT_S, TIEBREAKS, TournamentConfig
from services.tournaments.errors import TournamentError
from services.tournaments.service import export
from services.tournaments.service.director import (
    Account_,
    Director,
    NotAllowed,
    NotFound,
    Refused,
    tournament_standings,
)
from services.tournaments.service.events import AccountEventLog, EventPublisher
from services.tournaments.service.messages import (
    FORMAT_OF,
    STATUS,
    STATUS_OF,
    player_view,
    rating_proto,
    standings_rows,
    table_proto,
    tournament_proto,
)
from services.tournaments.service.rating_store import GameRater, RatingStore
from services.tournaments.service.store import TournamentNotFound, TournamentStore
from services.tournaments.service.tables import LobbyTables, TableRunner, result_of_fields

log = get_logger("tournaments")

SERVICE = "/roundhouse.v1.Tournaments/"
TOURNAMENTS_ANONYMOUS = ANONYMOUS_METHODS | {
    SERVICE + m
    for m in (
        "GetTournament",
        "ListTournaments",
        "GetStandings",
        "ExportTournament",
        "GetLeaderboard",
        "GetAccountRatings",
    )
}

INVALID = grpc.StatusCode.INVALID_ARGUMENT
REFUSED = grpc.StatusCode.FAILED_PRECONDITION
DENIED = grpc.StatusCode.PERMISSION_DENIED
MISSING = grpc.StatusCode.NOT_FOUND

PRECONDITIONS = {"too_few_players", "no_design"}
"""Core reasons that are about the field, not the request: FAILED_PRECONDITION."""


def service_error(exc: TournamentError) -> ServiceError:
    """A core or director refusal as a gRPC status with its reason."""
    if isinstance(exc, NotFound):
        code = MISSING
    elif isinstance(exc, NotAllowed):
        code = DENIED
    elif isinstance(exc, Refused) or exc.reason in PRECONDITIONS:
        code = REFUSED
    else:
        code = INVALID
    return ServiceError(code, exc.reason, exc.message, **exc.metadata)


def config_of(s: pb.TournamentSettings) -> TournamentConfig:
    """The request's settings with the documented defaults filled in."""
    scoring = s.scoring
    return TournamentConfig(
        name=s.name,
        title=s.title,
        options_json=s.options_json,
        table_size=s.table_size or 4,
        min_table_size=s.min_table_size,
        format=FORMAT_OF.get(s.format, "bad"),
        rounds=s.rounds or 3,
        scoring_method=scoring.method or "placement",
        placement_points={k: tuple(v.points) for k, v in scoring.placement_points.items()},
        scale=scoring.scale if scoring.HasField("scale") else 6.0,
        bye_points=scoring.bye_points if scoring.HasField("bye_points") else 3.0,
        tiebreaks=tuple(s.tiebreaks) or TIEBREAKS,
        registration_opens_ms=s.registration_opens_ms,
        registration_closes_ms=s.registration_closes_ms,
        rated=s.rated,
        bots_allowed=s.bots_allowed,
        seeding=s.seeding or "balanced",
        time_control=time_control_dict(s.time_control),
        timeout_policy=s.timeout_policy or "forfeit",
        takeover_policy=s.takeover_policy,
        table_timeout_s=s.table_timeout_s or DEFAULT_TABLE_TIMEOUT_S,
        auto_advance=s.auto_advance if s.HasField("auto_advance") else True,
        review_games=s.review_games,
    )


class TournamentsServicer(tournaments_pb2_grpc.TournamentsServicer):
    """``roundhouse.v1.Tournaments`` over a :class:`Director`, the accounts and ratings."""

    def __init__(self, director: Director, accounts: AccountStore, ratings: RatingStore) -> None:
        self.director = director
        self.store = director.store
        self.accounts = accounts
        self.ratings = ratings

    async def _get(self, tournament_id: str, full: bool = True):
        try:
            return await self.store.get(tournament_id, full)
        except TournamentNotFound:
            raise ServiceError(MISSING, "unknown_tournament", "no such tournament") from None

    async def _run(self, coro):
        try:
            return await coro
        except TournamentError as exc:
            raise service_error(exc) from None
        except TournamentNotFound:
            raise ServiceError(MISSING, "unknown_tournament", "no such tournament") from None

    async def _organiser(self, context, tournament_id: str) -> tuple[Principal, object]:
        """The caller if he organises the tournament (or is an admin), and the
        tournament's settings and status."""
        principal = await require_scope(context, TOURNAMENT_WRITE)
        t = await self._get(tournament_id, full=False)
        if principal.account_id != t.organiser_id and not principal.is_admin:
            raise ServiceError(
                DENIED,
                "not_organiser",
                f"only the organiser ({t.organiser}) or an admin may do this",
                organiser=t.organiser,
            )
        return principal, t

    async def _entrant(self, request, context) -> Account_:
        """Who registers or withdraws: the caller, or a bot account of the organiser."""
        if not request.account:
            principal = await require_principal(context)
            principal = await require_scope(context, BOT_PLAY if principal.is_bot else PLAY)
            if not principal.account_id:
                raise ServiceError(DENIED, "account_needed", "players are accounts")
            return Account_(principal.account_id, principal.username, principal.kind)
        principal, _ = await self._organiser(context, request.tournament_id)
        account = await self.accounts.by_username(request.account[:30])
        if account is None:
            raise ServiceError(MISSING, "unknown_account", "no such account")
        if account.kind == SYSTEM:
            return Account_.of(account)  # a hosted policy's account: anyone's to enter
        if account.kind != BOT:
            raise ServiceError(
                DENIED,
                "not_a_bot",
                "the organiser enters bot accounts only; people enter themselves",
            )
        if account.owner_id != principal.account_id and not principal.is_admin:
            raise ServiceError(
                DENIED, "not_bot_owner", f"{account.username} is not your bot account"
            )
        return Account_.of(account)

    # ------------------------------------------------------------------ calls

    async def CreateTournament(self, request, context):
        principal = await require_scope(context, TOURNAMENT_WRITE)
        if not principal.account_id:
            raise ServiceError(DENIED, "account_needed", "tournaments are organised by accounts")
        config = config_of(request.settings)
        seed = request.settings.seed if request.settings.HasField("seed") else None
        t = await self._run(self.director.create(config, principal.account_id, seed))
        return tournament_proto(t)

    async def GetTournament(self, request, context):
        return tournament_proto(await self._get(request.tournament_id), full=True)

    async def ListTournaments(self, request, context):
        size = request.page_size or 50
        if not 1 <= size <= 200:
            raise ServiceError(INVALID, "bad_page_size", "page_size must be 1-200 (0 = 50)")
        if any(s not in STATUS_OF for s in request.status):
            raise ServiceError(INVALID, "bad_status", "unknown tournament status")
        found = await self.store.list([STATUS_OF[s] for s in request.status], size)
        return pb.ListTournamentsResponse(tournaments=[tournament_proto(t) for t in found])

    async def Register(self, request, context):
        return await self._entry(request, context, self.director.register)

    async def Withdraw(self, request, context):
        return await self._entry(request, context, self.director.withdraw)

    async def _entry(self, request, context, change):
        """The tournament's settings and status with the entrant's entry in ``players``
        (GetTournament has them all)."""
        who = await self._entrant(request, context)
        entry = await self._run(change(request.tournament_id, who))
        t = await self._get(request.tournament_id, full=False)
        t.players = [entry]
        return player_view(t)

    async def StartTournament(self, request, context):
        await self._organiser(context, request.tournament_id)
        return tournament_proto(
            await self._run(self.director.start(request.tournament_id)), full=True
        )

    async def PauseTournament(self, request, context):
        await self._organiser(context, request.tournament_id)
        return tournament_proto(
            await self._run(self.director.pause(request.tournament_id)), full=True
        )

    async def EndTournament(self, request, context):
        await self._organiser(context, request.tournament_id)
        return tournament_proto(
            await self._run(self.director.end(request.tournament_id)), full=True
        )

    async def AdvanceRound(self, request, context):
        await self._organiser(context, request.tournament_id)
        return tournament_proto(
            await self._run(self.director.advance(request.tournament_id)), full=True
        )

    async def RecordResult(self, request, context):
        _, t = await self._organiser(context, request.tournament_id)
        result = {"ranks": list(request.ranks), "scores": list(request.scores)}
        table = await self._run(
            self.director.record_result(
                request.tournament_id, request.round, request.table, result, t.config
            )
        )
        names = await self.store.usernames(request.tournament_id, table.seats)
        return table_proto(table, names, t.config.scoring())

    async def GetStandings(self, request, context):
        t = await self._get(request.tournament_id)
        latest = max((r.round for r in t.rounds), default=0)
        if not 0 <= request.round <= latest:
            raise ServiceError(
                INVALID, "bad_round", f"round must be 0 (the latest) to {latest}", max=latest
            )
        through = request.round or latest
        rows = tournament_standings(t, through)
        return pb.StandingsResponse(round=through, standings=standings_rows(t, rows, through))

    async def ExportTournament(self, request, context):
        fmt = request.format or "json"
        if fmt not in ("json", "csv"):
            raise ServiceError(INVALID, "bad_export_format", "format must be json or csv")
        t = await self._get(request.tournament_id)
        if fmt == "json":
            return pb.ExportResponse(content_type="application/json", content=export.as_json(t))
        return pb.ExportResponse(content_type="text/csv", content=export.as_csv(t))

    async def GetLeaderboard(self, request, context):
        from services.rules.titles import TITLE_MODULES

        if request.title not in TITLE_MODULES:
            raise ServiceError(
                INVALID, "unknown_title", f"known titles: {', '.join(TITLE_MODULES)}"
            )
        limit = request.limit or 100
        if not 1 <= limit <= 1000:
            raise ServiceError(INVALID, "bad_page_size", "limit must be 1-1000 (0 = 100)")
        board = await self.ratings.leaderboard(
            request.title, not request.exclude_bots, not request.exclude_provisional, limit
        )
        model = self.ratings.model
        return pb.LeaderboardResponse(
            rows=[
                pb.LeaderboardRow(
                    position=row.position, rating=rating_proto(row.rating, name, model)
                )
                for row, name in board
            ]
        )

    async def GetAccountRatings(self, request, context):
        account = await self.accounts.by_username(request.username[:30])
        if account is None:
            raise ServiceError(MISSING, "unknown_account", "no account of that username")
        ratings, history = await self.ratings.of_account(account.id)
        model = self.ratings.model
        return pb.AccountRatingsResponse(
            ratings=[rating_proto(r, account.username, model) for r in ratings],
            history=[
                pb.RatingChange(
                    title=h.title,
                    game_id=h.game_id,
                    rank=h.rank,
                    weight=h.weight,
                    mu_before=h.mu_before,
                    sigma_before=h.sigma_before,
                    mu_after=h.mu_after,
                    sigma_after=h.sigma_after,
                    at_ms=at,
                )
                for h, at in history
            ],
        )


class TournamentResults:
    """The lifecycle handler of tournament games: a finished game closes its table."""

    def __init__(self, director: Director, tables: TableStore) -> None:
        self.director, self.tables = director, tables

    async def handle(self, fields: dict[str, str]) -> None:
        if fields.get("type") != "game_finished":
            return
        game_id = fields["game_id"]
        lobby_table = await self.tables.by_game(game_id)
        await self.director.on_game_finished(
            game_id, result_of_fields(fields), lobby_table.table_id if lobby_table else ""
        )


def tournament_interceptors(verifier: StoreVerifier, settings: TournamentsSettings) -> list:
    return [AuthInterceptor(verifier, settings.internal_secret, anonymous=TOURNAMENTS_ANONYMOUS)]


def build(
    engine,
    settings: TournamentsSettings,
    tables: TableRunner | None = None,
    events: EventPublisher | None = None,
) -> tuple[TournamentsServicer, Director, AccountStore, RatingStore]:
    """The servicer and its parts over ``engine`` (production and tests)."""
    sessions = db.session_factory(engine)
    accounts = AccountStore(sessions)
    ratings = RatingStore(sessions)
    director = Director(
        TournamentStore(sessions),
        tables,
        ratings=ratings.ratings,
        events=events,
    )
    return TournamentsServicer(director, accounts, ratings), director, accounts, ratings


def tournament_server(
    servicer: TournamentsServicer,
    verifier: StoreVerifier,
    settings: TournamentsSettings,
    address: str,
    **kw,
):
    """The tournament service's :class:`services.platform.server.GrpcServer` (the shared
    bootstrap, :data:`services.platform.bounds.TOURNAMENTS_BOUNDS`: ``CreateTournament`` up to
    6,144 bytes, every other request 1,024, INVALID_ARGUMENT ``message_too_large`` above;
    ``max_concurrent_rpcs`` calls at once). ``kw``: ``on_stop``, ``ready``, ``supervisor``."""
    from services.platform.server import service_server

    return service_server(
        "tournaments",
        settings,
        [pb.DESCRIPTOR.services_by_name["Tournaments"].full_name],
        lambda s: tournaments_pb2_grpc.add_TournamentsServicer_to_server(servicer, s),
        address,
        TOURNAMENTS_BOUNDS,
        interceptors=tournament_interceptors(verifier, settings),
        **kw,
    )


LINGER_MS = 100
"""The lifecycle consumers' wait after a batch (``services.platform.consumer``): they act only
on finished games."""

POLL_EVERY = 5
"""The reconciler reads the lobby's running tables every fifth pass (results normally come
from the lifecycle stream; this catches what a lost event would leave open)."""


async def reconcile_forever(
    director: Director, every_s: float, stop: asyncio.Event, lease: Lease | None = None
) -> None:
    """:meth:`Director.reconcile_all` every ``every_s`` seconds until ``stop``; with a
    ``lease`` (kept by its own task), only while this replica holds it: the reconciler
    looks at every tournament, so one replica is enough (two would be safe, as the
    row locks make every step once-only, but wasted)."""
    passes = 0
    while not stop.is_set():
        if lease is None or lease.held:
            await director.reconcile_all(poll=passes % POLL_EVERY == 0)
            passes += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)


async def serve(address: str | None = None, settings: TournamentsSettings | None = None) -> None:
    """Run the tournament service until SIGTERM/SIGINT."""
    from services.platform.server import redis_client

    settings = settings or get_settings(TournamentsSettings)
    configure_logging(settings.log_level, settings.log_format)
    address = address or listen_address(settings, settings.tournaments_address)
    url = db.database_url(settings)
    if db.is_sqlite(url):
        await db.upgrade_async(url)
    engine = db.create_engine(url, settings)
    client = redis_client(
        settings.redis_url, settings.redis_max_connections, cluster=settings.redis_cluster
    )
    sessions = db.session_factory(engine)
    accounts = AccountStore(sessions)
    lobby_tables = LobbyTables(settings.lobby_address, settings.internal_secret, accounts)
    events = AccountEventLog(AccountEvents(client, settings.key_prefix, settings.events_maxlen))
    servicer, director, accounts, ratings = build(engine, settings, lobby_tables, events)
    table_store = TableStore(sessions)
    results = TournamentResults(director, table_store)
    rater = GameRater(ratings, table_store, director.store)
    gamelog = GameLog.for_settings(client, settings)
    stop = asyncio.Event()
    background = Supervisor("tournaments")
    for name, group, handler in (
        ("tournament-results", settings.tournament_group, results.handle),
        ("ratings", settings.ratings_group, rater.handle),
    ):
        background.start(
            name,
            lambda group=group, handler=handler, name=name: consume(
                client,
                gamelog.lifecycle_keys,
                group,
                f"{settings.consumer_name}-{name}",
                handler,
                stop=stop,
                linger_ms=LINGER_MS,
            ),
        )
    lease = Lease(client, settings.key_prefix, "tournament-reconciler", settings.leader_lease_s)
    background.start("reconciler-lease", lambda: lease.keep(stop))
    background.start(
        "reconciler",
        lambda: reconcile_forever(director, settings.tournament_reconcile_s, stop, lease),
    )
    verifier = StoreVerifier(accounts, settings.token_cache_seconds)
    background.start(
        "token-revocations",
        lambda: follow_revocations(client, settings.key_prefix, verifier, stop),
    )

    async def close() -> None:
        stop.set()
        for name in (
            "tournament-results",
            "ratings",
            "reconciler",
            "reconciler-lease",
            "token-revocations",
        ):
            await background.wait(name, 5)
        await lobby_tables.close()
        await client.aclose()
        await engine.dispose()

    async def ready() -> bool:
        await db.ping(engine)
        return await client.ping()

    server = tournament_server(
        servicer, verifier, settings, address, on_stop=close, ready=ready, supervisor=background
    )
    await server.run_until_signal()


def main() -> None:
    from services.platform.server import run_service

    run_service(serve())


if __name__ == "__main__":
    main()


__all__ = ["STATUS", "TournamentsServicer", "serve"]
