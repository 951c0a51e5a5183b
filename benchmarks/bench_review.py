"""Game review cost (issue 31): the worker CPU a review of one greedy-played game takes at
the default budget (:data:`services.bots.review.DEFAULT_BUDGETS`, CPU clock).

Targets: a 4-player Chicago Express game <= 60 s, a 4-player 1894 game <= 600 s. The game is
played by 4 ``greedy`` bots from a fixed seed (its length is in the detail). Run one with
``python -m benchmarks.run bench_review.railbarons`` (or ``.e1894``); figures in
``docs/benchmarks.md``.
"""

from __future__ import annotations

import os
import time

from benchmarks.common import Measurement
from services.bots.policies import make_policy
from services.bots.review import ReviewConfig, review_game
from services.rules.titles import get_game

SEED = 7


def greedy_game(title: str, players: int, seed: int = SEED) -> list[tuple[int, dict]]:
    """The moves of a game of ``players`` greedy bots from ``seed``."""
    game = get_game(title)
    state = game.new_state(players, seed, None)
    policies = [make_policy("greedy", title, 100 + s) for s in range(players)]
    moves = []
    while not state.is_terminal():
        seat = state.active_seats()[0]
        action = policies[seat](state, seat)
        moves.append((seat, action.to_json()))
        state.apply(seat, action)
    return moves


def _review_cpu(title: str, target: float) -> Measurement:
    moves = greedy_game(title, 4)
    load = os.getloadavg()[0]
    start = time.process_time()
    wall = time.perf_counter()
    entries = review_game(get_game(title), 4, SEED, None, moves, ReviewConfig())
    cpu = time.process_time() - start
    wall = time.perf_counter() - wall
    searched = [e for e in entries if e.iterations]
    iterations = sum(e.iterations for e in searched) / max(1, len(searched))
    return Measurement(
        name=f"review of a 4-player {title} game, worker CPU",
        value=cpu,
        unit="s",
        target=target,
        higher_is_better=False,
        detail=f"{len(moves)} moves, {wall:.0f} s wall, {iterations:.0f} iterations a move, "
        f"load {load:.1f} -> {os.getloadavg()[0]:.1f}",
    )


def railbarons() -> Measurement:
    return _review_cpu("railbarons", 60.0)


def e1894() -> Measurement:
    return _review_cpu("e1894", 600.0)


BENCHMARKS = [railbarons, e1894]
