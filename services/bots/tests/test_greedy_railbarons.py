"""The greedy policy with the railbarons heuristic beats random players clearly over a
fixed set of seeded games (Chicago Express, spec §11: most cash wins)."""

from __future__ import annotations

import pytest

from services.bots.heuristics.railbarons import evaluate
from services.bots.tests.helpers import greedy_wins
from services.rules.titles import get_game

GAME = get_game("railbarons")


@pytest.mark.parametrize("n,games", [(3, 30), (4, 40), (6, 30)])
def test_greedy_wins_far_more_than_its_share(n, games):
    """Greedy (one seat, rotating) wins at least twice its 1/N share against random seats."""
    wins = greedy_wins("railbarons", n, games, first_seed=1000)
    assert wins >= 2 * games / n, f"greedy won {wins} of {games} {n}-player games"


def test_evaluate_prefers_more_cash_and_is_relative():
    """The evaluation rises with the seat's cash and falls with an opponent's."""
    state = GAME.new_state(4, 1)
    base = evaluate(state, 0)
    richer = state.clone()
    richer.cash[0] += 10
    assert evaluate(richer, 0) > base
    rival = state.clone()
    rival.cash[1] += 10
    assert evaluate(rival, 0) < base


def test_evaluate_counts_a_winning_bid_as_a_share():
    """During an auction the high bidder is valued as the buyer: a cheap PRR share (income
    7, paying 7 a round) is worth more than its minimum price."""
    state = GAME.new_state(4, 1)
    before = evaluate(state, 0)
    state.apply(0, state.legal_actions(0)[1])  # bid the minimum, $7
    assert evaluate(state, 0) > before
