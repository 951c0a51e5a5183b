"""Tournament records as the public messages of ``tournaments.proto``."""

from __future__ import annotations

from collections.abc import Sequence

from roundhouse.v1 import lobby_pb2
from roundhouse.v1 import tournaments_pb2 as pb
from services.tournaments.config import ROUND_ROBIN, SWISS
from services.tournaments.ratings import Rating, RatingModel
from services.tournaments.scoring import (
    ScoringRules,
    SeatResult,
    Standing,
    TableResult,
    seat_points,
)
from services.tournaments.service.director import forfeits_of, tournament_standings
from services.tournaments.service.models import FINISHED, PAUSED, REGISTRATION, RUNNING
from services.tournaments.service.store import TableRecord, TournamentRecord

STATUS = {
    REGISTRATION: pb.TOURNAMENT_STATUS_REGISTRATION,
    RUNNING: pb.TOURNAMENT_STATUS_RUNNING,
    PAUSED: pb.TOURNAMENT_STATUS_PAUSED,
    FINISHED: pb.TOURNAMENT_STATUS_FINISHED,
}
STATUS_OF = {v: k for k, v in STATUS.items()}
FORMAT_OF = {
    pb.TOURNAMENT_FORMAT_UNSPECIFIED: SWISS,
    pb.TOURNAMENT_FORMAT_SWISS: SWISS,
    pb.TOURNAMENT_FORMAT_ROUND_ROBIN: ROUND_ROBIN,
}
FORMAT = {SWISS: pb.TOURNAMENT_FORMAT_SWISS, ROUND_ROBIN: pb.TOURNAMENT_FORMAT_ROUND_ROBIN}


def table_points(table: TableRecord, rules: ScoringRules) -> list[float]:
    """The tournament points of each seat of a finished table (0 otherwise)."""
    if table.status != "finished" or not table.result:
        return [0.0] * len(table.seats)
    scores = table.result.get("scores") or [None] * len(table.seats)
    seats = tuple(
        SeatResult(p, int(r), None if s is None else float(s))
        for p, r, s in zip(table.seats, table.result["ranks"], scores, strict=True)
    )
    return [sp.points for sp in seat_points(TableResult(table.round, table.number, seats), rules)]


def table_proto(
    table: TableRecord, names: dict[str, str], rules: ScoringRules
) -> pb.TournamentTable:
    points = table_points(table, rules)
    result = table.result or {}
    ranks = result.get("ranks") or [0] * len(table.seats)
    scores = result.get("scores") or [0.0] * len(table.seats)
    return pb.TournamentTable(
        round=table.round,
        number=table.number,
        table_id=table.lobby_table_id,
        game_id=table.game_id,
        status=table.status,
        void_reason=table.void_reason,
        seats=[
            pb.TournamentSeat(
                account_id=a, username=names.get(a, ""), rank=int(r), score=float(s), points=p
            )
            for a, r, s, p in zip(table.seats, ranks, scores, points, strict=True)
        ],
    )


def standings_rows(
    t: TournamentRecord, rows: Sequence[Standing], through_round: int | None = None
) -> list[pb.StandingRow]:
    """The standings after ``through_round`` (None: every result) as their messages, with
    each player's forfeits and timeouts (:func:`forfeits_of`)."""
    players = {p.account_id: p for p in t.players}
    lost = forfeits_of(t, through_round)
    return [
        pb.StandingRow(
            rank=s.rank,
            account_id=s.player,
            username=players[s.player].username if s.player in players else "",
            points=s.points,
            opponents_points=s.opponents_points,
            normalised_sum=s.normalised_sum,
            wins=s.wins,
            games=s.games,
            byes=s.byes,
            withdrawn=s.player in players and not players[s.player].active,
            forfeits=lost.get(s.player, [0, 0])[0],
            timeouts=lost.get(s.player, [0, 0])[1],
        )
        for s in rows
    ]


def settings_proto(t: TournamentRecord) -> pb.TournamentSettings:
    c = t.config
    scoring = pb.Scoring(method=c.scoring_method, scale=c.scale, bye_points=c.bye_points)
    for size, pts in c.placement_points.items():
        scoring.placement_points[size].points.extend(pts)
    return pb.TournamentSettings(
        name=c.name,
        title=c.title,
        options_json=c.options_json,
        table_size=c.table_size,
        min_table_size=c.smallest,
        format=FORMAT[c.format],
        rounds=c.rounds,
        scoring=scoring,
        tiebreaks=list(c.tiebreaks),
        registration_opens_ms=c.registration_opens_ms,
        registration_closes_ms=c.registration_closes_ms,
        rated=c.rated,
        bots_allowed=c.bots_allowed,
        seeding=c.seeding,
        time_control=lobby_pb2.TimeControl(**c.time_control) if c.time_control else None,
        timeout_policy=c.timeout_policy,
        takeover_policy=c.takeover_policy,
        table_timeout_s=c.table_timeout_s,
        auto_advance=c.auto_advance,
        review_games=c.review_games,
    )


def tournament_proto(t: TournamentRecord, full: bool = False) -> pb.Tournament:
    """``full``: players, every round's pairings and the standings too."""
    msg = pb.Tournament(
        tournament_id=t.tournament_id,
        settings=settings_proto(t),
        status=STATUS[t.status],
        organiser=t.organiser,
        organiser_id=t.organiser_id,
        current_round=t.current_round,
        created_at_ms=int(t.created_at.timestamp() * 1000),
    )
    if not full:
        return msg
    names = t.names()
    rules = t.config.scoring()
    msg.players.extend(_player(p) for p in t.players)
    for r in t.rounds:
        msg.rounds.append(
            pb.TournamentRound(
                round=r.round,
                status=r.status,
                tables=[table_proto(x, names, rules) for x in r.tables],
                byes=[names.get(b, b) for b in r.byes],
            )
        )
    msg.standings.extend(standings_rows(t, tournament_standings(t)))
    return msg


def player_view(t: TournamentRecord) -> pb.Tournament:
    """Settings, status and ``t.players`` (no rounds or standings)."""
    msg = tournament_proto(t)
    msg.players.extend(_player(p) for p in t.players)
    return msg


def _player(p) -> pb.TournamentPlayer:
    return pb.TournamentPlayer(
        account_id=p.account_id,
        username=p.username,
        bot=p.is_bot,
        withdrawn=not p.active,
        entered_round=p.entered_round,
        withdrew_after_round=p.withdrew_after_round or 0,
    )


def rating_proto(r: Rating, username: str, model: RatingModel) -> pb.Rating:
    return pb.Rating(
        title=r.title,
        account_id=r.account,
        username=username,
        mu=r.mu,
        sigma=r.sigma,
        ordinal=r.ordinal,
        games=r.games,
        bot=r.is_bot,
        provisional=r.provisional(model),
    )
