"""Placement points, normalised scores, tiebreaks in order, standings per round."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.tournaments.errors import TournamentError
from services.tournaments.scoring import (
    DEFAULT_PLACEMENT_POINTS,
    ScoringRules,
    SeatResult,
    TableResult,
    seat_points,
    standings,
    standings_by_round,
)

RULES = ScoringRules()


def _table(rnd: int, table: int, *seats: tuple[str, int, float | None]) -> TableResult:
    return TableResult(rnd, table, tuple(SeatResult(p, r, s) for p, r, s in seats))


def test_default_placement_points():
    assert DEFAULT_PLACEMENT_POINTS[3] == (6.0, 3.0, 0.0)
    assert DEFAULT_PLACEMENT_POINTS[4] == (6.0, 4.0, 2.0, 0.0)
    assert DEFAULT_PLACEMENT_POINTS[5] == (6.0, 4.5, 3.0, 1.5, 0.0)
    assert DEFAULT_PLACEMENT_POINTS[6] == pytest.approx((6.0, 4.8, 3.6, 2.4, 1.2, 0.0))


def test_tied_seats_share_the_average_of_their_places():
    pts = seat_points(_table(1, 1, ("a", 1, None), ("b", 2, None), ("c", 2, None), ("d", 4, None)))
    assert [p.points for p in pts] == [6.0, 3.0, 3.0, 0.0]
    three_way = seat_points(_table(1, 1, ("a", 1, None), ("b", 1, None), ("c", 1, None)))
    assert [p.points for p in three_way] == [3.0, 3.0, 3.0]
    assert all(p.win for p in three_way)  # a shared first is a win for each


@given(st.lists(st.integers(1, 6), min_size=3, max_size=6))
def test_placement_points_always_total_the_tables_points(ranks):
    n = len(ranks)
    ranks = [min(r, n) for r in ranks]
    seats = tuple(SeatResult(f"p{i}", r) for i, r in enumerate(ranks))
    pts = seat_points(TableResult(1, 1, seats))
    assert sum(p.points for p in pts) == pytest.approx(sum(DEFAULT_PLACEMENT_POINTS[n]))
    for a, b in zip(seats, pts, strict=True):  # better rank, at least as many points
        for c, d in zip(seats, pts, strict=True):
            if a.rank < c.rank:
                assert b.points > d.points


def test_organiser_placement_points_and_normalised_scoring():
    rules = ScoringRules(placement_points={3: (5.0, 2.0, 0.0)})
    t = _table(1, 1, ("a", 1, 120.0), ("b", 2, 90.0), ("c", 3, 30.0))
    assert [p.points for p in seat_points(t, rules)] == [5.0, 2.0, 0.0]
    norm = seat_points(t, ScoringRules(method="normalised"))
    assert [p.normalised for p in norm] == [1.0, 0.75, 0.25]
    assert [p.points for p in norm] == [6.0, 4.5, 1.5]


@pytest.mark.parametrize(
    "table,rules,reason",
    [
        (_table(1, 1, ("a", 1, None), ("b", 4, None), ("c", 2, None)), RULES, "bad_rank"),
        (_table(1, 1, ("a", 1, None), ("a", 2, None), ("c", 3, None)), RULES, "duplicate_player"),
        (_table(1, 1, ("a", 1, 5.0), ("b", 2, -1.0), ("c", 3, 0.0)), RULES, "negative_score"),
        (
            _table(1, 1, ("a", 1, None), ("b", 2, None), ("c", 3, None)),
            ScoringRules(method="normalised"),
            "missing_score",
        ),
        (
            _table(1, 1, ("a", 1, None), ("b", 2, None), ("c", 3, None)),
            ScoringRules(placement_points={4: (3.0, 2.0, 1.0, 0.0)}),
            "bad_placement_points",
        ),
    ],
)
def test_bad_results_are_refused_with_the_reason(table, rules, reason):
    with pytest.raises(TournamentError) as e:
        seat_points(table, rules)
    assert e.value.reason == reason


def test_bad_rules_are_refused():
    with pytest.raises(TournamentError) as e:
        ScoringRules(placement_points={4: (6.0, 4.0, 2.0)})
    assert e.value.reason == "bad_placement_points"
    with pytest.raises(TournamentError) as e:
        ScoringRules(method="elo")
    assert e.value.reason == "bad_scoring_method"


def test_tiebreaks_apply_in_order_opponents_points_then_normalised_then_wins():
    round_1 = [
        _table(1, 1, ("a", 1, 100.0), ("c", 2, 50.0), ("e", 3, 0.0)),
        _table(1, 2, ("b", 1, 100.0), ("d", 2, 90.0), ("f", 3, 0.0)),
    ]
    rows = {s.player: s for s in standings(round_1)}
    # c and d: 3 points, 6 opponents' points each; d's normalised 0.9 beats c's 0.5
    assert (rows["c"].points, rows["c"].opponents_points) == (3.0, 6.0)
    assert (rows["d"].points, rows["d"].opponents_points) == (3.0, 6.0)
    assert [s.player for s in standings(round_1)] == ["a", "b", "d", "c", "e", "f"]
    assert rows["a"].rank == rows["b"].rank == 1  # equal on everything
    round_2 = [
        _table(2, 1, ("a", 1, 10.0), ("e", 2, 9.0), ("f", 3, 0.0)),
        _table(2, 2, ("b", 1, 10.0), ("d", 2, 5.0), ("c", 3, 0.0)),
    ]
    rows = {s.player: s for s in standings(round_1 + round_2)}
    # a and b: 12 points; b met stronger opponents (d 6, d 6, f 0, c 3 = 15 > 9)
    assert rows["a"].points == rows["b"].points == 12.0
    assert (rows["a"].opponents_points, rows["b"].opponents_points) == (9.0, 15.0)
    # opponents' points come before normalised: a's normalised sum is no lower
    assert rows["a"].normalised_sum >= rows["b"].normalised_sum
    assert [s.player for s in standings(round_1 + round_2)][:2] == ["b", "a"]
    # c and e: 3 points; c's opponents 33, e's 27, though e's normalised is higher
    assert rows["c"].points == rows["e"].points == 3.0
    assert rows["e"].normalised_sum > rows["c"].normalised_sum
    order = [s.player for s in standings(round_1 + round_2)]
    assert order.index("c") < order.index("e")


def test_wins_break_the_last_tie_and_full_ties_share_a_rank():
    results = [
        _table(1, 1, ("a", 1, 0.0), ("b", 2, 0.0), ("c", 2, 0.0), ("d", 4, 0.0)),
    ]
    rows = standings(results, rules=ScoringRules(placement_points={4: (3.0, 3.0, 3.0, 0.0)}))
    # a, b, c: 3 points, opponents 9-ish equal, normalised all 1.0 (best score 0) -> wins
    assert [r.player for r in rows[:3]] == ["a", "b", "c"]
    assert [r.rank for r in rows] == [1, 2, 2, 4]


def test_byes_score_as_the_organiser_sets_and_late_entries_appear():
    results = [_table(1, 1, ("a", 1, None), ("b", 2, None), ("c", 3, None))]
    rows = {
        s.player: s
        for s in standings(results, {1: ["d"]}, ScoringRules(bye_points=2.5), players=["late"])
    }
    assert rows["d"].points == 2.5 and rows["d"].byes == 1 and rows["d"].games == 0
    assert rows["late"].points == 0 and rows["late"].games == 0


def test_standings_per_round():
    results = [
        _table(1, 1, ("a", 1, None), ("b", 2, None), ("c", 3, None)),
        _table(2, 1, ("c", 1, None), ("b", 2, None), ("a", 3, None)),
    ]
    per = standings_by_round(results)
    assert [s.player for s in per[1]] == ["a", "b", "c"]
    assert {s.player: s.points for s in per[2]} == {"a": 6.0, "b": 6.0, "c": 6.0}
    assert all(s.games == 2 for s in per[2])
