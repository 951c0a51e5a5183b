"""Tournament points, tiebreaks and standings (``docs/tournaments.md``, "Scoring").

Tournament points of a seat, by the organiser's ``method``:

* ``placement`` (default): points by finishing place. The defaults are 6 for first down
  to 0 for last in equal steps, ``6 * (n - place) / (n - 1)`` for a table of ``n``:
  3p 6/3/0, 4p 6/4/2/0, 5p 6/4.5/3/1.5/0, 6p 6/4.8/3.6/2.4/1.2/0 (2p 6/0). Tied seats
  share the average of the places they cover (4p, two tied second: (4 + 2) / 2 = 3 each).
* ``normalised``: the game score divided by the table's best score, times ``scale``
  (default 6, so a winner earns what first place does).

A seat's *normalised score* (``score / best score at the table``, 0-1; 1 for everyone if
the best score is 0) is kept in both methods: it is the second tiebreak. A bye scores
``bye_points`` (the organiser's choice), no normalised score and no win.

Standings order by points, then the tiebreaks in this order:

1. opponents' points: the sum, over every game a player played, of each opponent's
   current points (Buchholz);
2. the sum of the player's normalised scores;
3. wins: games finished first, a shared first counting for each player who shared it.

Players equal on all four share a rank (and are listed by name).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Literal

from services.tournaments.errors import TournamentError


def linear_placement_points(seats: int, top: float = 6.0) -> tuple[float, ...]:
    """``top`` for first down to 0 for last in equal steps, for a table of ``seats``.

    >>> linear_placement_points(4)
    (6.0, 4.0, 2.0, 0.0)
    """
    if seats == 1:
        return (top,)
    return tuple(top * (seats - 1 - i) / (seats - 1) for i in range(seats))


DEFAULT_PLACEMENT_POINTS: Mapping[int, tuple[float, ...]] = {
    n: linear_placement_points(n) for n in range(2, 7)
}
"""Placement points by table size: 2p 6/0, 3p 6/3/0, 4p 6/4/2/0, 5p 6/4.5/3/1.5/0,
6p 6/4.8/3.6/2.4/1.2/0."""


@dataclasses.dataclass(frozen=True)
class ScoringRules:
    """The organiser's scoring: ``method`` (``placement`` or ``normalised``), the
    ``placement_points`` per table size (first place first), the ``scale`` of
    normalised points, and ``bye_points`` (default 3, the middle of 6/4/2/0)."""

    method: Literal["placement", "normalised"] = "placement"
    placement_points: Mapping[int, tuple[float, ...]] = dataclasses.field(
        default_factory=lambda: dict(DEFAULT_PLACEMENT_POINTS)
    )
    scale: float = 6.0
    bye_points: float = 3.0

    def __post_init__(self) -> None:
        if self.method not in ("placement", "normalised"):
            raise TournamentError(
                "bad_scoring_method",
                f"scoring method must be placement or normalised, not {self.method}",
                method=self.method,
            )
        for size, pts in self.placement_points.items():
            if len(pts) != size:
                raise TournamentError(
                    "bad_placement_points",
                    f"a table of {size} needs {size} placement points, not {len(pts)}",
                    table_size=size,
                )


@dataclasses.dataclass(frozen=True)
class SeatResult:
    """One seat's finish: ``rank`` 1 = first (tied seats share a rank, e.g. 1, 2, 2, 4)
    and the game's ``score`` (money, victory points...; needed for normalised scores)."""

    player: str
    rank: int
    score: float | None = None


@dataclasses.dataclass(frozen=True)
class TableResult:
    """The result of table ``table`` of round ``round``: one :class:`SeatResult` a seat."""

    round: int
    table: int
    seats: tuple[SeatResult, ...]


@dataclasses.dataclass(frozen=True)
class SeatPoints:
    """What one seat earned: tournament ``points``, ``normalised`` score, ``win``."""

    player: str
    points: float
    normalised: float
    win: bool


def _check(result: TableResult) -> None:
    players = [s.player for s in result.seats]
    if len(set(players)) != len(players):
        raise TournamentError(
            "duplicate_player",
            f"round {result.round} table {result.table} names a player twice",
            round=result.round,
            table=result.table,
        )
    n = len(result.seats)
    for s in result.seats:
        if not 1 <= s.rank <= n:
            raise TournamentError(
                "bad_rank",
                f"{s.player}'s rank {s.rank} is not within 1-{n} at a table of {n}",
                player=s.player,
                rank=s.rank,
            )
        if s.score is not None and s.score < 0:
            raise TournamentError(
                "negative_score",
                f"{s.player}'s score {s.score} is negative: normalised scores need"
                " scores of 0 or more",
                player=s.player,
            )


def seat_points(result: TableResult, rules: ScoringRules = ScoringRules()) -> list[SeatPoints]:
    """The points of each seat of ``result``, in its seat order (see the module).

    Raises :class:`TournamentError` ``bad_rank``, ``duplicate_player``,
    ``negative_score``, ``missing_score`` (normalised scoring without scores) or
    ``bad_placement_points`` (no points for the table's size).
    """
    _check(result)
    n = len(result.seats)
    scores = [s.score for s in result.seats]
    if any(x is None for x in scores):
        if rules.method == "normalised":
            raise TournamentError(
                "missing_score",
                "normalised scoring needs every seat's game score",
                round=result.round,
                table=result.table,
            )
        normalised = [0.0] * n
    else:
        best = max(scores)
        normalised = [1.0 if best == 0 else x / best for x in scores]
    if rules.method == "placement":
        table = rules.placement_points.get(n)
        if table is None:
            raise TournamentError(
                "bad_placement_points",
                f"no placement points for a table of {n}",
                table_size=n,
            )
        order = sorted(s.rank for s in result.seats)
        shared: dict[int, float] = {}
        for rank in set(order):
            places = [i for i, r in enumerate(order) if r == rank]
            shared[rank] = sum(table[i] for i in places) / len(places)
        points = [shared[s.rank] for s in result.seats]
    else:
        points = [rules.scale * x for x in normalised]
    return [
        SeatPoints(s.player, p, z, s.rank == 1)
        for s, p, z in zip(result.seats, points, normalised, strict=True)
    ]


@dataclasses.dataclass(frozen=True)
class Standing:
    """One line of the standings: ``rank`` (shared when every key ties), ``points``,
    the tiebreaks ``opponents_points``, ``normalised_sum`` and ``wins``, ``games``
    played and ``byes`` had."""

    rank: int
    player: str
    points: float
    opponents_points: float
    normalised_sum: float
    wins: int
    games: int
    byes: int

    def key(self) -> tuple[float, float, float, int]:
        return (
            round(self.points, 9),
            round(self.opponents_points, 9),
            round(self.normalised_sum, 9),
            self.wins,
        )


def standings(
    results: Sequence[TableResult],
    byes: Mapping[int, Sequence[str]] | None = None,
    rules: ScoringRules = ScoringRules(),
    players: Sequence[str] = (),
    through_round: int | None = None,
) -> list[Standing]:
    """The standings after ``through_round`` (default: every result given).

    ``byes`` maps a round to its players with a bye; ``players`` adds players with no
    game yet (late entries). Ordered by points, opponents' points, normalised sum, wins,
    then name. Raises what :func:`seat_points` raises.
    """
    points: dict[str, float] = defaultdict(float)
    normalised: dict[str, float] = defaultdict(float)
    wins: dict[str, int] = defaultdict(int)
    games: dict[str, int] = defaultdict(int)
    bye_count: dict[str, int] = defaultdict(int)
    opponents: dict[str, list[str]] = defaultdict(list)
    for p in players:
        points[p] += 0.0
    for result in results:
        if through_round is not None and result.round > through_round:
            continue
        names = [s.player for s in result.seats]
        for sp in seat_points(result, rules):
            points[sp.player] += sp.points
            normalised[sp.player] += sp.normalised
            wins[sp.player] += sp.win
            games[sp.player] += 1
            opponents[sp.player].extend(q for q in names if q != sp.player)
    for rnd, who in (byes or {}).items():
        if through_round is not None and rnd > through_round:
            continue
        for p in who:
            points[p] += rules.bye_points
            bye_count[p] += 1
    rows = [
        Standing(
            rank=0,
            player=p,
            points=points[p],
            opponents_points=sum(points[q] for q in opponents[p]),
            normalised_sum=normalised[p],
            wins=wins[p],
            games=games[p],
            byes=bye_count[p],
        )
        for p in points
    ]
    rows.sort(key=lambda s: tuple(-x for x in s.key()) + (s.player,))
    ranked: list[Standing] = []
    for i, row in enumerate(rows):
        rank = ranked[-1].rank if ranked and ranked[-1].key() == row.key() else i + 1
        ranked.append(dataclasses.replace(row, rank=rank))
    return ranked


def standings_by_round(
    results: Sequence[TableResult],
    byes: Mapping[int, Sequence[str]] | None = None,
    rules: ScoringRules = ScoringRules(),
    players: Sequence[str] = (),
) -> dict[int, list[Standing]]:
    """The standings after each round that has a result or a bye, keyed by round."""
    rounds = sorted({r.round for r in results} | set(byes or {}))
    return {r: standings(results, byes, rules, players=players, through_round=r) for r in rounds}
