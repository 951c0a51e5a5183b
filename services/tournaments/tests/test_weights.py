"""Takeovers, forfeits and seat weights in a result, played through the state
wrapper on a real engine (no services), and their use by the ratings."""

from __future__ import annotations

import pytest

from services.kernel.engine import IllegalAction
from services.kernel.playout import random_choice
from services.kernel.rng import SeededRandom
from services.match.controls import parse_clock_settings
from services.match.resignation import ResignableState, Timeout, resignation_policy
from services.rules.titles import get_game
from services.tournaments.ratings import RatedGame, rate_game
from services.tournaments.weights import (
    forfeited_seats,
    rated_seats,
    seat_weights,
    taken_over_seats,
)

T0 = 1_000_000


def _game(policy: str, title: str = "transsib", casual: bool = True):
    clock = parse_clock_settings(
        {
            "time_control": {"kind": "live", "base_s": 30, "increment_s": 1},
            "timeout_policy": policy,
            "casual": casual,
        }
    )
    game = get_game(title)
    return ResignableState(game.new_state(3, 4), resignation_policy(title), clock, T0)


def _play(state, rng, at, until=None):
    while not state.is_terminal() and (until is None or state.version < until):
        seat = state.active_seats()[0]
        at += 100
        state.apply(seat, random_choice(state.inner, seat, rng), at_ms=at)
    return at


def test_a_takeover_is_recorded_with_its_version_and_lowers_the_seats_weight():
    state, rng = _game("takeover"), SeededRandom(1)
    at = _play(state, rng, T0, until=30)
    seat = state.active_seats()[0]
    with pytest.raises(IllegalAction) as err:
        state.apply(seat, Timeout(), at_ms=at + 1)
    assert err.value.code == "not_timed_out"
    at = state.clocks.deadline_ms(seat)
    state.apply(seat, Timeout(), at_ms=at)
    assert state.taken_over(seat) and state.bot_seats() == {seat: "greedy"}
    _play(state, rng, at)
    result = state.result_json()
    assert taken_over_seats(result) == {seat: 31}
    weights = seat_weights(result)
    assert state.moves[seat] > state.bot_moves[seat] > 0  # it moved before and after
    assert weights[seat] == round(1 - state.bot_moves[seat] / state.moves[seat], 4)
    assert [w for s, w in enumerate(weights) if s != seat] == [1.0, 1.0]
    assert forfeited_seats(result) == []  # a takeover is not a forfeit: ranked by score
    # the ratings move the taken-over seat less than a seat of weight 1 would move
    accounts = ["a", "b", "c"]
    weighted = rate_game(RatedGame("transsib", "g", rated_seats(result, accounts, [False] * 3)), {})
    full = rate_game(
        RatedGame(
            "transsib",
            "g",
            rated_seats({**result, "seat_weights": [1.0] * 3}, accounts, [False] * 3),
        ),
        {},
    )
    change = [abs(r.mu - 25.0) for r in weighted.ratings]
    full_change = [abs(r.mu - 25.0) for r in full.ratings]
    assert change[seat] < full_change[seat]


def test_a_tournament_forfeit_ranks_the_seat_last_and_the_others_play_on():
    state, rng = _game("forfeit", casual=False), SeededRandom(2)
    at = _play(state, rng, T0, until=10)
    seat = state.active_seats()[0]
    state.apply(seat, Timeout(), at_ms=state.clocks.deadline_ms(seat))
    assert not state.is_terminal()  # transsib: the others play on
    _play(state, rng, at + 40_000)
    result = state.result_json()
    assert forfeited_seats(result) == [seat]
    assert result["ranks"][seat] == 3
    assert result["takeovers"][0]["reason"] == "timeout"


def test_a_forfeit_where_the_title_ends_the_game():
    state = _game("forfeit", title="railbarons")
    seat = state.active_seats()[0]
    state.apply(seat, Timeout(), at_ms=T0 + 30_000)
    assert state.is_terminal()
    result = state.result_json()
    assert result["end_reason"] == "resignation" and forfeited_seats(result) == [seat]
    assert "takeovers" not in result


def test_a_resignation_under_takeover_continues_a_railbarons_game():
    from services.match.resignation import Resign

    state = _game("takeover", title="railbarons")
    state.apply(1, Resign(), at_ms=T0 + 5)
    assert not state.is_terminal() and state.bot_seats() == {1: "greedy"}
    assert state.clocks.seats[1].flagged


def test_bad_weights_are_refused():
    with pytest.raises(ValueError):
        seat_weights({"ranks": [1, 2], "seat_weights": [1.0, 1.5]})
