"""Reliability of the review's win chances (issue 31, docs/bots.md "Game review"): review
``games`` games of 4 greedy bots per title (seeds 1..games) at ``iterations`` search iterations a
decision and, over every move, bin the mover's ``win_chance_after`` in tenths against whether
that seat won the game (a win shared by k tied winners counts 1/k).

Usage: ``python -m benchmarks.review_calibration TITLE GAMES ITERATIONS``; prints a Markdown
table (bin, positions, mean predicted, observed share).
"""

from __future__ import annotations

import sys

from benchmarks.bench_review import greedy_game
from services.bots.review import ReviewConfig, review_game
from services.rules.titles import get_game


def calibrate(title: str, games: int, iterations: int) -> list[tuple[int, int, float, float]]:
    """Per bin ``b`` (predicted in ``[b/10, (b+1)/10)``): ``(b, positions, mean predicted,
    observed win share)``, bins with no position left out."""
    game = get_game(title)
    bins: dict[int, list[tuple[float, float]]] = {}
    for seed in range(1, games + 1):
        moves = greedy_game(title, 4, seed)
        state = game.replay(4, seed, None, moves)
        ranks = state.result().ranks
        winners = sum(1 for r in ranks if r == 1)
        entries = review_game(
            game, 4, seed, None, moves, ReviewConfig(max_iterations=iterations, seed=seed)
        )
        for e in entries:
            p = e.win_chance_after[e.seat]
            won = 1.0 / winners if ranks[e.seat] == 1 else 0.0
            bins.setdefault(min(9, int(p * 10)), []).append((p, won))
    return [
        (b, len(v), sum(p for p, _ in v) / len(v), sum(w for _, w in v) / len(v))
        for b, v in sorted(bins.items())
    ]


def main() -> None:
    title, games, iterations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print(f"{title}: {games} games of 4 greedy bots, {iterations} iterations a decision")  # noqa: T201
    print("| predicted | positions | mean predicted | observed win share |")  # noqa: T201
    print("|---|---|---|---|")  # noqa: T201
    for b, n, pred, obs in calibrate(title, games, iterations):
        print(f"| {b / 10:.1f}-{(b + 1) / 10:.1f} | {n} | {pred:.2f} | {obs:.2f} |")  # noqa: T201


if __name__ == "__main__":
    main()
