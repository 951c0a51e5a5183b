"""Tournaments and ratings over HTTP: ``/api/tournaments...``, ``/api/ratings/{title}`` and
``/api/accounts/{name}/ratings`` (``roundhouse.v1.Tournaments``, ``docs/tournaments.md``).

Answers are the gRPC messages as JSON (field names as in ``tournaments.proto``); errors carry
the same reason codes as over gRPC."""

from __future__ import annotations

from typing import Annotated, Any

import grpc
from fastapi import APIRouter, Query
from fastapi.responses import Response
from google.protobuf.json_format import MessageToDict
from pydantic import Field

from roundhouse.v1 import lobby_pb2
from roundhouse.v1 import tournaments_pb2 as pb
from services.match.controls import InvalidClock, parse_clock_settings
from services.platform.bounds import INT32_MAX, INT32_MIN
from services.web.backend import CALL_TIMEOUT_S, metadata_of, rpc
from services.web.deps import Api, Auth
from services.web.errors import ERROR_RESPONSES, ApiError
from services.web.models import Body, Double, Int32, Int64, UInt64

router = APIRouter(tags=["tournaments"], responses=ERROR_RESPONSES)

STATUS_NAMES = {
    "registration": pb.TOURNAMENT_STATUS_REGISTRATION,
    "running": pb.TOURNAMENT_STATUS_RUNNING,
    "paused": pb.TOURNAMENT_STATUS_PAUSED,
    "finished": pb.TOURNAMENT_STATUS_FINISHED,
}
FORMATS = {"swiss": pb.TOURNAMENT_FORMAT_SWISS, "round_robin": pb.TOURNAMENT_FORMAT_ROUND_ROBIN}


class NewTournament(Body):
    """A tournament's settings (``docs/tournaments.md``, "Running a tournament")."""

    name: str
    title: str = Field(description="railbarons, transsib or e1894")
    options: dict[str, Any] = Field(default_factory=dict, description="title options")
    table_size: Int32 = 4
    min_table_size: Int32 = Field(0, description="smaller tables allowed down to this; 0 = none")
    format: str = Field("swiss", description="swiss or round_robin")
    rounds: Int32 = 3
    scoring: str = Field("placement", description="placement or normalised")
    placement_points: dict[str, list[Double]] = Field(
        default_factory=dict, description='per table size, best first: {"4": [6, 4, 2, 0]}'
    )
    scale: Double = 6.0
    bye_points: Double = 3.0
    tiebreaks: list[str] = Field(default_factory=list)
    registration_opens_ms: Int64 = 0
    registration_closes_ms: Int64 = 0
    rated: bool = True
    bots_allowed: bool = True
    seeding: str = "balanced"
    time_control: dict[str, Any] | None = Field(
        None,
        description='every round table\'s clock, as for tables: {"kind": "live", "base_s": 600,'
        ' "increment_s": 10}; null = none',
    )
    timeout_policy: str = Field("", description='"forfeit" (default) or "takeover"')
    takeover_policy: str = Field(
        "", max_length=40, description='the bot of a seat taken over ("" = greedy)'
    )
    table_timeout_s: Int64 = 0
    auto_advance: bool = True
    review_games: bool = Field(
        False, description="request a game review of every finished round table, once"
    )
    seed: UInt64 | None = None


class Entry(Body):
    account: str = Field("", description='"" = the caller; else a bot account of the organiser')


class Result(Body):
    round: Int32
    table: Int32
    ranks: list[Int32]
    scores: list[Double] = Field(default_factory=list)


def _out(message) -> dict[str, Any]:
    return MessageToDict(
        message,
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
        use_integers_for_enums=False,
    )


async def _call(api: Api, method: str, request, auth: str):
    return await rpc(
        getattr(api.tournaments, method)(
            request, metadata=metadata_of(auth), timeout=CALL_TIMEOUT_S
        )
    )


def _settings(body: NewTournament) -> pb.TournamentSettings:
    import json

    if body.format not in FORMATS:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_format",
            "format must be swiss or round_robin",
            field="format",
        )
    scoring = pb.Scoring(method=body.scoring, scale=body.scale, bye_points=body.bye_points)
    for size, points in body.placement_points.items():
        # ASCII digits only ("²".isdigit() is true), few enough for the int32 map key
        if not (size.isascii() and size.isdigit() and len(size) <= 9):
            raise ApiError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_placement_points",
                "placement_points are keyed by table size (decimal digits)",
                field="placement_points",
            )
        scoring.placement_points[int(size)].points.extend(points)
    settings = pb.TournamentSettings(
        name=body.name,
        title=body.title,
        options_json=json.dumps(body.options) if body.options else "",
        table_size=body.table_size,
        min_table_size=body.min_table_size,
        format=FORMATS[body.format],
        rounds=body.rounds,
        scoring=scoring,
        tiebreaks=body.tiebreaks,
        registration_opens_ms=body.registration_opens_ms,
        registration_closes_ms=body.registration_closes_ms,
        rated=body.rated,
        bots_allowed=body.bots_allowed,
        seeding=body.seeding,
        timeout_policy=body.timeout_policy,
        takeover_policy=body.takeover_policy,
        table_timeout_s=body.table_timeout_s,
        auto_advance=body.auto_advance,
        review_games=body.review_games,
    )
    if body.seed is not None:
        settings.seed = body.seed
    if body.time_control is not None:
        try:  # the clocks' shared model (400 with its reason); the service checks again
            clock = parse_clock_settings({"time_control": body.time_control})
        except InvalidClock as exc:
            raise ApiError(
                grpc.StatusCode.INVALID_ARGUMENT, exc.code, exc.reason, field=exc.field
            ) from None
        if clock.timed:
            settings.time_control.CopyFrom(lobby_pb2.TimeControl(**clock.time_control.model_dump()))
    return settings


@router.post("/api/tournaments", status_code=201)
async def create_tournament(body: NewTournament, api: Api, auth: Auth):
    """A new tournament organised by the caller (scope ``tournament:write``)."""
    request = pb.CreateTournamentRequest(settings=_settings(body))
    return _out(await _call(api, "CreateTournament", request, auth))


@router.get("/api/tournaments")
async def list_tournaments(
    api: Api,
    auth: Auth,
    status: Annotated[
        str, Query(description="comma-separated: registration, running, paused, finished")
    ] = "",
    page_size: Annotated[int, Query(ge=INT32_MIN, le=INT32_MAX, description="1-200; 0 = 50")] = 0,
):
    """Tournaments newest first (anonymous)."""
    names = [s.strip() for s in status.split(",") if s.strip()]
    unknown = [s for s in names if s not in STATUS_NAMES]
    if unknown:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_status",
            f"unknown status; known: {', '.join(STATUS_NAMES)}",
        )
    request = pb.ListTournamentsRequest(
        status=[STATUS_NAMES[s] for s in names], page_size=page_size
    )
    return _out(await _call(api, "ListTournaments", request, auth))


@router.get("/api/tournaments/{tournament_id}")
async def get_tournament(tournament_id: str, api: Api, auth: Auth):
    """Settings, players, every round's pairings with table ids, standings (anonymous)."""
    request = pb.GetTournamentRequest(tournament_id=tournament_id)
    return _out(await _call(api, "GetTournament", request, auth))


@router.post("/api/tournaments/{tournament_id}/register")
async def register(tournament_id: str, api: Api, auth: Auth, body: Entry | None = None):
    """Enter the caller (``play`` / ``bot:play``), or ``{"account": ...}``: a bot account
    the organiser owns (``tournament:write``)."""
    request = pb.RegisterRequest(tournament_id=tournament_id, account=body.account if body else "")
    return _out(await _call(api, "Register", request, auth))


@router.post("/api/tournaments/{tournament_id}/withdraw")
async def withdraw(tournament_id: str, api: Api, auth: Auth, body: Entry | None = None):
    """Withdraw the caller, or the organiser's bot account ``{"account": ...}``."""
    request = pb.RegisterRequest(tournament_id=tournament_id, account=body.account if body else "")
    return _out(await _call(api, "Withdraw", request, auth))


for _path, _method, _doc in (
    ("start", "StartTournament", "The organiser starts (or resumes) the tournament."),
    ("pause", "PauseTournament", "The organiser pauses it: no new round is paired."),
    ("end", "EndTournament", "The organiser ends it now."),
    ("advance", "AdvanceRound", "The organiser voids the open tables and pairs the next round."),
):

    def _make(method: str, doc: str):
        async def command(tournament_id: str, api: Api, auth: Auth):
            request = pb.TournamentRequest(tournament_id=tournament_id)
            return _out(await _call(api, method, request, auth))

        command.__doc__ = doc
        command.__name__ = f"{method[0].lower()}{method[1:]}"
        return command

    router.post(f"/api/tournaments/{{tournament_id}}/{_path}", name=_method)(_make(_method, _doc))


@router.post("/api/tournaments/{tournament_id}/results")
async def record_result(tournament_id: str, body: Result, api: Api, auth: Auth):
    """The organiser records a table's result (ranks in seat order, 1 = first)."""
    request = pb.RecordResultRequest(
        tournament_id=tournament_id,
        round=body.round,
        table=body.table,
        ranks=body.ranks,
        scores=body.scores,
    )
    return _out(await _call(api, "RecordResult", request, auth))


@router.get("/api/tournaments/{tournament_id}/standings")
async def standings(
    tournament_id: str,
    api: Api,
    auth: Auth,
    round: Annotated[
        int, Query(ge=INT32_MIN, le=INT32_MAX, description="after this round; 0 = the latest")
    ] = 0,
):
    """The standings after a round (anonymous)."""
    request = pb.GetStandingsRequest(tournament_id=tournament_id, round=round)
    return _out(await _call(api, "GetStandings", request, auth))


@router.get("/api/tournaments/{tournament_id}/export")
async def export(
    tournament_id: str,
    api: Api,
    auth: Auth,
    format: Annotated[str, Query(description="json or csv")] = "json",
):
    """Standings, pairings and every game's id as JSON or CSV (anonymous)."""
    request = pb.ExportRequest(tournament_id=tournament_id, format=format)
    answer = await _call(api, "ExportTournament", request, auth)
    return Response(content=answer.content, media_type=answer.content_type)


@router.get("/api/ratings/{title}")
async def leaderboard(
    title: str,
    api: Api,
    auth: Auth,
    exclude_bots: bool = False,
    exclude_provisional: bool = False,
    limit: Annotated[int, Query(ge=INT32_MIN, le=INT32_MAX, description="1-1000; 0 = 100")] = 0,
):
    """A title's ratings by ordinal (mu - 3 sigma), highest first (anonymous)."""
    request = pb.LeaderboardRequest(
        title=title, exclude_bots=exclude_bots, exclude_provisional=exclude_provisional, limit=limit
    )
    return _out(await _call(api, "GetLeaderboard", request, auth))


@router.get("/api/accounts/{name}/ratings")
async def account_ratings(name: str, api: Api, auth: Auth):
    """An account's ratings in every title and its rating history (anonymous)."""
    request = pb.AccountRatingsRequest(username=name)
    return _out(await _call(api, "GetAccountRatings", request, auth))
