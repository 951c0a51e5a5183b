"""The greedy policy with the 1894 heuristic beats random players clearly over a fixed set of
seeded 3- and 4-player games (spec "Game end": the highest worth wins)."""

from __future__ import annotations

import pytest

from services.bots.heuristics.e1894 import evaluate
from services.bots.policies import make_policy
from services.common.playout import play_out, random_policy
from services.common.rng import SeededRandom
from services.e1894.engine import GAME


def _greedy_wins(n: int, games: int, first_seed: int) -> int:
    wins = 0
    for g in range(games):
        seat = g % n
        state = GAME.new_state(n, first_seed + g)
        policies = {s: random_policy(SeededRandom(first_seed * 100 + g * 10 + s)) for s in range(n)}
        policies[seat] = make_policy("greedy", "e1894", first_seed + g)
        play_out(state, policies, SeededRandom(g))
        assert state.is_terminal()
        wins += state.result().ranks[seat] == 1
    return wins


@pytest.mark.parametrize("n,games", [(3, 6), (4, 8)])
def test_greedy_wins_far_more_than_its_share(n, games):
    """Greedy (one seat, rotating) wins at least twice its 1/N share against random seats."""
    wins = _greedy_wins(n, games, first_seed=500)
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
