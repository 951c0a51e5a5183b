"""Game review (services/bots/review.py): one entry per move, blunders cost, hidden
information is never read."""

from __future__ import annotations

import dataclasses

import pytest

from services.bots.heuristics import evaluator_for, greedy_options
from services.bots.policies import make_policy, search_config
from services.bots.review import (
    ReviewConfig,
    costliest,
    review_game,
    review_move,
    reviewable,
)
from services.rules.titles import get_game

FEW = ReviewConfig(max_iterations=6)


def _greedy_moves(title: str, players: int, seed: int, limit: int = 1 << 30):
    game = get_game(title)
    state = game.new_state(players, seed)
    policies = [make_policy("greedy", title, 50 + s) for s in range(players)]
    moves = []
    while not state.is_terminal() and len(moves) < limit:
        seat = state.active_seats()[0]
        action = policies[seat](state, seat)
        moves.append((seat, action.to_json()))
        state.apply(seat, action)
    return state, moves


def test_a_review_has_one_entry_per_move_in_order():
    state, moves = _greedy_moves("railbarons", 2, 11)
    assert state.is_terminal()
    done = []
    entries = review_game(
        get_game("railbarons"), 2, 11, None, moves, FEW, lambda d, t: done.append((d, t))
    )
    assert len(entries) == len(moves)
    assert [e.version for e in entries] == list(range(1, len(moves) + 1))
    assert [e.seat for e in entries] == [seat for seat, _ in moves]
    assert done[-1] == (len(moves), len(moves))
    for e in entries:
        assert len(e.win_chance_before) == len(e.win_chance_after) == 2
        assert all(0.0 <= x <= 1.0 for x in e.win_chance_before + e.win_chance_after)
        assert e.loss >= 0.0 and e.label and e.best_label
        assert e.loss == 0.0 or e.best_label != e.label
    # the same budget in iterations and the same seed: the same review
    again = review_game(get_game("railbarons"), 2, 11, None, moves, FEW)
    assert again == entries
    as_json = entries[0].to_json()
    assert set(as_json) >= {"seat", "label", "win_chance_before", "win_chance_after"}
    assert {"best_label", "loss"} <= set(as_json)


def test_a_resignation_ends_the_review():
    _, moves = _greedy_moves("railbarons", 2, 11, limit=6)
    with_resign = moves[:4] + [(1, {"type": "resign"})] + moves[4:]
    assert reviewable(with_resign) == moves[:4]
    entries = review_game(get_game("railbarons"), 2, 11, None, with_resign, FEW)
    assert len(entries) == 4


def test_a_blunder_costs_win_chance():
    """At a decision where the greedy evaluation's worst move is far below its best, playing
    the worst is reviewed as a loss, and the search preferred another move."""
    title = "railbarons"
    game = get_game(title)
    evaluate = evaluator_for(title)
    options_of = greedy_options(title)
    state, _ = _greedy_moves(title, 4, 5, limit=0)
    policies = [make_policy("greedy", title, 50 + s) for s in range(4)]
    while True:  # a decision whose options differ a lot in value
        seat = state.active_seats()[0]
        options = options_of(state, seat)
        if len(options) > 2:
            valued = []
            for a in options:
                child = state.clone()
                child.apply(seat, a)
                valued.append((evaluate(child, seat), a))
            valued.sort(key=lambda t: t[0])
            if valued[-1][0] - valued[0][0] > 30:
                break
        state.apply(seat, policies[seat](state, seat))
    worst = valued[0][1]
    search = dataclasses.replace(
        search_config("search-medium", title), time_budget=0, max_iterations=200
    )
    entry = review_move(game, state, seat, worst, state.version + 1, search, 3)
    assert entry.loss > 0.0
    assert entry.best_label != entry.label
    assert entry.win_chance_after[seat] < entry.win_chance_before[seat]
    assert costliest([entry], seat) == [entry]
    assert costliest([entry], (seat + 1) % 4) == []


def test_the_review_reads_only_the_seats_view():
    """Two Russian Railroads positions the seat cannot tell apart (the hidden cards and piles
    differ) are reviewed the same: the search starts from the seat's view only."""
    title = "transsib"
    game = get_game(title)
    state, _ = _greedy_moves(title, 4, 3, limit=40)
    while len(state.legal_actions(state.active_seats()[0])) < 2:
        seat = state.active_seats()[0]
        state.apply(seat, make_policy("greedy", title, 1)(state, seat))
    seat = state.active_seats()[0]
    twin = game.state_from_view(state.view(seat), seat, seed=98765)
    assert twin.view(seat) == state.view(seat)
    assert twin.to_json() != state.to_json()  # the hidden part differs
    played = make_policy("random", title, 2)(state, seat)
    search = dataclasses.replace(
        search_config("search-medium", title), time_budget=0, max_iterations=24
    )
    a = review_move(game, state, seat, played, state.version + 1, search, 9)
    b = review_move(game, twin, seat, played, state.version + 1, search, 9)
    assert a == b


def test_bad_budgets_are_refused():
    with pytest.raises(ValueError, match="non-negative"):
        ReviewConfig(time_budget=-1)
