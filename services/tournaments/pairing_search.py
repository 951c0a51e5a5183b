"""Local search for fields too large for the exact solve, and the plain Swiss slice.

:func:`sorted_slice` is "sort by points and slice into tables" (what Board Game Arena's
Swiss does): the start of the search, and the baseline of the benchmarks.

:func:`local_search` (``docs/tournaments.md``, "Large fields") starts from the slice and
makes improving swaps of two players between two tables, with the table cost of
:mod:`.pairing_cost`:

1. *Sweep*: for each table ``i`` (top first) and each of the next ``window`` tables
   ``j``, make the best swap between ``i`` and ``j`` if it lowers the total cost.
2. *Repair*: each table that still seats a repeat pair tries the best swap with every
   table up to ``repair_window`` tables above or below it, until it has none; each table
   whose best seat order still leaves a player off his least-used positions does the
   same within ``seat_window`` tables, while the search has weighed fewer than
   ``seat_repair_budget`` tables.
3. Repeat 1-2 until a pass changes nothing or ``max_passes`` passes have run.

Every choice is by index order or the seeded tiebreak of the slice, never by the clock,
so the same field, history and seed give the same tables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from services.kernel.rng import SeededRandom
from services.tournaments.pairing_cost import CostModel

_EPS = 1e-9


@dataclasses.dataclass(frozen=True)
class SearchLimits:
    """Bounds of :func:`local_search`: tables compared in a sweep (``window``, each
    table with the next ``window``), in a repeat repair (``repair_window`` each side),
    in a seat repair (``seat_window`` each side), and the most passes (``max_passes``);
    seat repairs stop once the search has weighed ``seat_repair_budget`` tables (a count,
    not a time, so the result stays deterministic; repeat repairs always run).
    Work grows linearly with each."""

    window: int = 2
    repair_window: int = 40
    seat_window: int = 5
    max_passes: int = 10
    seat_repair_budget: int = 120_000


def slice_order(model: CostModel, rng: SeededRandom) -> list[int]:
    """Player indices by points, highest first; equal points in a seeded random order."""
    keys = [rng.next64() for _ in model.players]
    return sorted(range(len(model.players)), key=lambda i: (-model.points[i], keys[i]))


def sorted_slice(model: CostModel, sizes: Sequence[int], rng: SeededRandom) -> list[list[int]]:
    """Tables of ``sizes`` (in that order) cut from :func:`slice_order`."""
    order = slice_order(model, rng)
    tables, at = [], 0
    for size in sizes:
        tables.append(order[at : at + size])
        at += size
    return tables


def local_search(
    model: CostModel, sizes: Sequence[int], rng: SeededRandom, limits: SearchLimits
) -> list[list[int]]:
    """Tables of ``sizes`` (lists of player indices) of low total cost; see the module."""
    tables = sorted_slice(model, sizes, rng)
    cost = [model.table_cost(t) for t in tables]
    tc = model.table_cost
    n = len(tables)
    weighed = [0]

    def try_swap(i: int, j: int) -> bool:
        base = cost[i] + cost[j]
        if base <= _EPS:
            return False
        a, b = tables[i], tables[j]
        weighed[0] += 2 * len(a) * len(b)
        best, arg = -_EPS, None
        for x in range(len(a)):
            for y in range(len(b)):
                na = a[:x] + [b[y]] + a[x + 1 :]
                nb = b[:y] + [a[x]] + b[y + 1 :]
                ca, cb = tc(na), tc(nb)
                d = ca + cb - base
                if d < best:
                    best, arg = d, (na, nb, ca, cb)
        if arg is None:
            return False
        tables[i], tables[j], cost[i], cost[j] = arg
        return True

    for _ in range(limits.max_passes):
        changed = False
        for i in range(n):
            for j in range(i + 1, min(n, i + 1 + limits.window)):
                changed |= try_swap(i, j)
        for i in range(n):
            if model.repeats(tables[i]) > 0:
                reach, bad = limits.repair_window, model.repeats
            elif weighed[0] < limits.seat_repair_budget and model.seat_cost(tables[i]) > 0:
                reach, bad = limits.seat_window, model.seat_cost
            else:
                continue
            for j in range(max(0, i - reach), min(n, i + reach + 1)):
                if j != i and bad(tables[i]) > 0:
                    changed |= try_swap(i, j)
        if not changed:
            break
    return tables
