"""Conformance of routes with the two recorded games (``tests/fixtures/e1894``).

For every ``run_routes`` action the board is rebuilt from the reference traces (tiles from
``tiles_changed`` accumulated since setup, tokens from ``corps.*.tokens`` / ``city_tokens``,
ferry markers, trains and phase of the line before the action). Then:

(a) every route stored in the fixture is legal under our rules and our value of it equals its
    stored revenue exactly (and the trace's recomputed stops, bonuses and node order);
(b) our optimum equals the trace's ``best_total`` (the reference engine's best combination).

Spec: ``e1894.md`` "Replay semantics" (a conforming engine computes each route's revenue itself
and checks it equals the stored one) and "London, ferries and bonuses"; trace fields:
``traces/README.md`` "Extra fields on run_routes lines".
"""

from __future__ import annotations

import pytest

from services.e1894.engine.routes import best_routes, value_routes
from services.e1894.engine.tests import tracekit as tk

CASES = [
    pytest.param(game, i, id=f"{game.removeprefix('1894_game_end_')}-{line['id']}-{line['entity']}")
    for game in tk.GAMES
    for i, (line, _prev, _board) in enumerate(tk.run_routes_cases(game))
]


def _case(game: str, i: int):
    line, prev, board = tk.run_routes_cases(game)[i]
    return line, prev, board.clone()


def test_both_games_have_all_their_run_routes_lines() -> None:
    """The traces README lists 64 + 66 run_routes lines; all are parametrized here."""
    counts = {g: len(tk.run_routes_cases(g)) for g in tk.GAMES}
    assert counts == {"1894_game_end_final_phase": 64, "1894_game_end_stock_market": 66}


@pytest.mark.parametrize(("game", "i"), CASES)
def test_stored_routes_are_legal_and_valued_exactly(game: str, i: int) -> None:
    """(a) Each stored route validates and is worth exactly its stored revenue; stops, bonuses
    and node order equal the reference engine's recomputation (spec "Replay semantics")."""
    line, prev, board = _case(game, i)
    action = tk.fixture_actions(game)[line["id"]]
    corp = line["entity"]
    valued = value_routes(board, corp, prev["phase"], action["routes"])
    assert [r.train for r in valued.routes] == [r["train"] for r in action["routes"]]
    assert [r.revenue for r in valued.routes] == [r["revenue"] for r in action["routes"]]
    assert valued.total == sum(r["revenue"] for r in action["routes"])
    for ours, ref in zip(valued.routes, line["routes"], strict=True):
        assert ours.revenue == ref["revenue"]
        assert list(ours.nodes) in (ref["nodes"], ref["nodes"][::-1])
        assert list(ours.hexes) in (ref["hexes"], ref["hexes"][::-1])
        assert sorted(ours.stops) == sorted(tuple(s) for s in ref["stops"])
        assert dict(ours.bonus) == ref.get("bonus", {})


@pytest.mark.parametrize(("game", "i"), CASES)
def test_optimum_equals_reference_best_total(game: str, i: int) -> None:
    """(b) best_routes finds the reference's best total; its routes validate again through
    value_routes with the same total (spec "London, ferries and bonuses", "Trains and phases")."""
    line, prev, board = _case(game, i)
    corp = line["entity"]
    trains = [f"{name}-{k}" for k, name in enumerate(tk.corp_trains(prev, corp))]
    result = best_routes(board, corp, trains, prev["phase"])
    assert result.total == line["best_total"]
    again = value_routes(board, corp, prev["phase"], [r.to_json() for r in result.routes])
    assert again.total == result.total
    assert [r.revenue for r in again.routes] == [r.revenue for r in result.routes]
