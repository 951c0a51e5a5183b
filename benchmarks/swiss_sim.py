"""A simulated Swiss: ours against "sort by points and slice into tables".

Run: ``.venv/bin/python -m benchmarks.swiss_sim [--players 1000] [--rounds 7]
[--table-size 4] [--seed 1]`` prints, per round, the repeat opponent pairs and the seat
imbalance of both pairings (a rich table). ``bench_tournaments`` runs the same code.

Both pairings play the same simulation: every seat's game score is drawn at random
(an integer 0-99 from a generator seeded by the seed, the round and the player, so a
player scores the same whichever table he sits at), ranks follow the scores (equal
scores share a rank) and placement points 6/4/2/0 follow the ranks. The slice (Board Game
Arena's Swiss) sorts by points (ties in a seeded random order), cuts tables from the top
and seats each table in a random order.

* *repeat pairs*: pairs of players at one table in this round who had met before;
* *seat imbalance*: per player, the most minus the least used of the table's positions so
  far; the mean over the field and the number of players above the best possible (0
  after a multiple of the table size rounds, else 1).
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from rich.console import Console
from rich.table import Table

from services.kernel.rng import SeededRandom
from services.tournaments.pairing import PairingConfig, finish_round, pair_round
from services.tournaments.pairing_cost import (
    CostModel,
    Entrant,
    History,
    RoundPairing,
    seat_imbalance,
)
from services.tournaments.pairing_search import sorted_slice
from services.tournaments.scoring import SeatResult, TableResult, seat_points


@dataclasses.dataclass
class RoundFigures:
    round: int
    repeat_pairs: int
    imbalance_mean: float
    imbalance_max: int
    above_best: int
    seconds: float


def slice_round(round_number: int, field: list[Entrant], table_size: int, seed: int):
    """Board Game Arena's way: sort by points, slice, seat in a random order."""
    model = CostModel(field, History(), PairingConfig().weights)
    rng = SeededRandom(seed * 7919 + round_number)
    n = len(field) // table_size
    tables = sorted_slice(model, [table_size] * n, rng)
    byes = [model.players[i] for i in range(len(field)) if all(i not in t for t in tables)]
    rnd = finish_round(round_number, model, tables, byes, rng)
    seated = []
    for t in rnd.tables:  # random seat order, not ours
        order = list(t.seats)
        rng.shuffle(order)
        seated.append(dataclasses.replace(t, seats=tuple(order)))
    return dataclasses.replace(rnd, tables=tuple(seated))


def draw_score(seed: int, round_number: int, player: str) -> int:
    """The random game score (0-99) of ``player`` (named ``p<number>``) in a round."""
    return SeededRandom(seed * 1_000_003 + round_number * 65_537 + int(player[1:])).randbelow(100)


def play_round(points: dict[str, float], rnd: RoundPairing, seed: int) -> None:
    """Add the placement points of random scores at every table of ``rnd`` to ``points``."""
    for t in rnd.tables:
        scores = [draw_score(seed, rnd.round, p) for p in t.seats]
        seats = tuple(
            SeatResult(p, 1 + sum(o > s for o in scores), s)
            for p, s in zip(t.seats, scores, strict=True)
        )
        for sp in seat_points(TableResult(rnd.round, t.number, seats)):
            points[sp.player] += sp.points


def simulate(
    method: str, players: int = 1000, rounds: int = 7, table_size: int = 4, seed: int = 1
) -> list[RoundFigures]:
    """Figures per round of a simulated Swiss paired by ``method`` (``ours``/``slice``)."""
    points = {f"p{i:04d}": 0.0 for i in range(players)}
    history = History()
    config = PairingConfig(table_size=table_size)
    figures = []
    for r in range(1, rounds + 1):
        field = [Entrant(p, x) for p, x in points.items()]
        t0 = time.perf_counter()
        if method == "ours":
            rnd: RoundPairing = pair_round(r, field, history, config, seed)
        else:
            rnd = slice_round(r, field, table_size, seed)
        seconds = time.perf_counter() - t0
        repeats = sum(
            history.meetings(a, b) > 0
            for t in rnd.tables
            for i, a in enumerate(t.seats)
            for b in t.seats[i + 1 :]
        )
        history.add(rnd)
        play_round(points, rnd, seed)
        imbalance = [seat_imbalance(history.counts(p), table_size) for p in points]
        best = 0 if r % table_size == 0 else 1
        figures.append(
            RoundFigures(
                round=r,
                repeat_pairs=repeats,
                imbalance_mean=sum(imbalance) / len(imbalance),
                imbalance_max=max(imbalance),
                above_best=sum(x > best for x in imbalance),
                seconds=seconds,
            )
        )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--table-size", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    runs = {
        m: simulate(m, args.players, args.rounds, args.table_size, args.seed)
        for m in ("ours", "slice")
    }
    table = Table(
        title=f"Swiss, {args.players} players, tables of {args.table_size}, "
        f"{args.rounds} rounds, seed {args.seed}"
    )
    for col in (
        "round",
        "repeat pairs: ours",
        "slice",
        "seat imbalance mean: ours",
        "slice",
        "max: ours",
        "slice",
        "players above best: ours",
        "slice",
        "pairing s: ours",
    ):
        table.add_column(col, justify="right")
    for a, b in zip(runs["ours"], runs["slice"], strict=True):
        table.add_row(
            str(a.round),
            str(a.repeat_pairs),
            str(b.repeat_pairs),
            f"{a.imbalance_mean:.2f}",
            f"{b.imbalance_mean:.2f}",
            str(a.imbalance_max),
            str(b.imbalance_max),
            str(a.above_best),
            str(b.above_best),
            f"{a.seconds:.2f}",
        )
    Console(width=200).print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
