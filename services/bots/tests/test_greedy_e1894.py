"""The greedy policy with the 1894 heuristic beats random players clearly over a fixed set of
seeded 3- and 4-player games (spec "Game end": the highest worth wins)."""

from __future__ import annotations

import pytest

from services.bots.heuristics.e1894 import evaluate
from services.bots.tests.helpers import greedy_wins
from services.e1894.engine import GAME


@pytest.mark.parametrize("n,games", [(3, 6), (4, 8)])
def test_greedy_wins_far_more_than_its_share(n, games):
    """Greedy (one seat, rotating) wins at least twice its 1/N share against random seats."""
    wins = greedy_wins("e1894", n, games, first_seed=500)
    assert wins >= 2 * games / n, f"greedy won {wins} of {games} {n}-player games"


def test_evaluate_is_relative_to_the_best_rival():
    """The evaluation rises with the seat's cash and falls with the best opponent's."""
    state = GAME.new_state(4, 1)
    base = evaluate(state, 0)
    richer = state.clone()
    richer.cash[0] += 100
    assert evaluate(richer, 0) == base + 100
    rival = state.clone()
    rival.cash[1] += 100
    assert evaluate(rival, 0) == base - 100
