"""Play N complete random 4-player Russian Railroads games (``legal_actions`` at every step,
default options) and print ``N total_steps``: a whole-process workload for comparing two trees
side by side (the engine is imported from ``PYTHONPATH``).

Run, once per tree, alternating, timing each whole process (for example with
``/usr/bin/time -v``; compare user + system CPU seconds)::

    PYTHONPATH=<tree> .venv/bin/python benchmarks/transsib_random_games.py 300
"""

import sys

from services.kernel.rng import SeededRandom
from services.transsib.engine import GAME

n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
steps = 0
for seed in range(1, n + 1):
    state = GAME.new_state(4, seed)
    rng = SeededRandom(seed)
    while not state.is_terminal():
        seat = state.active_seats()[0]
        state.apply(seat, rng.choice(state.legal_actions(seat)))
    steps += state.version
print(n, steps)
