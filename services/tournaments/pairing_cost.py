"""The records of a round's pairing, and the cost of one table.

A table's cost (lower is better; ``docs/tournaments.md``, "The pairing cost") is

    repeat * (earlier meetings of each pair of its players, summed over the pairs)
  + spread * (highest minus lowest tournament points at the table)
  + seat   * (seat-position imbalance of the best seat order for the table)

where a player's seat imbalance at position ``s`` of a table of ``m`` seats is how many
more times he has sat at ``s`` than at his least-used position among ``0..m-1``; the
table's seat term is the smallest total over the orders of its players in its seats, a
min-cost assignment (``scipy.optimize.linear_sum_assignment``). The same assignment seats
the players once the tables are chosen.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np
from scipy.optimize import linear_sum_assignment

from services.kernel.rng import SeededRandom
from services.tournaments.errors import TournamentError

MAX_SEATS = 6
"""Largest table the tournaments seat (the titles' 2-6; tournaments use 3-6)."""


@dataclasses.dataclass(frozen=True)
class PairingWeights:
    """The weights of the three cost terms (unitless cost per unit below).

    * ``repeat``: per earlier meeting of two players now at the same table (default
      1000: one repeat outweighs any spread or seat imbalance a round can have).
    * ``spread``: per tournament point between a table's highest and lowest player
      (default 1).
    * ``seat``: per seat above a player's least-used position (default 4: one unit of
      seat imbalance is worth four points of spread, two placement steps of 6/4/2/0).
    """

    repeat: float = 1000.0
    spread: float = 1.0
    seat: float = 4.0

    def __post_init__(self) -> None:
        for name in ("repeat", "spread", "seat"):
            if getattr(self, name) < 0:
                raise TournamentError(
                    "bad_weight", f"pairing weight {name} must be >= 0", weight=name
                )


@dataclasses.dataclass(frozen=True)
class Entrant:
    """A player in the field of the round being paired, with his tournament points."""

    player: str
    points: float = 0.0


@dataclasses.dataclass(frozen=True)
class Table:
    """One table of a round: ``seats[0]`` is the first seat (position 1), and so on."""

    number: int
    seats: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class RoundPairing:
    """A round's pairing: its tables (numbered from 1) and the players given a bye."""

    round: int
    tables: tuple[Table, ...]
    byes: tuple[str, ...] = ()

    def players(self) -> list[str]:
        return [p for t in self.tables for p in t.seats] + list(self.byes)


@dataclasses.dataclass
class History:
    """What earlier rounds say about the players: who met whom, who sat where, byes.

    ``met[(a, b)]`` (``a < b``) counts the rounds ``a`` and ``b`` shared a table;
    ``seat_counts[p][s]`` the rounds ``p`` sat at position ``s`` (0-based);
    ``byes[p]`` the byes ``p`` had.
    """

    met: Counter = dataclasses.field(default_factory=Counter)
    seat_counts: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    byes: Counter = dataclasses.field(default_factory=Counter)

    @classmethod
    def from_rounds(cls, rounds: Iterable[RoundPairing]) -> History:
        h = cls()
        for rnd in rounds:
            h.add(rnd)
        return h

    def add(self, rnd: RoundPairing) -> None:
        for table in rnd.tables:
            for pos, p in enumerate(table.seats):
                self.seat_counts.setdefault(p, [0] * MAX_SEATS)[pos] += 1
            for i, a in enumerate(table.seats):
                for b in table.seats[i + 1 :]:
                    self.met[(a, b) if a < b else (b, a)] += 1
        for p in rnd.byes:
            self.byes[p] += 1

    def meetings(self, a: str, b: str) -> int:
        return self.met.get((a, b) if a < b else (b, a), 0)

    def counts(self, p: str) -> list[int]:
        return self.seat_counts.get(p, [0] * MAX_SEATS)


def seat_imbalance(counts: Sequence[int], seats: int) -> int:
    """Most minus least used of positions ``0..seats-1`` (0 is perfectly even)."""
    used = counts[:seats]
    return max(used) - min(used)


@lru_cache(maxsize=1 << 16)
def _assignment_value(vectors: tuple[tuple[int, ...], ...]) -> int:
    if not any(any(v) for v in vectors):
        return 0
    rows, cols = linear_sum_assignment(np.array(vectors))
    return int(np.array(vectors)[rows, cols].sum())


class CostModel:
    """The cost of tables of the field of one round, on integer player indices.

    ``players[i]`` is the player of index ``i``. ``table_cost(members)`` takes a tuple
    of indices. Raises :class:`TournamentError` ``duplicate_player`` if the field names
    a player twice.
    """

    def __init__(self, field: Sequence[Entrant], history: History, weights: PairingWeights) -> None:
        self.players = [e.player for e in field]
        if len(set(self.players)) != len(self.players):
            dup = next(p for p, n in Counter(self.players).items() if n > 1)
            raise TournamentError(
                "duplicate_player", f"player {dup} is in the field twice", player=dup
            )
        self.points = [float(e.points) for e in field]
        self.weights = weights
        index = {p: i for i, p in enumerate(self.players)}
        # met[i][j]: earlier meetings of players i and j (both ways)
        self.met: list[dict[int, int]] = [{} for _ in self.players]
        for (a, b), n in history.met.items():
            if a in index and b in index:
                self.met[index[a]][index[b]] = n
                self.met[index[b]][index[a]] = n
        self.counts = [history.counts(p) for p in self.players]
        # seat-cost vectors per table size: vec[m][i][s] = counts[s] - min(counts[:m])
        self.vectors: dict[int, list[tuple[int, ...]]] = {}
        for m in range(2, MAX_SEATS + 1):
            vs = []
            for c in self.counts:
                low = min(c[:m])
                vs.append(tuple(x - low for x in c[:m]))
            self.vectors[m] = vs

    def repeats(self, members: Sequence[int]) -> int:
        """Earlier meetings summed over the pairs of ``members``."""
        met = self.met
        n = 0
        for x, i in enumerate(members):
            mi = met[i]
            if mi:
                for j in members[x + 1 :]:
                    if j in mi:
                        n += mi[j]
        return n

    def spread(self, members: Sequence[int]) -> float:
        pts = [self.points[i] for i in members]
        return max(pts) - min(pts)

    def seat_cost(self, members: Sequence[int]) -> int:
        """Smallest total seat imbalance over the seat orders of ``members``."""
        vs = self.vectors[len(members)]
        return _assignment_value(tuple(sorted(vs[i] for i in members)))

    def table_cost(self, members: Sequence[int]) -> float:
        w = self.weights
        return (
            w.repeat * self.repeats(members)
            + w.spread * self.spread(members)
            + w.seat * self.seat_cost(members)
        )

    def seat_order(self, members: Sequence[int], rng: SeededRandom) -> tuple[int, ...]:
        """``members`` in seat order (first seat first) with the least seat imbalance;
        among equally good orders, the one the seeded shuffle of ``members`` leads to."""
        order = list(members)
        rng.shuffle(order)
        vs = self.vectors[len(order)]
        matrix = np.array([vs[i] for i in order])
        rows, cols = linear_sum_assignment(matrix)
        seated = [0] * len(order)
        for r, c in zip(rows, cols, strict=True):
            seated[c] = order[r]
        return tuple(seated)
