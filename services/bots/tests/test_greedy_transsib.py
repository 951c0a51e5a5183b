"""The greedy policy with the transsib heuristic beats random players clearly.

Fixed seeds; the greedy seat rotates. With N players a random seat wins about 1/N of the
games; greedy must win at least twice its share (it wins far more in practice).
"""

from __future__ import annotations

import pytest

from services.bots.heuristics.transsib import evaluate
from services.bots.policies import greedy_policy
from services.common.playout import play_out, random_policy
from services.common.rng import SeededRandom
from services.transsib.engine import GAME


def _greedy_wins(n: int, games: int) -> int:
    wins = 0
    for g in range(games):
        seat = g % n
        policies = {s: random_policy(SeededRandom(100 + g * 7 + s)) for s in range(n)}
        policies[seat] = greedy_policy("transsib", SeededRandom(g))
        state = play_out(GAME.new_state(n, 1000 + g), policies, SeededRandom(g))
        wins += state.result().ranks[seat] == 1
    return wins


@pytest.mark.parametrize("n,games", [(2, 12), (3, 15), (4, 20)])
def test_greedy_beats_random(n, games):
    wins = _greedy_wins(n, games)
    share = games / n
    assert wins >= min(games, 2 * share), f"greedy won {wins}/{games} with {n} players"


def test_evaluation_prefers_points_and_progress():
    state = GAME.new_state(3, 5)
    seat = state.active_seats()[0]
    base = evaluate(state, seat)
    richer = state.clone()
    richer.players[seat].score += 10
    assert evaluate(richer, seat) > base
    built = state.clone()
    built.players[seat].pos[0] = 5
    built.players[seat].unlocked |= 0b11
    assert evaluate(built, seat) > base
