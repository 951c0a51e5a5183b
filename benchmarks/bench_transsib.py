"""Russian Railroads (transsib) engine benchmarks.

* ``random_games_4p``: complete random 4-player games per second on one core, with
  ``legal_actions`` enumerated at every step (target >= 100/s);
* ``midgame_steps``: ``legal_actions`` + ``apply`` steps per second starting from
  mid-game 4-player states (cloned; the clone is counted) (target >= 5,000/s);
* ``midgame_state_memory``: bytes allocated by one mid-game 4-player state (a clone,
  measured with tracemalloc; static tables are shared and not counted).

Run: ``.venv/bin/python -m benchmarks.run transsib``.
"""

from __future__ import annotations

import time
import tracemalloc

from benchmarks.common import Measurement, random_games_rate
from services.kernel.rng import SeededRandom
from services.transsib.engine import GAME


def random_games_4p() -> Measurement:
    games, steps, dt = random_games_rate(GAME, 4, min_games=300, min_seconds=0.0)
    return Measurement(
        name="transsib random 4p games",
        value=games / dt,
        unit="games/s",
        target=100,
        detail=f"{games} games, {steps / games:.0f} steps/game, {steps / dt:,.0f} steps/s",
    )


def _midgame_states(count: int, steps: int = 120) -> list:
    out = []
    for seed in range(count):
        state = GAME.new_state(4, 500 + seed)
        rng = SeededRandom(seed)
        for _ in range(steps):
            seat = state.active_seats()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        out.append(state)
    return out


def midgame_steps() -> Measurement:
    states = _midgame_states(40)
    per_state = 25
    rng = SeededRandom(7)
    total = 0
    t0 = time.perf_counter()
    for _ in range(10):
        for base in states:
            state = base.clone()
            for _ in range(per_state):
                if state.is_terminal():
                    break
                seat = state.active_seats()[0]
                state.apply(seat, rng.choice(state.legal_actions(seat)))
                total += 1
    dt = time.perf_counter() - t0
    return Measurement(
        name="transsib mid-game legal+apply steps",
        value=total / dt,
        unit="steps/s",
        target=5000,
        detail=f"{total} steps from 40 mid-game 4p states (round {states[0].round}), "
        "clones counted",
    )


def midgame_state_memory() -> Measurement:
    base = _midgame_states(1)[0]
    base.clone()  # warm-up
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    clones = [base.clone() for _ in range(100)]
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    size = sum(stat.size_diff for stat in snap1.compare_to(snap0, "filename")) / len(clones)
    return Measurement(
        name="transsib mid-game state memory",
        value=size / 1024,
        unit="KiB",
        target=64,
        higher_is_better=False,
        detail="one 4-player state after 120 random steps (clone; shared tables not counted)",
    )


BENCHMARKS = [random_games_4p, midgame_steps, midgame_state_memory]
