"""Calibration of the review's win chances (issue 31, "Honest numbers"; docs/bots.md, "Game
review"): per title, play ``N`` games of 4 greedy bots (seeds 1..N), review every move with
raw search rewards (``ReviewConfig(calibrate=False)``) at ``--iterations`` a decision, fit the
monotone calibration map (:func:`services.bots.calibration.fit`) on the odd seeds and report a
reliability table on the even ones: bins of 10 points of the calibrated mover's
``win_chance_after`` against whether that seat won the game (a win shared by k tied winners
counts 1/k), and beside it the same for the raw reward.

The issue's bar: every bin within 10 points of the observed share over at least 200 games. The
positions of one game are strongly correlated (a seat that wins is seen winning in all of its
moves), so a small N says little.

Usage::

    nice -n 19 .venv/bin/python -m benchmarks.bench_calibration [--games N] [--iterations K]
        [--titles railbarons,e1894,transsib] [--write]

``--write`` stores each title's map fitted on the odd seeds as
``services/bots/calibration_maps/<title>.json`` (what reviews apply). In ``make bench``
(``benchmarks.run``) it runs at its defaults (200 games per title): one figure per title, the
largest gap between a bin's mean calibrated prediction and its observed share (bins of at least
:data:`MIN_BIN` positions).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence

from rich.console import Console
from rich.progress import Progress

from benchmarks.bench_review import greedy_game
from benchmarks.common import Measurement
from services.bots.calibration import Calibration, fit, write
from services.bots.review import ReviewConfig, review_game
from services.rules.titles import get_game

TITLES = ("railbarons", "e1894", "transsib")
DEFAULT_GAMES = 200
DEFAULT_ITERATIONS = 16
MIN_BIN = 20
"""Bins with fewer positions are shown but not counted in the figure."""

Pair = tuple[float, float]


def game_pairs(title: str, seed: int, iterations: int) -> list[Pair]:
    """``(raw estimate, won)`` of every move's mover in the greedy game from ``seed``."""
    game = get_game(title)
    moves = greedy_game(title, 4, seed)
    ranks = game.replay(4, seed, None, moves).result().ranks
    winners = sum(1 for r in ranks if r == 1)
    entries = review_game(
        game,
        4,
        seed,
        None,
        moves,
        ReviewConfig(max_iterations=iterations, seed=seed, calibrate=False),
    )
    return [
        (e.win_chance_after[e.seat], 1.0 / winners if ranks[e.seat] == 1 else 0.0) for e in entries
    ]


def reliability(pairs: Iterable[Pair]) -> list[tuple[int, int, float, float]]:
    """Per bin ``b`` (predicted in ``[b/10, (b+1)/10)``, 1.0 in the last): ``(b, positions,
    mean predicted, observed share)``; empty bins left out."""
    bins: dict[int, list[Pair]] = {}
    for p, won in pairs:
        bins.setdefault(min(9, int(p * 10)), []).append((p, won))
    return [
        (b, len(v), sum(p for p, _ in v) / len(v), sum(w for _, w in v) / len(v))
        for b, v in sorted(bins.items())
    ]


def worst_gap(table: Sequence[tuple[int, int, float, float]]) -> float:
    """The largest ``|mean predicted - observed|`` over bins of at least :data:`MIN_BIN`."""
    return max((abs(pred - obs) for _, n, pred, obs in table if n >= MIN_BIN), default=0.0)


def calibrate_title(
    title: str, games: int, iterations: int, step: Callable[[], None] = lambda: None
) -> tuple[Calibration, list[Pair], list[Pair]]:
    """(the map fitted on the odd seeds, the even seeds' calibrated pairs, their raw pairs)."""
    train: list[Pair] = []
    held: list[Pair] = []
    for seed in range(1, games + 1):
        (train if seed % 2 else held).extend(game_pairs(title, seed, iterations))
        step()
    calibration = fit(
        train,
        note=f"{(games + 1) // 2} games of 4 greedy bots (odd seeds 1..{games}), "
        f"{iterations} search iterations a decision, benchmarks/bench_calibration.py",
    )
    return calibration, [(calibration.apply(p), w) for p, w in held], held


def markdown(title: str, calibrated: list[Pair], raw: list[Pair]) -> str:
    rows = {b: (n, pred, obs) for b, n, pred, obs in reliability(calibrated)}
    raw_rows = {b: (n, pred, obs) for b, n, pred, obs in reliability(raw)}
    out = [
        f"{title}: held-out positions {len(calibrated)}",
        "| bin | calibrated: positions | predicted | observed | raw: positions | predicted "
        "| observed |",
        "|---|---|---|---|---|---|---|",
    ]
    for b in range(10):
        c = rows.get(b)
        r = raw_rows.get(b)
        cells = [f"{b / 10:.1f}-{(b + 1) / 10:.1f}"]
        cells += [str(c[0]), f"{c[1]:.2f}", f"{c[2]:.2f}"] if c else ["0", "", ""]
        cells += [str(r[0]), f"{r[1]:.2f}", f"{r[2]:.2f}"] if r else ["0", "", ""]
        out.append("| " + " | ".join(cells) + " |")
    out.append(
        f"largest gap (bins of >= {MIN_BIN}): calibrated "
        f"{worst_gap(reliability(calibrated)):.2f}, raw {worst_gap(reliability(raw)):.2f}"
    )
    return "\n".join(out)


def run(
    titles: Sequence[str], games: int, iterations: int, store: bool, console: Console
) -> dict[str, tuple[Calibration, list[Pair], list[Pair]]]:
    """Every title's fit and held-out pairs, with a progress bar per title."""
    out = {}
    with Progress(console=console, transient=False) as progress:
        for title in titles:
            task = progress.add_task(f"{title}: games", total=games)
            out[title] = calibrate_title(
                title, games, iterations, lambda task=task: progress.advance(task)
            )
            if store:
                path = write(title, out[title][0])
                progress.console.print(f"{title}: map written to {path}")
    return out


def _measure(title: str) -> Measurement:
    console = Console(stderr=True)
    calibration, calibrated, raw = run([title], DEFAULT_GAMES, DEFAULT_ITERATIONS, False, console)[
        title
    ]
    return Measurement(
        name=f"review calibration, {title}: largest bin gap, held-out half of {DEFAULT_GAMES}",
        value=100 * worst_gap(reliability(calibrated)),
        unit="points",
        target=10.0,
        higher_is_better=False,
        detail=f"{len(calibrated)} positions, raw reward's gap "
        f"{100 * worst_gap(reliability(raw)):.0f} points, {len(calibration.xs)} knots",
    )


def railbarons() -> Measurement:
    return _measure("railbarons")


def e1894() -> Measurement:
    return _measure("e1894")


def transsib() -> Measurement:
    return _measure("transsib")


BENCHMARKS = [railbarons, e1894, transsib]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=DEFAULT_GAMES, help="games per title (N)")
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--titles", default=",".join(TITLES))
    parser.add_argument("--write", action="store_true", help="store the fitted maps")
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error("--games must be at least 2 (one to fit, one to check)")
    console = Console(stderr=True)
    results = run(args.titles.split(","), args.games, args.iterations, args.write, console)
    print(  # noqa: T201
        f"N = {args.games} games per title, {args.iterations} iterations a decision; "
        "fitted on the odd seeds, checked on the even ones"
    )
    for title, (_, calibrated, raw) in results.items():
        print(markdown(title, calibrated, raw) + "\n")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
