"""Round robin for tables: resolvable designs from finite fields, else the solver.

A round robin for tables of ``k`` wants every pair of players at one table exactly once,
each round a partition of the field into tables: a *resolvable* balanced incomplete block
design. The affine geometry AG(d, q) over the finite field GF(q) is one whenever ``q`` is
a prime power: its ``q**d`` points are the players, its lines (``q`` points each) the
tables, and its ``(q**d - 1) / (q - 1)`` parallel classes (the lines of one direction)
the rounds. Two points lie on exactly one line, so two players meet exactly once.

* 9 players, tables of 3: AG(2, 3), 4 rounds;  27 players: AG(3, 3), 13 rounds
* 16 players, tables of 4: AG(2, 4), 5 rounds; 64 players: AG(3, 4), 21 rounds
* 25 players, tables of 5: AG(2, 5), 6 rounds
* tables of 6: no prime power, no affine design (and no affine plane of order 6 exists)

Any other field (or more rounds than the design has) is paired round by round by
:func:`services.tournaments.pairing.pair_round` with no points spread (the cost counts
repeats and seats only): the fewest repeats that solver finds, not a proven minimum.
Seats: a design's seats are planned for all its rounds at once (:func:`balanced_seats`:
every player in every position as evenly as the rounds allow); otherwise each round is
seated by the seat cost.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from services.kernel.rng import SeededRandom
from services.tournaments.errors import TournamentError
from services.tournaments.pairing import PairingConfig, finish_round, pair_round
from services.tournaments.pairing_cost import (
    CostModel,
    Entrant,
    History,
    PairingWeights,
    RoundPairing,
    Table,
)


def prime_power(q: int) -> tuple[int, int] | None:
    """``(p, n)`` with ``q == p**n`` and ``p`` prime, or ``None``.

    >>> prime_power(4), prime_power(6)
    ((2, 2), None)
    """
    if q < 2:
        return None
    p = next(d for d in range(2, q + 1) if q % d == 0)
    n, r = 0, q
    while r % p == 0:
        r //= p
        n += 1
    return (p, n) if r == 1 else None


class GaloisField:
    """GF(q), ``q = p**n``: elements are ``0..q-1``, the base-``p`` digits of an element
    being the coefficients of a polynomial over GF(p), reduced modulo the first monic
    irreducible polynomial of degree ``n`` (by search). Raises :class:`TournamentError`
    ``no_design`` if ``q`` is not a prime power."""

    def __init__(self, q: int) -> None:
        pn = prime_power(q)
        if pn is None:
            raise TournamentError("no_design", f"{q} is not a prime power: no field GF({q})", q=q)
        self.q, (self.p, self.n) = q, pn
        self.modulus = self._irreducible()
        self.add_table = [[self._add(a, b) for b in range(q)] for a in range(q)]
        self.mul_table = [[self._mul(a, b) for b in range(q)] for a in range(q)]

    def _digits(self, a: int) -> list[int]:
        return [(a // self.p**i) % self.p for i in range(self.n)]

    def _number(self, digits: Sequence[int]) -> int:
        return sum(d * self.p**i for i, d in enumerate(digits))

    def _add(self, a: int, b: int) -> int:
        pairs = zip(self._digits(a), self._digits(b), strict=True)
        return self._number([(x + y) % self.p for x, y in pairs])

    def _polymul_mod(self, a: Sequence[int], b: Sequence[int], mod: Sequence[int]) -> list[int]:
        p, n = self.p, len(mod) - 1
        prod = [0] * (len(a) + len(b) - 1)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                prod[i + j] = (prod[i + j] + x * y) % p
        for k in range(len(prod) - 1, n - 1, -1):  # mod is monic of degree n
            c = prod[k]
            if c:
                for i in range(n + 1):
                    prod[k - n + i] = (prod[k - n + i] - c * mod[i]) % p
        return (prod + [0] * n)[:n]

    def _irreducible(self) -> list[int]:
        p, n = self.p, self.n
        if n == 1:
            return [0, 1]
        for low in itertools.product(range(p), repeat=n):
            mod = list(low) + [1]
            if mod[0] == 0:
                continue
            # degree <= 3: irreducible iff no root; larger degrees are not needed here
            if n <= 3 and all(
                sum(c * pow(x, i, p) for i, c in enumerate(mod)) % p for x in range(p)
            ):
                return mod
        raise TournamentError("no_design", f"GF({self.q}) is beyond this design table", q=self.q)

    def _mul(self, a: int, b: int) -> int:
        if self.n == 1:
            return a * b % self.p
        return self._number(self._polymul_mod(self._digits(a), self._digits(b), self.modulus))


def affine_parallel_classes(q: int, d: int) -> list[list[tuple[int, ...]]]:
    """The parallel classes of AG(``d``, ``q``): each a list of its lines, each line the
    points ``0..q**d-1`` on it (a point's base-``q`` digits are its coordinates).
    ``(q**d - 1) / (q - 1)`` classes of ``q**(d-1)`` lines of ``q`` points."""
    f = GaloisField(q)
    points = list(itertools.product(range(q), repeat=d))

    def index(v: Sequence[int]) -> int:
        return sum(x * q**i for i, x in enumerate(v))

    directions = [v for v in points if any(v) and v[next(i for i, x in enumerate(v) if x)] == 1]
    classes = []
    for v in directions:
        seen: set[int] = set()
        lines = []
        for base in points:
            if index(base) in seen:
                continue
            line = tuple(
                sorted(
                    index([f.add_table[b][f.mul_table[t][x]] for b, x in zip(base, v, strict=True)])
                    for t in range(q)
                )
            )
            seen.update(line)
            lines.append(line)
        classes.append(lines)
    return classes


def design_dimension(players: int, table_size: int) -> int | None:
    """``d`` such that AG(d, ``table_size``) seats ``players`` (``table_size**d``,
    ``d >= 2``, ``table_size`` a prime power), or ``None``."""
    if prime_power(table_size) is None:
        return None
    d, n = 0, 1
    while n < players:
        n *= table_size
        d += 1
    return d if n == players and d >= 2 else None


def balanced_seats(
    plan: Sequence[Sequence[Sequence[int]]], players: int, table_size: int
) -> list[list[tuple[int, ...]]] | None:
    """Seat orders for every table of a whole round robin ``plan`` (rounds of tables of
    player indices, all tables of ``table_size``) such that each player sits at each
    position ``floor(R / k)`` or ``ceil(R / k)`` times over the ``R`` rounds: a 0/1
    program (``scipy.optimize.milp``) with one variable per (table, player, position).
    ``None`` if HiGHS finds no such seating or the program would exceed 40,000
    variables; then each round is seated by the seat cost as it comes."""
    rounds, k = len(plan), table_size
    tables = [t for rnd in plan for t in rnd]
    if len(tables) * k * k > 40_000 or any(len(t) != k for t in tables):
        return None
    var = {}
    for ti, t in enumerate(tables):
        for p in t:
            for s in range(k):
                var[(ti, p, s)] = len(var)
    rows, cols, lo, hi = [], [], [], []

    def constraint(keys: list[tuple[int, int, int]], low: float, high: float) -> None:
        row = len(lo)
        for key in keys:
            rows.append(row)
            cols.append(var[key])
        lo.append(low)
        hi.append(high)

    for ti, t in enumerate(tables):
        for s in range(k):
            constraint([(ti, p, s) for p in t], 1, 1)
        for p in t:
            constraint([(ti, p, s) for s in range(k)], 1, 1)
    at = {p: [ti for ti, t in enumerate(tables) if p in t] for p in range(players)}
    for p in range(players):
        for s in range(k):
            constraint([(ti, p, s) for ti in at[p]], rounds // k, -(-rounds // k))
    a = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(lo), len(var)))
    result = milp(
        np.zeros(len(var)),
        integrality=np.ones(len(var)),
        bounds=Bounds(0, 1),
        constraints=LinearConstraint(a.tocsr(), np.array(lo), np.array(hi)),
    )
    if result.status != 0 or result.x is None:
        return None
    seats = [[0] * k for _ in tables]
    for (ti, p, s), v in var.items():
        if result.x[v] > 0.5:
            seats[ti][s] = p
    out, at_table = [], 0
    for rnd in plan:
        out.append([tuple(seats[at_table + j]) for j in range(len(rnd))])
        at_table += len(rnd)
    return out


def round_robin(
    players: Sequence[str],
    table_size: int,
    rounds: int,
    config: PairingConfig | None = None,
    seed: int = 0,
) -> list[RoundPairing]:
    """Every round of a round robin of ``players`` at tables of ``table_size``.

    Where AG(d, ``table_size``) has ``len(players)`` points and at least ``rounds``
    classes, its first ``rounds`` classes (players placed on the points in a seeded
    order): everyone meets everyone at most once, exactly once over all the classes.
    Elsewhere, round by round by :func:`pair_round` (``config``, default: tables of
    ``table_size``) with no spread weight. Seats: :func:`balanced_seats` for a design,
    else by the seat cost round by round.
    Raises :class:`TournamentError` from :func:`pair_round` (``too_few_players``...).
    """
    config = config or PairingConfig(table_size=table_size)
    history = History()
    field = [Entrant(p) for p in players]
    rng = SeededRandom(seed)
    d = design_dimension(len(players), table_size)
    classes = affine_parallel_classes(table_size, d) if d else []
    out: list[RoundPairing] = []
    if classes and rounds <= len(classes):
        order = list(range(len(players)))
        rng.shuffle(order)
        plan = [[[order[pt] for pt in line] for line in classes[r]] for r in range(rounds)]
        seated = balanced_seats(plan, len(players), table_size)
        for r in range(1, rounds + 1):
            model = CostModel(field, history, config.weights)
            if seated is None:
                rnd = finish_round(r, model, plan[r - 1], (), rng)
            else:
                rnd = RoundPairing(
                    r,
                    tuple(
                        Table(k + 1, tuple(players[i] for i in t))
                        for k, t in enumerate(seated[r - 1])
                    ),
                )
            history.add(rnd)
            out.append(rnd)
        return out
    no_spread = PairingConfig(
        table_size=config.table_size,
        min_table_size=config.min_table_size,
        weights=PairingWeights(repeat=config.weights.repeat, spread=0.0, seat=config.weights.seat),
        exact_max_candidates=config.exact_max_candidates,
        search=config.search,
    )
    for r in range(1, rounds + 1):
        rnd = pair_round(r, field, history, no_spread, seed)
        history.add(rnd)
        out.append(rnd)
    return out
