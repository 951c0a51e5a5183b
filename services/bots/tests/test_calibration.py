"""The review's calibration maps (services/bots/calibration.py): the isotonic fit is
monotone and matches the observed shares where the data are already ordered, pools what is
not; maps round-trip through their files; a title without a map gets the estimate itself;
reviews apply the map to every seat's chance."""

from __future__ import annotations

import dataclasses

import pytest

from services.bots import calibration as cal
from services.bots.calibration import IDENTITY, Calibration, fit


def test_the_fit_is_monotone_and_pools_violators():
    # 0.2 wins 1 of 4, 0.4 wins 0 of 4 (a violation: pooled to 1/8 each), 0.8 wins 3 of 4
    pairs = [(0.2, w) for w in (1, 0, 0, 0)] + [(0.4, 0)] * 4 + [(0.8, w) for w in (1, 1, 1, 0)]
    m = fit(pairs)
    assert m.positions == 12
    assert m.apply(0.2) == pytest.approx(0.125) and m.apply(0.4) == pytest.approx(0.125)
    assert m.apply(0.8) == pytest.approx(0.75)
    assert m.apply(0.6) == pytest.approx(0.4375)  # linear between the blocks
    assert m.apply(0.0) == pytest.approx(0.125) and m.apply(1.0) == pytest.approx(0.75)
    xs = [i / 100 for i in range(101)]
    ys = [m.apply(x) for x in xs]
    assert all(b >= a for a, b in zip(ys, ys[1:], strict=False))
    assert m.apply(-1.0) == m.apply(0.0) and m.apply(2.0) == m.apply(1.0)


def test_an_ordered_set_is_fitted_exactly_and_a_map_round_trips():
    pairs = [(0.1, 0.0)] * 3 + [(0.5, 0.0), (0.5, 1.0)] + [(0.9, 1.0)] * 2
    m = fit(pairs, note="n")
    assert (m.apply(0.1), m.apply(0.5), m.apply(0.9)) == (0.0, 0.5, 1.0)
    assert m.apply(0.3) == pytest.approx(0.25)  # linear between knots
    assert Calibration.from_json(m.to_json()) == m
    with pytest.raises(ValueError):
        fit([])


def test_bad_maps_are_refused():
    for xs, ys in [((0.0, 0.5), (0.0, 1.0)), ((0.0, 1.0), (0.6, 0.4)), ((0.0, 1.0), (0.0, 1.5))]:
        with pytest.raises(ValueError):
            Calibration(xs, ys)
    with pytest.raises(ValueError):
        Calibration((0.0, 0.5, 0.5, 1.0), (0.0, 0.1, 0.2, 1.0))


def test_a_title_without_a_map_keeps_the_estimate_and_a_written_map_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(cal, "MAPS", tmp_path)
    cal.for_title.cache_clear()
    try:
        assert cal.for_title("nosuch") is IDENTITY and IDENTITY.apply(0.37) == 0.37
        m = Calibration((0.0, 0.5, 1.0), (0.1, 0.2, 0.9))
        cal.write("nosuch", m)
        assert cal.for_title("nosuch") == m
    finally:
        cal.for_title.cache_clear()


def test_a_review_reports_every_seat_through_the_map(monkeypatch):
    from services.bots import review
    from services.rules.titles import get_game

    game = get_game("railbarons")
    moves = []
    state = game.new_state(3, 5, None)
    for _ in range(3):
        seat = state.active_seats()[0]
        action = state.legal_actions(seat)[0]
        moves.append((seat, action))
        state.apply(seat, action)
    config = review.ReviewConfig(max_iterations=8, seed=1, calibrate=False)
    raw = review.review_game(game, 3, 5, None, moves, config)
    halve = Calibration((0.0, 1.0), (0.0, 0.5))
    monkeypatch.setattr(review, "for_title", lambda title: halve)
    mapped = review.review_game(
        game, 3, 5, None, moves, dataclasses.replace(config, calibrate=True)
    )
    for r, m in zip(raw, mapped, strict=True):
        assert m.win_chance_after == pytest.approx([x / 2 for x in r.win_chance_after])
        assert m.win_chance_before == pytest.approx([x / 2 for x in r.win_chance_before])
        assert m.loss == pytest.approx(r.loss / 2)
