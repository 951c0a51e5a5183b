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


def test_greedy_tries_a_few_prices_of_each_range_and_moves_inside_them():
    """Of another corporation's train it evaluates 1, half and all of the face value; of a
    private half, once and twice its value (as far as the range goes); the chosen move is
    always a listed one."""
    from services.bots.heuristics.e1894 import candidate_values
    from services.bots.policies import make_policy
    from services.e1894.engine.tests.flow_helpers import FINAL, before
    from services.kernel.engine import ActionRange, is_listed

    st = before(FINAL, 156)
    legal = st.legal_actions(1)
    train = next(e for e in legal if isinstance(e, ActionRange) and e.action.train == "2-3")
    assert tuple(candidate_values(st, 1, train)) == (1, 40, 80)
    lrc = next(e for e in legal if isinstance(e, ActionRange) and e.action.TYPE == "buy_company")
    assert (lrc.action.company, tuple(candidate_values(st, 1, lrc))) == ("LRC", (10, 20, 40))
    for seed in range(3):
        assert is_listed(legal, make_policy("greedy", "e1894", seed)(st.clone(), 1))
