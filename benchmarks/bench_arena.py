"""The search tiers' strength and time budget in the arena (issue 14; docs/bots.md).

* ``search-medium`` against three ``greedy`` bots, 4-player games, every title: its win share
  (bar 40%; a fair share is 25%), ``ROUNDHOUSE_BENCH_ARENA_GAMES`` games (default 100).
* ``search-hard`` against ``search-medium`` head to head (2 players; 1894 takes 3, the third
  seat ``greedy``): hard's win share minus medium's, in points (bar: above 0),
  ``ROUNDHOUSE_BENCH_H2H_GAMES`` games (default 20).
* The budget: the largest p99 decision time over budget of the search tiers in those runs
  (bar 1.1).

``ROUNDHOUSE_BENCH_ARENA_CLOCK`` (``wall``, the default, or ``cpu``) is the clock the tiers
budget (see :mod:`services.bots.arena`); ``ROUNDHOUSE_BENCH_ARENA_WORKERS`` the processes
(default 2). Each report is written to ``ROUNDHOUSE_BENCH_ARENA_DIR`` when set.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchmarks.common import Measurement
from services.bots.arena import run_arena

TITLES = ("railbarons", "transsib", "e1894")
_p99: list[float] = []


def _run(name: str, title: str, policies: list[str], games: int) -> dict:
    clock = os.environ.get("ROUNDHOUSE_BENCH_ARENA_CLOCK", "wall")
    workers = int(os.environ.get("ROUNDHOUSE_BENCH_ARENA_WORKERS", "2"))
    report = run_arena(title, policies, games, workers, seed=1000, clock=clock)
    out = os.environ.get("ROUNDHOUSE_BENCH_ARENA_DIR")
    if out:
        path = Path(out) / f"{title}-{name}-{clock}.json"
        path.write_text(json.dumps(report, indent=2) + "\n")
    for p in report["policies"].values():
        if p["budget_seconds"]:
            key = "decision_seconds" if clock == "wall" else "decision_cpu_seconds"
            _p99.append(p[key]["p99"] / p["budget_seconds"])
    return report


def _medium_vs_greedy(title: str) -> Measurement:
    games = int(os.environ.get("ROUNDHOUSE_BENCH_ARENA_GAMES", "100"))
    games -= games % 4
    report = _run("medium-vs-greedy", title, ["search-medium", "greedy", "greedy", "greedy"], games)
    p = report["policies"]["search-medium"]
    lo, hi = p["ci95"]
    return Measurement(
        f"{title}: search-medium win share vs 3 greedy",
        100 * p["win_share"],
        "%",
        40,
        detail=f"{p['games']} games, 95% CI {100 * lo:.0f}-{100 * hi:.0f}%, mean rank "
        f"{p['mean_rank']:.2f}, {p['iterations_mean']} iterations/decision, load "
        f"{report['load_average']['start'][0]:.1f}",
    )


def _hard_vs_medium(title: str) -> Measurement:
    games = int(os.environ.get("ROUNDHOUSE_BENCH_H2H_GAMES", "20"))
    seats = ["search-hard", "search-medium"] + (["greedy"] if title == "e1894" else [])
    games -= games % len(seats)
    report = _run("hard-vs-medium", title, seats, games)
    hard, medium = report["policies"]["search-hard"], report["policies"]["search-medium"]
    return Measurement(
        f"{title}: search-hard minus search-medium win share",
        100 * (hard["win_share"] - medium["win_share"]),
        "points",
        0.1,
        detail=f"{games} games; hard {100 * hard['win_share']:.0f}% "
        f"(CI {100 * hard['ci95'][0]:.0f}-{100 * hard['ci95'][1]:.0f}), medium "
        f"{100 * medium['win_share']:.0f}%",
    )


def medium_vs_greedy_railbarons() -> Measurement:
    return _medium_vs_greedy("railbarons")


def medium_vs_greedy_transsib() -> Measurement:
    return _medium_vs_greedy("transsib")


def medium_vs_greedy_e1894() -> Measurement:
    return _medium_vs_greedy("e1894")


def hard_vs_medium_railbarons() -> Measurement:
    return _hard_vs_medium("railbarons")


def hard_vs_medium_transsib() -> Measurement:
    return _hard_vs_medium("transsib")


def hard_vs_medium_e1894() -> Measurement:
    return _hard_vs_medium("e1894")


def decision_time_p99_over_budget() -> Measurement:
    """The worst p99/budget of the runs above (run them in the same invocation)."""
    return Measurement(
        "search decision time p99 / budget (worst tier and title)",
        max(_p99, default=0.0),
        "x",
        1.1,
        higher_is_better=False,
        detail=f"{len(_p99)} tier runs",
    )


BENCHMARKS = [
    medium_vs_greedy_railbarons,
    medium_vs_greedy_transsib,
    medium_vs_greedy_e1894,
    hard_vs_medium_railbarons,
    hard_vs_medium_transsib,
    hard_vs_medium_e1894,
    decision_time_p99_over_budget,
]
