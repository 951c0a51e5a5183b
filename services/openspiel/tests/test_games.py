"""Our titles as OpenSpiel games (services/openspiel/games.py): OpenSpiel's own
random-simulation test, its MCTS bot, the action encoding and the observations."""

from __future__ import annotations

import json

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")  # a declared dependency: missing = broken venv

from open_spiel.python.algorithms import mcts  # noqa: E402

from services.kernel.engine import is_listed  # noqa: E402
from services.openspiel import games  # noqa: E402

TITLES = ("railbarons", "transsib", "e1894")


def _after_setup(game, seed=7):
    state = game.new_initial_state()
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        assert len(outcomes) == game.max_chance_outcomes()
        assert abs(sum(p for _, p in outcomes) - 1.0) < 1e-9
        state.apply_action(seed)
    return state


@pytest.mark.parametrize("title", ["railbarons", "transsib"])
def test_openspiel_random_simulation_test_passes(title):
    game = pyspiel.load_game(f"roundhouse_{title}", {"players": 3})
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


def test_openspiel_random_simulation_test_passes_for_1894():
    """1894 plays ~1,500 moves with big views: one simulation with fewer setup seeds."""
    game = pyspiel.load_game("roundhouse_e1894", {"players": 3, "setup_seeds": 10})
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


@pytest.mark.parametrize("title", TITLES)
def test_actions_are_the_listed_moves_in_order(title):
    game = pyspiel.load_game(f"roundhouse_{title}")
    state = _after_setup(game)
    player = state.current_player()
    legal = state.legal_actions()
    assert legal == list(range(len(legal))) and len(legal) < game.num_distinct_actions()
    engine = state.engine
    for action in legal:
        move = engine.game.parse_action(json.loads(state.action_to_string(player, action)))
        assert is_listed(engine.legal_actions(player), move)
    # a clone is independent of its original
    clone = state.clone()
    clone.apply_action(legal[-1])
    assert state.legal_actions() == legal and clone.history() != state.history()


@pytest.mark.parametrize("title", TITLES)
def test_observation_strings_are_the_seats_views(title):
    game = pyspiel.load_game(f"roundhouse_{title}", {"players": 3})
    state = _after_setup(game)
    for p in range(3):
        assert json.loads(state.observation_string(p)) == json.loads(
            json.dumps(state.engine.view(p))
        )
    if title == "transsib":  # hidden end bonus cards differ per seat
        assert state.observation_string(0) != state.observation_string(1)


def test_setup_chance_outcomes_give_different_deals():
    game = pyspiel.load_game("roundhouse_transsib", {"setup_seeds": 5})
    a, b = _after_setup(game, 1), _after_setup(game, 2)
    assert str(a) != str(b)
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    fixed = pyspiel.load_game("roundhouse_railbarons")
    assert not fixed.new_initial_state().is_chance_node()


def test_bad_parameters_are_refused():
    with pytest.raises(Exception, match="players"):
        pyspiel.load_game("roundhouse_e1894", {"players": 2})


class _Rollout(mcts.Evaluator):
    """OpenSpiel's random rollout, cut after a few moves (the returns are then 0)."""

    def __init__(self, depth, rng):
        self.depth, self.rng = depth, rng

    def evaluate(self, state):
        state = state.clone()
        for _ in range(self.depth):
            if state.is_terminal():
                break
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(self.rng.choice(outcomes, p=probs))
            else:
                state.apply_action(self.rng.choice(state.legal_actions()))
        return np.array(state.returns())

    def prior(self, state):
        return mcts.RandomRolloutEvaluator().prior(state)


@pytest.mark.parametrize("title", TITLES)
def test_openspiel_mcts_bot_plays_each_title(title):
    game = pyspiel.load_game(f"roundhouse_{title}", {"players": 3})
    rng = np.random.RandomState(3)
    bot = mcts.MCTSBot(game, 1.4, 8, _Rollout(6, rng), random_state=rng)
    state = _after_setup(game)
    for _ in range(6):
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
    assert len(state.history()) >= 6
    assert games.TITLES == TITLES
