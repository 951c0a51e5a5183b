"""Benchmarks of the railbarons (Chicago Express) engine.

Run: ``.venv/bin/python -m benchmarks.run railbarons``

* ``random_games_per_second``: complete random 4-player games on one core, counting
  ``legal_actions`` at every step (``while not terminal: seat = active; acts =
  legal_actions(seat); apply(seat, random choice)``). Target: >= 200 games/s.
* ``mid_game_state_kib``: memory of one mid-game state (``tracemalloc`` of a ``clone()``;
  the map, options tables and action objects are shared by all states). Target: the
  service must hold 1,000 live games in 300 MB, so <= 300 KiB each (far less here).
* ``clone_us``: microseconds per ``clone()`` of a mid-game state (bots clone per action).
"""

from __future__ import annotations

import time
import tracemalloc

from benchmarks.common import Measurement, random_game, random_games_rate
from services.rules.titles import get_game

GAME = get_game("railbarons")


def _mid_game_state(seed: int = 7):
    return random_game(GAME, 4, seed, until_version=130)


def random_games_per_second() -> Measurement:
    games, steps, elapsed = random_games_rate(GAME, 4, min_games=400, min_seconds=2.0)
    return Measurement(
        name="railbarons random 4p games/s (with legal_actions)",
        value=games / elapsed,
        unit="games/s",
        target=200,
        detail=f"{games} games, {steps / games:.0f} actions/game, "
        f"{elapsed / steps * 1e6:.1f} us/action",
    )


def mid_game_state_kib() -> Measurement:
    state = _mid_game_state()
    tracemalloc.start()
    twin = state.clone()
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del twin
    return Measurement(
        name="railbarons mid-game state size",
        value=size / 1024,
        unit="KiB",
        target=300,
        higher_is_better=False,
        detail=f"tracemalloc of clone() at version {state.version} (shared map/options excluded)",
    )


def clone_us() -> Measurement:
    state = _mid_game_state()
    reps = 20000
    t0 = time.perf_counter()
    for _ in range(reps):
        state.clone()
    elapsed = time.perf_counter() - t0
    return Measurement(
        name="railbarons clone()",
        value=elapsed / reps * 1e6,
        unit="us",
        target=50,
        higher_is_better=False,
        detail="mid-game 4-player state",
    )


BENCHMARKS = [random_games_per_second, mid_game_state_kib, clone_us]
