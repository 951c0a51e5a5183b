"""The arena (services/bots/arena.py, ``roundhouse arena``): seat rotation, Wilson
intervals, shared wins, the JSON report, refusals; a small parallel run."""

from __future__ import annotations

import json

import pytest

from services.bots import arena, policies
from services.bots.arena import GameRecord, seating, summarise, wilson
from services.bots.search.mcts import SearchConfig
from services.cli.main import main


def test_wilson_interval_known_values():
    lo, hi = wilson(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    lo, hi = wilson(0, 20)
    assert lo == 0.0 and 0.16 < hi < 0.17
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(40, 100)
    assert lo < 0.4 < hi and hi - lo < 0.2


def test_every_entry_plays_every_seat_equally_often():
    entries = ["a", "b", "c", "d"]
    counts = {(e, s): 0 for e in range(4) for s in range(4)}
    for g in range(8):
        seats = seating(entries, g)
        assert sorted(seats) == [0, 1, 2, 3]
        for s, e in enumerate(seats):
            counts[(e, s)] += 1
    assert set(counts.values()) == {2}


def _record(index, entries, ranks):
    n = len(entries)
    return GameRecord(index, 1, entries, ranks, [0.0] * n, 10, [[0.1]] * n, [[0.05]] * n, [[]] * n)


def test_tied_winners_share_the_win_and_games_count_seats():
    names = ["x", "greedy", "greedy"]
    records = [
        _record(0, [0, 1, 2], [1, 1, 3]),  # x and a greedy tie for first
        _record(1, [2, 0, 1], [2, 1, 3]),  # x (seat 1) wins alone
        _record(2, [1, 2, 0], [1, 2, 3]),  # a greedy wins, x last
    ]
    report = summarise("railbarons", names, records)
    x, g = report["x"], report["greedy"]
    assert (x["games"], g["games"]) == (3, 6)
    assert x["wins"] == 1.5 and g["wins"] == 1.5
    assert x["win_share"] == 0.5 and g["win_share"] == 0.25
    assert x["mean_rank"] == round((1 + 1 + 3) / 3, 4)
    assert x["ci95"][0] < 0.5 < x["ci95"][1]
    assert x["openskill"]["mu"] != g["openskill"]["mu"]


def test_a_small_arena_run_in_parallel_writes_the_report(tmp_path, capsys):
    report_path = tmp_path / "arena.json"
    code = main(
        [
            "arena",
            "--title",
            "railbarons",
            "--policies",
            "greedy,random",
            "--games",
            "4",
            "--workers",
            "2",
            "--seed",
            "5",
            "--quiet",
            "--report",
            str(report_path),
        ]
    )
    assert code == 0
    report = json.loads(report_path.read_text())
    assert report["games"] == 4 and report["players"] == 2 and report["workers"] == 2
    assert report["complete"] is True
    per = report["policies"]
    assert set(per) == {"greedy", "random"}
    for p in per.values():
        assert set(p) >= {"games", "wins", "win_share", "ci95", "mean_rank", "openskill"}
        assert p["games"] == 4
        assert p["ci95"][0] <= p["win_share"] <= p["ci95"][1]
    assert per["greedy"]["wins"] + per["random"]["wins"] == pytest.approx(4)
    assert per["greedy"]["mean_rank"] + per["random"]["mean_rank"] <= 3.0 + 1e-9
    assert "railbarons" in capsys.readouterr().out  # the drawn table


def test_the_arena_measures_a_search_tier(monkeypatch):
    """A search tier (on an iteration budget here, so the test is not timed) in the arena:
    its decisions and iterations are counted."""
    monkeypatch.setitem(
        policies.SEARCH_TIERS,
        "search-easy",
        SearchConfig(time_budget=0, max_iterations=4, worlds=2, rollout_depth=1),
    )
    report = arena.run_arena(
        "transsib", ["search-easy", "greedy"], 2, workers=1, seed=3, progress=False
    )
    easy = report["policies"]["search-easy"]
    assert easy["games"] == 2 and easy["searched_decisions"] > 0
    assert easy["iterations_mean"] == 4.0


def test_partial_reports_arrive_while_the_games_run():
    seen = []
    final = arena.run_arena(
        "railbarons",
        ["greedy", "random"],
        6,
        workers=1,
        seed=2,
        progress=False,
        partial=seen.append,
    )
    assert [(r["games"], r["complete"]) for r in seen] == [(2, False), (4, False)]
    assert (final["games"], final["complete"]) == (6, True)
    assert seen[0]["policies"]["greedy"]["games"] == 2


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["--policies", "greedy,oracle", "--games", "2"], "unknown policies"),
        (["--policies", "greedy,random", "--games", "3"], "multiple"),
        (["--policies", "greedy", "--games", "1"], "players"),
    ],
)
def test_bad_arena_arguments_are_refused_with_a_reason(argv, reason, capsys):
    assert main(["arena", "--title", "railbarons", *argv, "--quiet"]) == 2
    assert reason in capsys.readouterr().err


def test_the_drawn_report_fits_an_80_column_terminal_untruncated():
    """A person reads the arena's table in a terminal: at 80 columns no cell is cut (no
    ellipsis), and on a CPU-clock report the p99 shown is the CPU time the budget counts."""
    from rich.console import Console

    per = {
        "openskill": {"mu": 40.0, "sigma": 5.0, "ordinal": 25.0},
        "decision_seconds": {"p50": 0.4, "p99": 3.461, "max": 7.8},
        "decision_cpu_seconds": {"p50": 0.16, "p99": 0.186, "max": 0.27},
    }
    report = {
        "title": "e1894",
        "games": 100,
        "players": 4,
        "budget_clock": "cpu",
        "load_average": {"start": [17.5, 0, 0], "end": [10.1, 0, 0]},
        "policies": {
            "search-medium": {
                **per,
                "games": 100,
                "wins": 77.5,
                "win_share": 0.775,
                "ci95": [0.6251, 0.8768],
                "mean_rank": 1.325,
                "budget_seconds": 0.2,
                "iterations_mean": 26.8,
            },
            "greedy": {
                **per,
                "games": 300,
                "wins": 22.5,
                "win_share": 0.075,
                "ci95": [0.04, 0.1364],
                "mean_rank": 2.8833,
                "budget_seconds": None,
                "iterations_mean": None,
            },
        },
    }
    console = Console(width=80, record=True)
    arena.draw_report(report, console)
    text = console.export_text()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    assert "search-medium" in text and "62.5%-87.7%" in text
    assert "0.186/0.20" in text and "3.461" not in text  # the CPU p99, not the wall one
    assert "search-medium 27" in text  # iterations per searched decision
