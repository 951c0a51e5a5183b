"""Generic resignation (services/match/resignation.py): a resigned seat is
ranked last whether the game ends at once or continues to the title's end;
replaying the log with the resignation gives the same state."""

from __future__ import annotations

import pytest

from services.kernel.engine import IllegalAction, Result, choose_per_entry
from services.kernel.rng import SeededRandom
from services.match.resignation import (
    CONTINUE,
    END,
    RESIGNATION,
    Resign,
    ResignableState,
    ResignationPolicy,
    engine_state,
    entry_label,
    rank_resigned_last,
    resignation_policy,
)
from services.rules.messages import legal_response
from services.rules.titles import available_titles, get_game


def test_every_title_has_a_policy_and_the_setting_overrides_it():
    assert set(RESIGNATION) >= set(available_titles())
    assert resignation_policy("railbarons").mode == RESIGNATION["railbarons"].mode
    assert resignation_policy("railbarons", {"railbarons": CONTINUE}).mode == CONTINUE
    with pytest.raises(ValueError):
        resignation_policy("railbarons", {"railbarons": "surrender"})


def test_rank_resigned_last_keeps_the_others_order():
    result = Result((10, 30, 20, 30), (4, 1, 3, 1), "end")
    assert rank_resigned_last(result, (1,)).ranks == (3, 4, 2, 1)
    assert rank_resigned_last(result, (1, 3)).ranks == (2, 3, 1, 3)


@pytest.mark.parametrize("title", available_titles())
def test_resigning_ends_the_game_with_the_seat_last(title):
    game = get_game(title)
    state = ResignableState(game.new_state(game.min_players, 3), ResignationPolicy(END))
    seat = state.active_seats()[0]
    events = state.apply(seat, Resign())
    assert events == [{"type": "resigned", "seat": seat, "game_ends": True}]
    assert state.is_terminal() and state.active_seats() == () and state.version == 1
    result = state.result()
    assert result.end_reason == "resignation"
    assert result.ranks[seat] == game.min_players and min(result.ranks) == 1
    with pytest.raises(IllegalAction) as err:
        state.apply(seat, Resign())
    assert err.value.code == "game_over"


@pytest.mark.parametrize("title", available_titles())
def test_a_game_that_continues_ranks_the_resigned_seat_last_at_its_end(title):
    game = get_game(title)
    rng = SeededRandom(5)
    state = ResignableState(game.new_state(game.min_players, 11), ResignationPolicy(CONTINUE))
    state.apply(0, Resign())
    with pytest.raises(IllegalAction) as err:
        state.apply(0, Resign())
    assert err.value.code == "seat_resigned"
    copy = state.clone()
    while not state.is_terminal():
        seat = state.active_seats()[0]
        state.apply(seat, choose_per_entry(state.legal_actions(seat), rng))
    assert state.version == state.inner.version + 1  # the resignation is one log entry
    assert state.result().ranks[0] == game.min_players  # last, whatever its score
    assert state.result().scores == state.inner.result().scores
    assert copy.resigned == (0,) and not copy.is_terminal()  # clones are independent


@pytest.mark.parametrize("title", available_titles())
def test_labels_are_made_on_the_engine_state_behind_the_wrapper(title):
    """The engines never see a ResignableState: the move labels of the log
    (``entry_label``) and of the legal moves (the rules layer's ``legal_response``)
    are the engine's ``describe`` of the state inside, unwrapped by ``engine_state``."""
    game = get_game(title)
    inner = game.new_state(game.min_players, 3)
    state = ResignableState(inner, ResignationPolicy(END))
    assert engine_state(state) is inner and engine_state(inner) is inner
    rng = SeededRandom(4)
    for _ in range(5):
        seat = state.active_seats()[0]
        legal = state.legal_actions(seat)
        assert list(legal_response(title, state, seat, game).labels) == game.describe_all(
            inner, legal
        )
        action = choose_per_entry(legal, rng)
        label = entry_label(game, state, seat, action)
        assert label == game.describe(inner, action) and label
        state.apply(seat, action)
    assert entry_label(game, state, 0, Resign()) == "Seat 0 resigns"
