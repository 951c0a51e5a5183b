"""Pairing a Swiss round for 3-6 player tables, as an optimisation with a cost.

``docs/tournaments.md`` is the organiser's account. In short, :func:`pair_round`:

1. plans the table sizes (:func:`table_plan`): as many tables of ``table_size`` as the
   field allows, the rest one or more seats smaller but never below ``min_table_size``
   (13 players, tables of 4 with 3 allowed: 4+3+3+3); byes only for the players no
   table can take (tables of 4 only, 13 players: 4+4+4 and one bye);
2. gives the byes (:func:`choose_byes`): fewest byes so far, then fewest points, then a
   seeded draw;
3. chooses the tables of least total cost (:mod:`.pairing_cost`): an exact set-partition
   solve (``scipy.optimize.milp``, HiGHS) over every possible table when there are at most
   ``exact_max_candidates`` of them (default 2,000: up to 16 players in fours), else the
   local search of :mod:`.pairing_search`;
4. seats each table by the same cost (min-cost assignment of players to positions) and
   numbers the tables from the top (highest points first).

Dropouts and late entries are changes of the field: pass the players of this round; the
history of earlier rounds may name players who have left.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from services.kernel.rng import SeededRandom
from services.tournaments.errors import TournamentError
from services.tournaments.pairing_cost import (
    MAX_SEATS,
    CostModel,
    Entrant,
    History,
    PairingWeights,
    RoundPairing,
    Table,
)
from services.tournaments.pairing_search import SearchLimits, local_search

MIN_SEATS = 3
"""Smallest table a tournament may plan (the issue: tables of 3 to 6)."""


@dataclasses.dataclass(frozen=True)
class PairingConfig:
    """How an organiser's tournament pairs.

    ``table_size`` (3-6) and ``min_table_size`` (3..``table_size``; ``None`` means
    ``table_size``: no smaller tables); ``weights`` of the cost; ``exact_max_candidates``:
    the exact solve is used while the number of possible tables is at most this;
    ``search``: the bounds of the local search. Raises :class:`TournamentError`
    ``table_size_out_of_range``.
    """

    table_size: int = 4
    min_table_size: int | None = None
    weights: PairingWeights = PairingWeights()
    exact_max_candidates: int = 2_000
    search: SearchLimits = SearchLimits()

    def __post_init__(self) -> None:
        low = self.smallest
        if not MIN_SEATS <= self.table_size <= MAX_SEATS:
            raise TournamentError(
                "table_size_out_of_range",
                f"table size must be {MIN_SEATS}-{MAX_SEATS}, not {self.table_size}",
                table_size=self.table_size,
                min=MIN_SEATS,
                max=MAX_SEATS,
            )
        if not MIN_SEATS <= low <= self.table_size:
            raise TournamentError(
                "table_size_out_of_range",
                f"the smaller tables allowed must have {MIN_SEATS}-{self.table_size} seats,"
                f" not {low}",
                min_table_size=low,
                table_size=self.table_size,
            )

    @property
    def smallest(self) -> int:
        return self.table_size if self.min_table_size is None else self.min_table_size


DEFAULT_CONFIG = PairingConfig()
"""Tables of 4 only, the default weights and bounds."""


def table_plan(players: int, table_size: int, min_table_size: int) -> tuple[tuple[int, ...], int]:
    """The table sizes for ``players`` (largest first) and the number of byes.

    The fewest tables that seat everyone, sizes as even as possible, none below
    ``min_table_size``; where no such plan exists, the most players that can be seated
    are, and the others get byes. Raises :class:`TournamentError` ``too_few_players``
    when not even one table can be formed.

    >>> table_plan(13, 4, 3)
    ((4, 3, 3, 3), 0)
    >>> table_plan(13, 4, 4)
    ((4, 4, 4), 1)
    """
    if players < min_table_size:
        raise TournamentError(
            "too_few_players",
            f"{players} players cannot fill one table of at least {min_table_size}",
            players=players,
            min_table=min_table_size,
        )
    for seated in range(players, min_table_size - 1, -1):
        tables = math.ceil(seated / table_size)
        if tables * min_table_size <= seated:
            short = tables * table_size - seated
            base, extra = divmod(short, tables)
            sizes = [table_size - base] * (tables - extra) + [table_size - base - 1] * extra
            return tuple(sizes), players - seated
    raise AssertionError("unreachable: one table of min_table_size always fits")


def choose_byes(
    field: Sequence[Entrant], history: History, count: int, rng: SeededRandom
) -> list[str]:
    """The ``count`` players who sit out: fewest byes so far, then fewest points, then
    a seeded draw."""
    keys = {e.player: rng.next64() for e in field}
    order = sorted(field, key=lambda e: (history.byes[e.player], e.points, keys[e.player]))
    return [e.player for e in order[:count]]


def candidate_count(players: int, sizes: Sequence[int]) -> int:
    """How many possible tables the exact solve weighs: C(players, s) per distinct size."""
    return sum(math.comb(players, s) for s in set(sizes))


def exact_tables(model: CostModel, sizes: Sequence[int]) -> list[list[int]] | None:
    """The tables of ``sizes`` of least total cost, by a set-partition integer program:
    one 0/1 variable per possible table, each player at exactly one chosen table, the
    plan's count of tables of each size. ``None`` if HiGHS finds no optimum."""
    n = len(model.players)
    distinct = sorted(set(sizes), reverse=True)
    columns: list[tuple[int, ...]] = []
    for s in distinct:
        columns.extend(itertools.combinations(range(n), s))
    costs = np.array([model.table_cost(c) for c in columns])
    rows, cols = [], []
    for k, members in enumerate(columns):
        rows.extend(members)
        cols.extend([k] * len(members))
        rows.append(n + distinct.index(len(members)))
        cols.append(k)
    a = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n + len(distinct), len(columns)))
    b = np.array([1.0] * n + [float(sizes.count(s)) for s in distinct])
    result = milp(
        costs,
        integrality=np.ones(len(columns)),
        bounds=Bounds(0, 1),
        constraints=LinearConstraint(a.tocsr(), b, b),
        options={"disp": False, "presolve": True},
    )
    if result.status != 0 or result.x is None:
        return None
    chosen = [columns[k] for k in np.flatnonzero(result.x > 0.5)]
    return [list(c) for c in chosen]


def _rng(seed: int, round_number: int, salt: int) -> SeededRandom:
    return SeededRandom((seed * 1_000_003 + round_number) * 16 + salt)


def pair_round(
    round_number: int,
    field: Sequence[Entrant],
    history: History,
    config: PairingConfig = DEFAULT_CONFIG,
    seed: int = 0,
) -> RoundPairing:
    """Pair round ``round_number`` of ``field`` (this round's players and points) given
    the ``history`` of earlier rounds. Same inputs and ``seed``, same pairing.

    Raises :class:`TournamentError` ``too_few_players`` or ``duplicate_player``.
    """
    sizes, bye_count = table_plan(len(field), config.table_size, config.smallest)
    byes = choose_byes(field, history, bye_count, _rng(seed, round_number, 1))
    sitting_out = set(byes)
    seated = [e for e in field if e.player not in sitting_out]
    model = CostModel(seated, history, config.weights)
    tables = None
    if candidate_count(len(seated), sizes) <= config.exact_max_candidates:
        tables = exact_tables(model, sizes)
    if tables is None:
        tables = local_search(model, sizes, _rng(seed, round_number, 2), config.search)
    return finish_round(round_number, model, tables, byes, _rng(seed, round_number, 3))


def finish_round(
    round_number: int,
    model: CostModel,
    tables: Sequence[Sequence[int]],
    byes: Sequence[str],
    rng: SeededRandom,
) -> RoundPairing:
    """Seat each table by the seat cost and number the tables from the top: most points
    at the table first, then larger tables, then the seat order's first player."""
    seated = [model.seat_order(sorted(t), rng) for t in tables]
    seated.sort(
        key=lambda t: (-sum(model.points[i] for i in t) / len(t), -len(t), model.players[t[0]])
    )
    return RoundPairing(
        round=round_number,
        tables=tuple(
            Table(number=k + 1, seats=tuple(model.players[i] for i in t))
            for k, t in enumerate(seated)
        ),
        byes=tuple(sorted(byes)),
    )
