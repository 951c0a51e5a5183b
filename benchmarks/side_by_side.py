"""Engine speed of this checkout and another side by side in one run (issue 16: every engine
stays within 10% of before): random 4-player games of each title, legal actions at every step
(as :func:`benchmarks.common.random_game`, with options), CPU time of the measuring process,
rounds alternating the two trees, best round of each.

Run (``REF`` is a tree of the other revision, e.g. ``git archive main services benchmarks |
tar -x -C /tmp/ref``)::

    nice -n 10 .venv/bin/python -m benchmarks.side_by_side /tmp/ref
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROUNDS = 5
GAMES = (
    ("railbarons", "railbarons", 400, {}),
    ("transsib", "transsib", 120, {}),
    ("transsib-fixed", "transsib", 120, {"gained_actions_order": "fixed"}),
    ("e1894", "e1894", 12, {}),
)
"""Row, title, random 4-player games per round (seeds 1..n, the same on both trees; about
half a second to two seconds of play each, so a round is not one short noisy game) and options.
``transsib-fixed`` plays Russian Railroads with the order of gained actions of before the
``any`` default (an option a tree that predates it does not know plays without it: the same
rule), so both trees play the same games."""

_CODE = f"""
import time
from services.kernel.playout import random_choice
from services.rules.titles import get_game
from services.kernel.rng import SeededRandom
for row, title, n, options in {GAMES!r}:
    game = get_game(title)
    known = {{k: v for k, v in options.items() if k in game.options_model.model_fields}}
    t0 = time.process_time()
    steps = 0
    for seed in range(1, n + 1):
        state = game.new_state(4, seed, known)
        rng = SeededRandom(seed)
        while not state.is_terminal():
            seat = state.active_seats()[0]
            state.apply(seat, random_choice(state, seat, rng))
        steps += state.version
    print(row, steps / (time.process_time() - t0))
"""


def _round(tree: Path, gen: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{gen}"}
    out = subprocess.run(
        [sys.executable, "-c", _CODE], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    return {t: float(v) for t, v in (line.split() for line in out.stdout.splitlines())}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__)
        return 2
    here = Path(__file__).resolve().parents[1]
    trees = {"before": Path(args[0]).resolve(), "after": here}
    best: dict[str, dict[str, float]] = {"before": {}, "after": {}}
    for r in range(ROUNDS):
        for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
            for title, rate in _round(trees[name], here / "gen" / "python").items():
                best[name][title] = max(best[name].get(title, 0.0), rate)
    for title, *_ in GAMES:
        before, after = best["before"][title], best["after"][title]
        print(
            f"{title}: before {before:,.0f} actions/s, after {after:,.0f} actions/s "
            f"(best of {ROUNDS}, CPU time), ratio {after / before:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
