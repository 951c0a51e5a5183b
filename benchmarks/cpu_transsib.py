"""CPU-time figures of the transsib engine benchmarks, for side-by-side comparisons of two trees.

Runs the loops of :mod:`benchmarks.bench_transsib` (complete random 4-player games with
``legal_actions`` at every step; ``legal_actions`` + ``apply`` from 40 mid-game states, clones
counted), timed with ``time.process_time`` (best of 3 passes), so that two trees measured one
after the other on a shared machine are compared on the CPU they used rather than on the wall
clock. Prints one JSON line. Options (JSON) may be given as the first argument.

Run, once per tree, alternating (the engine is imported from ``PYTHONPATH``)::

    PYTHONPATH=<tree> nice -n 10 .venv/bin/python benchmarks/cpu_transsib.py '{}'
"""

import json
import sys
import time

from services.kernel.rng import SeededRandom
from services.transsib.engine import GAME

opts = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}


def game(seed):
    s = GAME.new_state(4, seed, opts)
    r = SeededRandom(seed)
    while not s.is_terminal():
        seat = s.active_seats()[0]
        s.apply(seat, r.choice(s.legal_actions(seat)))
    return s


def midgame_states(count, steps=120):
    out = []
    for seed in range(count):
        state = GAME.new_state(4, 500 + seed, opts)
        rng = SeededRandom(seed)
        for _ in range(steps):
            seat = state.active_seats()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        out.append(state)
    return out


game(0)
best_g = 0
steps = 0
for _ in range(3):
    t0 = time.process_time()
    steps = 0
    for seed in range(1, 31):
        steps += game(seed).version
    best_g = max(best_g, 30 / (time.process_time() - t0))
states = midgame_states(40)
best_m = 0
for _ in range(3):
    rng = SeededRandom(7)
    total = 0
    t0 = time.process_time()
    for _ in range(2):
        for base in states:
            state = base.clone()
            for _ in range(25):
                if state.is_terminal():
                    break
                seat = state.active_seats()[0]
                state.apply(seat, rng.choice(state.legal_actions(seat)))
                total += 1
    best_m = max(best_m, total / (time.process_time() - t0))
print(
    json.dumps(
        {
            "games_per_s": round(best_g, 1),
            "steps_per_game": round(steps / 30, 1),
            "midgame_steps_per_s": round(best_m),
        }
    )
)
