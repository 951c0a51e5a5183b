"""The greedy policy with the transsib heuristic beats random players clearly.

Fixed seeds; the greedy seat rotates. With N players a random seat wins about 1/N of the
games; greedy must win at least twice its share (it wins far more in practice).
"""

from __future__ import annotations

import pytest

from services.bots.heuristics.transsib import evaluate
from services.bots.tests.helpers import greedy_wins
from services.transsib.engine import GAME


@pytest.mark.parametrize("n,games", [(2, 12), (3, 15), (4, 20)])
def test_greedy_beats_random(n, games):
    wins = greedy_wins("transsib", n, games, first_seed=1000)
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
