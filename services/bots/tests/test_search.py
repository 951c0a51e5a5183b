"""The search policies (services/bots/search/mcts.py): legal, reproducible choices in every
title, ranged actions, the budget kept on an injected clock, determinisation that never
reads what the seat cannot see, and max^n rewards."""

from __future__ import annotations

import dataclasses

import pytest

from services.bots.policies import (
    POLICY_NAMES,
    SEARCH_TIERS,
    make_policy,
    policy_available,
    policy_buildable,
    search_config,
)
from services.bots.search.mcts import MCTS, SearchConfig, search_policy
from services.kernel.engine import ActionRange, is_listed
from services.kernel.playout import play_out, random_policy
from services.kernel.rng import SeededRandom
from services.rules.titles import get_game

TITLES = ("railbarons", "transsib", "e1894")
FEW = SearchConfig(time_budget=0, max_iterations=12, worlds=3, rollout_depth=2)


def _position(title: str, moves: int, seed: int = 3):
    """A 4-player position after ``moves`` random moves (a decision with choices)."""
    state = get_game(title).new_state(4, seed)
    rng = SeededRandom(seed)
    policy = random_policy(rng)
    while state.version < moves or len(state.legal_actions(state.active_seats()[0])) < 2:
        seat = state.active_seats()[0]
        state.apply(seat, policy(state, seat))
    return state


def test_the_tiers_are_hosted_policies_weakest_first():
    assert POLICY_NAMES == ("random", "greedy", "search-easy", "search-medium", "search-hard")
    budgets = [SEARCH_TIERS[t].time_budget for t in POLICY_NAMES[2:]]
    assert budgets == sorted(budgets) and SEARCH_TIERS["search-medium"].time_budget <= 0.2
    for title in TITLES:
        assert all(policy_available(p, title) for p in POLICY_NAMES)
        assert all(policy_buildable(p, title) for p in POLICY_NAMES)


def test_the_lobby_s_catalogue_agrees_with_what_the_bots_can_build():
    """The lobby checks requests against services.match.botcatalogue (it may not import
    the bots): for every registered title and one that is not, the catalogue offers exactly
    the policies the bots can build."""
    from services.rules.titles import TITLE_MODULES

    for title in (*TITLE_MODULES, "no-such-title"):
        for policy in (*POLICY_NAMES, "no-such-policy"):
            assert policy_available(policy, title) == policy_buildable(policy, title), (
                policy,
                title,
            )
        # per-title knobs never change a tier's budget
        for tier in SEARCH_TIERS:
            assert search_config(tier, title).time_budget == SEARCH_TIERS[tier].time_budget


@pytest.mark.parametrize("title", TITLES)
def test_search_picks_a_legal_move_reproducibly(title):
    state = _position(title, 30)
    seat = state.active_seats()[0]
    before = state.to_json()
    picks = [search_policy(title, FEW, SeededRandom(9))(state, seat) for _ in range(2)]
    assert picks[0] == picks[1]
    assert is_listed(state.legal_actions(seat), picks[0])
    assert state.to_json() == before  # the search works on copies


def test_search_handles_ranged_actions():
    """1894's auction offers bids as ranges; the search answers a concrete legal bid."""
    state = get_game("e1894").new_state(4, 5)
    seat = state.active_seats()[0]
    legal = state.legal_actions(seat)
    assert any(type(e) is ActionRange for e in legal)
    policy = search_policy("e1894", FEW, SeededRandom(2))
    action = policy(state, seat)
    assert is_listed(legal, action) and not isinstance(action, ActionRange)
    assert policy.searcher.stats.iterations == FEW.max_iterations


class FakeClock:
    """Each reading advances time by ``step`` seconds (an iteration reads it a few times)."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize("title", TITLES)
def test_the_time_budget_is_kept_on_the_injected_clock(title):
    state = _position(title, 20)
    seat = state.active_seats()[0]
    clock = FakeClock(0.003)
    config = SearchConfig(time_budget=0.2, worlds=2, rollout_depth=3)
    searcher = MCTS(title, config, SeededRandom(1), clock)
    start = clock.now
    searcher.choose(state, seat)
    spent = clock.now - start
    assert searcher.stats.iterations >= 2
    assert spent <= 1.1 * config.time_budget
    # an iteration budget binds first when it is the smaller one
    searcher = MCTS(title, dataclasses.replace(config, max_iterations=3), SeededRandom(1), clock)
    searcher.choose(state, seat)
    assert searcher.stats.iterations == 3


def test_determinisation_sees_only_the_view():
    """Two Russian Railroads states that look the same to the seat (hidden cards and piles
    differ) get the same search: the search starts from the seat's view only."""
    game = get_game("transsib")
    state = _position("transsib", 40)
    seat = state.active_seats()[0]
    twin = game.state_from_view(state.view(seat), seat, seed=12345)
    assert twin.view(seat) == state.view(seat)
    assert twin.to_json() != state.to_json()  # the hidden part differs
    a = search_policy("transsib", FEW, SeededRandom(4))
    b = search_policy("transsib", FEW, SeededRandom(4))
    assert a(state, seat) == b(twin, seat)


def test_rewards_rank_the_seats_and_share_a_tied_win():
    title = "railbarons"
    state = get_game(title).new_state(4, 1)
    play_out(state, {s: make_policy("greedy", title, s) for s in range(4)}, SeededRandom(1))
    searcher = MCTS(title, FEW, SeededRandom(1))
    rewards = searcher.rewards(state)
    ranks = state.result().ranks
    for i in range(4):
        for j in range(4):
            if ranks[i] < ranks[j]:
                assert rewards[i] > rewards[j]
            elif ranks[i] == ranks[j]:
                assert rewards[i] == rewards[j]
    assert all(0.0 <= r <= 1.0 for r in rewards)
    # a position that is not over: each seat's squashed evaluation, in (0, 1)
    live = searcher.rewards(get_game(title).new_state(4, 1))
    assert len(live) == 4 and all(0.0 < r < 1.0 for r in live)


def test_bad_budgets_are_refused():
    with pytest.raises(ValueError, match="budget"):
        SearchConfig(time_budget=0, max_iterations=0)
    with pytest.raises(ValueError):
        SearchConfig(worlds=0)
    with pytest.raises(KeyError):
        search_policy("nonesuch", FEW, SeededRandom(1))


@pytest.mark.parametrize("title", ["e1894"])
def test_margin_rewards_follow_the_final_scores_and_the_estimate(title):
    """Margin titles: the leader's reward is above one half and every trailer's below it,
    ordered by score, at the end (final scores) and during the game (the estimate)."""
    from services.bots.search.mcts import TITLE_SETTINGS

    assert TITLE_SETTINGS[title].reward == "margin"
    state = get_game(title).new_state(4, 2)
    searcher = MCTS(title, FEW, SeededRandom(1))
    live = searcher.rewards(state)
    assert len(live) == 4 and all(0.0 < r < 1.0 for r in live)
    play_out(state, {s: make_policy("greedy", title, s) for s in range(4)}, SeededRandom(2))
    scores = state.result().scores
    rewards = searcher.rewards(state)
    for i in range(4):
        for j in range(4):
            if scores[i] > scores[j]:
                assert rewards[i] > rewards[j]
    leader = max(range(4), key=lambda s: scores[s])
    if sorted(scores)[-1] > sorted(scores)[-2]:
        assert rewards[leader] > 0.5 and all(r < 0.5 for s, r in enumerate(rewards) if s != leader)


def test_the_1894_estimate_counts_the_dividends_to_come():
    """A seat's estimate exceeds its worth by its share of a floated corporation's trains'
    revenue to come; fewer operating rounds remain as the depot sells trains."""
    from services.bots.heuristics.e1894 import estimates, operating_rounds_left
    from services.e1894.engine.reading import read

    assert operating_rounds_left(0) > operating_rounds_left(20) > operating_rounds_left(30) > 0
    state = get_game("e1894").new_state(4, 3)
    policies = {s: make_policy("greedy", "e1894", s) for s in range(4)}
    while not any(c.floated and c.trains for c in read(state).corporations):
        seat = state.active_seats()[0]
        state.apply(seat, policies[seat](state, seat))
    r = read(state)
    est = estimates(state)
    corp = next(c for c in r.corporations if c.floated and c.trains)
    holder = max(range(4), key=lambda s: corp.shares[s])
    assert est[holder] > r.players[holder].worth
    assert all(e >= p.worth for e, p in zip(est, r.players, strict=True))


def test_progressive_widening_offers_more_root_moves_as_visits_grow():
    """1894 widens its root: a search of few iterations tries only the first few moves of
    the ordering, a longer one more."""
    state = _position("e1894", 60)
    seat = state.active_seats()[0]
    few = MCTS("e1894", dataclasses.replace(FEW, max_iterations=2, tree_depth=1), SeededRandom(1))
    many = MCTS("e1894", dataclasses.replace(FEW, max_iterations=40, tree_depth=1), SeededRandom(1))
    roots = []
    for searcher in (few, many):
        seen = []
        original = searcher._iterate

        def spy(world, root, me, order, deadline, original=original, seen=seen):
            original(world, root, me, order, deadline)
            seen.append(len(root.children))

        searcher._iterate = spy
        searcher.choose(state, seat)
        roots.append(seen[-1] if seen else 0)
    options = len(few.options(state, seat))
    if options > 4:
        assert roots[0] <= 2 < roots[1] <= options


def test_the_keep_moving_guard_plays_greedy_late_in_a_game():
    """After ``stall_moves`` moves the 1894 search makes the greedy choice without searching."""
    from services.bots.search.mcts import TITLE_SETTINGS

    state = _position("e1894", 60)
    seat = state.active_seats()[0]
    searcher = MCTS("e1894", FEW, SeededRandom(1))
    state.version = TITLE_SETTINGS["e1894"].stall_moves + 1
    action = searcher.choose(state, seat)
    assert searcher.stats.iterations == 0
    assert is_listed(state.legal_actions(seat), action)


def test_russian_railroads_estimates_are_the_greedy_evaluation_of_every_seat():
    from services.bots.heuristics.transsib import estimates, evaluate

    state = _position("transsib", 40)
    assert estimates(state) == [evaluate(state, s) for s in range(4)]
