"""Benchmarks of the 1894 game flow and the 18xx.games import.

Run: ``.venv/bin/python -m benchmarks.run bench_e1894_game``

* ``replay_final_phase_ms`` / ``replay_stock_market_ms``: milliseconds to import and replay a
  recorded 18xx.games game (``tests/fixtures/e1894``) with our rules on one core: undo/redo
  filtering, every action checked, every ``run_routes`` route recomputed and compared with the
  stored revenue. Median of 7 runs. Target: <= 250 ms per game (the reference Ruby engine
  takes about 260 ms for a 610-action game with all its checks on).
* ``random_games_per_minute``: complete random 4-player games on one core, ``legal_actions``
  at every step (random play ends: every game reaches the end). Target: >= 20 games/min.
* ``clone_us``: microseconds per ``clone()`` of a mid-game state (the greedy bot clones once
  per legal action).
* ``legal_actions_us``: microseconds per ``legal_actions`` call at every position of the
  recorded game ``1894_game_end_final_phase`` (a fixed workload, whatever the random draws),
  best of 5 passes. Target: <= 1,000 us.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from benchmarks.common import Measurement, random_game, random_games_rate
from services.e1894.engine import GAME
from services.e1894.engine.interchange.importer import import_game

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "e1894"


def _replay(name: str) -> Measurement:
    with open(FIXTURES / f"{name}.json", encoding="utf-8") as fh:
        data = json.load(fh)
    imp = import_game(data)  # warm up; also checks the result
    ok = imp.result() == {str(k): v for k, v in data["result"].items()}
    samples = []
    for _ in range(7):
        t0 = time.perf_counter()
        import_game(data)
        samples.append(time.perf_counter() - t0)
    return Measurement(
        name=f"e1894 replay {name} (routes recomputed)",
        value=statistics.median(samples) * 1000,
        unit="ms",
        target=250,
        higher_is_better=False,
        detail=f"{len(imp.log)} actions; result {'matches' if ok else 'DIFFERS'}",
    )


def replay_final_phase_ms() -> Measurement:
    return _replay("1894_game_end_final_phase")


def replay_stock_market_ms() -> Measurement:
    return _replay("1894_game_end_stock_market")


def random_games_per_minute() -> Measurement:
    games, steps, elapsed = random_games_rate(GAME, 4, min_games=20, min_seconds=10.0)
    return Measurement(
        name="e1894 random 4p games/min (with legal_actions)",
        value=games / elapsed * 60,
        unit="games/min",
        target=20,
        detail=f"{games} games, {steps / games:,.0f} actions/game",
    )


def clone_us() -> Measurement:
    state = random_game(GAME, 4, 7, until_version=400)
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        state.clone()
    return Measurement(
        name="e1894 clone() of a mid-game state",
        value=(time.perf_counter() - t0) / n * 1e6,
        unit="us",
        target=500,
        higher_is_better=False,
    )


def legal_actions_us() -> Measurement:
    with open(FIXTURES / "1894_game_end_final_phase.json", encoding="utf-8") as fh:
        imp = import_game(json.load(fh))
    best = float("inf")
    for _ in range(5):
        state = GAME.new_state(imp.num_players, imp.seed, imp.options)
        spent = 0.0
        for seat, action in imp.log:
            t0 = time.perf_counter()
            state.legal_actions(seat)
            spent += time.perf_counter() - t0
            state.apply(seat, action)
        best = min(best, spent)
    return Measurement(
        name="e1894 legal_actions along a recorded game",
        value=best / len(imp.log) * 1e6,
        unit="us",
        target=1000,
        higher_is_better=False,
        detail=f"{len(imp.log)} positions of 1894_game_end_final_phase, best of 5",
    )


BENCHMARKS = [
    replay_final_phase_ms,
    replay_stock_market_ms,
    random_games_per_minute,
    clone_us,
    legal_actions_us,
]
