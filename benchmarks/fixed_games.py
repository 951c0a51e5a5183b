"""Fixed work for an instruction count (``docs/benchmarks.md``, "The layer split, side by
side"): random 4-player games of one title, seeds 1..N, the same work in any commit that has
:func:`benchmarks.common.random_game`; ``N = 0`` is the start-up alone, to subtract.

Usage::

    PYTHONPATH=. valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python benchmarks/fixed_games.py TITLE N
"""

from __future__ import annotations

import sys

from benchmarks.common import random_game
from services.e1894.engine import GAME as E1894
from services.railbarons.engine import GAME as RAILBARONS
from services.transsib.engine import GAME as TRANSSIB

GAMES = {"transsib": TRANSSIB, "railbarons": RAILBARONS, "e1894": E1894}


def main(title: str, n: int) -> int:
    """Play ``n`` random games of ``title``; returns the actions played in all."""
    return sum(random_game(GAMES[title], 4, seed).version for seed in range(1, n + 1))


if __name__ == "__main__":
    print(main(sys.argv[1], int(sys.argv[2])), "actions")
