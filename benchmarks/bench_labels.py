"""What the labels of moves cost (``Game.describe``), side by side with the work they ride on.

Run: ``.venv/bin/python -m benchmarks.run bench_labels``

Positions are recorded along random 4-player games of each title (the ``random`` bot's
workload, :func:`benchmarks.common.random_game`); then, in alternating rounds over the same
positions (CPU time, ``time.process_time``, best round kept):

* ``move_path_ratio``: the engine part of ``SubmitAction`` (``clone()`` + ``apply``) with
  and without the one ``describe`` of the move the rules service now stores with it.
  Target: at most 1.25 (the label adds at most a quarter to the engine's work per move;
  Redis and gRPC, ~2 ms per move in ``bench_service``, come on top of both).
* ``list_moves_ratio``: ``legal_actions`` with and without ``describe_all`` of its entries
  (``ListLegalActions``, called by people's clients, not by the hosted bots). Reported with
  the absolute time per call; target: at most 1 ms per call on average.
"""

from __future__ import annotations

import time

from benchmarks.common import Measurement
from services.common.engine import choose_per_entry
from services.common.playout import playout_actions
from services.common.registry import get_game
from services.common.rng import SeededRandom

GAMES = {"railbarons": 3, "transsib": 2, "e1894": 1}
"""Random 4-player games recorded per title."""

ROUNDS = 5


def _positions(title: str):
    game = get_game(title)
    out = []
    for seed in range(1, GAMES[title] + 1):
        state = game.new_state(4, seed)
        rng = SeededRandom(seed)
        while not state.is_terminal():
            seat = state.active_seats()[0]
            action = choose_per_entry(playout_actions(state, seat), rng)
            out.append((state.clone(), seat, action))
            state.apply(seat, action)
    return game, out


def _move(game, positions, label: bool) -> float:
    t0 = time.process_time()
    for state, seat, action in positions:
        if label:
            game.describe(state, action)
        state.clone().apply(seat, action)
    return time.process_time() - t0


def _list(game, positions, label: bool) -> float:
    t0 = time.process_time()
    for state, seat, _ in positions:
        legal = state.legal_actions(seat)
        if label:
            game.describe_all(state, legal)
    return time.process_time() - t0


def _side_by_side(fn) -> dict[str, tuple[float, float, int]]:
    """title -> (best time without labels, best with, positions)."""
    out = {}
    for title in GAMES:
        game, positions = _positions(title)
        plain, labelled = [], []
        for _ in range(ROUNDS):
            plain.append(fn(game, positions, False))
            labelled.append(fn(game, positions, True))
        out[title] = (min(plain), min(labelled), len(positions))
    return out


def _detail(results) -> str:
    return "; ".join(
        f"{t} {a / n * 1e6:.1f} -> {b / n * 1e6:.1f} us ({b / a:.2f}x, {n} positions)"
        for t, (a, b, n) in results.items()
    )


def move_path_ratio() -> Measurement:
    results = _side_by_side(_move)
    worst = max(b / a for a, b, _ in results.values())
    return Measurement(
        name="labels: clone+apply with/without describe (worst title)",
        value=worst,
        unit="x",
        target=1.25,
        higher_is_better=False,
        detail=_detail(results),
    )


def list_moves_ratio() -> Measurement:
    results = _side_by_side(_list)
    worst_us = max(b / n * 1e6 for _, b, n in results.values())
    return Measurement(
        name="labels: legal_actions + describe_all per call (worst title)",
        value=worst_us,
        unit="us",
        target=1000,
        higher_is_better=False,
        detail=_detail(results),
    )


BENCHMARKS = [move_path_ratio, list_moves_ratio]
