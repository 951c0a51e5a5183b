"""Shared pieces of the benchmarks."""

from __future__ import annotations

import dataclasses
import time

from services.kernel.engine import Game, State
from services.kernel.playout import random_choice
from services.kernel.rng import SeededRandom


@dataclasses.dataclass
class Measurement:
    """One benchmark figure against its target.

    ``higher_is_better`` says which side of ``target`` passes. ``skipped``: why it could
    not be measured here (no figure is given, and it neither passes nor fails).
    """

    name: str
    value: float
    unit: str
    target: float
    higher_is_better: bool = True
    detail: str = ""
    skipped: str = ""

    @property
    def ok(self) -> bool:
        if self.skipped:
            return True
        return self.value >= self.target if self.higher_is_better else self.value <= self.target

    @property
    def value_text(self) -> str:
        if self.skipped:
            return f"skipped: {self.skipped}"
        return f"{self.value:,.1f} {self.unit}"

    @property
    def target_text(self) -> str:
        t = self.target
        text = f"{t:,.0f}" if t == int(t) else f"{t:,.2f}"
        return f"{'>=' if self.higher_is_better else '<='} {text} {self.unit}"


def random_game(game: Game, players: int, seed: int, until_version: int | None = None) -> State:
    """A random game of ``game`` (at every step an entry of the play-out actions uniformly,
    see :func:`services.kernel.playout.playout_actions`, and a range's value uniform within
    it: :func:`~services.kernel.engine.choose_per_entry`; the first active seat moving),
    played to the end or to ``until_version``.

    Per entry, not uniform over concrete actions: a range of hundreds of 1894 train prices
    would otherwise make games of tens of thousands of moves; this keeps the workload of the
    figures in ``docs/benchmarks.md`` what it was when every entry was one action."""
    state = game.new_state(players, seed)
    rng = SeededRandom(seed)
    while not state.is_terminal() and (until_version is None or state.version < until_version):
        seat = state.active_seats()[0]
        state.apply(seat, random_choice(state, seat, rng))
    return state


def random_games_rate(
    game: Game, players: int, min_games: int, min_seconds: float
) -> tuple[int, int, float]:
    """Play random games (seeds 1, 2, ...) on this core until at least
    ``min_games`` games and ``min_seconds`` seconds; returns (games, actions,
    seconds). One warm-up game (seed 0) is not counted."""
    random_game(game, players, 0)
    games = actions = 0
    t0 = time.perf_counter()
    while games < min_games or time.perf_counter() - t0 < min_seconds:
        actions += random_game(game, players, games + 1).version
        games += 1
    return games, actions, time.perf_counter() - t0
