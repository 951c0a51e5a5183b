"""State contract details of 1894: JSON round trips, views, clones and invariants that hold
in every position of random games (hypothesis)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as hs

from services.kernel.engine import concrete_actions
from services.kernel.playout import random_choice
from services.kernel.rng import SeededRandom

from .. import GAME
from ..privates import CORP_OWNER


def _random_positions(players: int, seed: int, every: int = 37):
    st = GAME.new_state(players, seed)
    rng = SeededRandom(seed)
    while not st.is_terminal():
        if st.version % every == 0:
            yield st
        seat = st.active_seats()[0]
        st.apply(seat, random_choice(st, seat, rng))
    yield st


def _check_invariants(st):
    n = st.num_players
    for ci in range(len(st.holdings)):
        total = sum(st.holdings[ci]) + st.ipo[ci] + st.pool[ci] + st.redeemed[ci]
        assert total == 100, ci
        assert st.pool[ci] <= 50
        if st.president[ci] >= 0:
            p = st.president[ci]
            assert st.holdings[ci][p] >= 20
            assert all(st.holdings[ci][s] <= st.holdings[ci][p] for s in range(n))
    assert all(c >= 0 for c in st.cash) and all(c >= 0 for c in st.corp_cash)
    trains = [t for ts in st.trains for t in ts]
    assert len(trains) == len(set(trains))
    for owner in st.private_owner:
        assert owner in (-2, -1) or 0 <= owner < n or owner >= CORP_OWNER


@settings(max_examples=6, deadline=None)
@given(players=hs.sampled_from([3, 4]), seed=hs.integers(0, 10**6))
def test_invariants_hold_in_random_games(players, seed):
    """§Shares: every corporation's shares add up to 100% (players, Treasury, pool,
    redeemed), the pool holds at most 50%, the president holds the most (20% or more); no
    negative cash; every train is owned once."""
    for st in _random_positions(players, seed, every=11):
        _check_invariants(st)


def test_json_round_trip_and_views():
    """The view is the whole public state (no hidden information in 1894): it rebuilds an
    equal state, it is the same for every seat but the ``viewer`` field, and it holds no
    seed."""
    seed = 123456789123
    for st in _random_positions(4, seed % 10**6):
        v0 = st.view(0)
        assert json.loads(json.dumps(v0)) == v0
        for viewer in (None, 1, 2, 3):
            v = st.view(viewer)
            assert {k: x for k, x in v.items() if k != "viewer"} == {
                k: x for k, x in v0.items() if k != "viewer"
            }
        rebuilt = GAME.state_from_view(v0, 0, seed=0)
        assert rebuilt.to_json() == st.to_json()
        if not st.is_terminal():
            seat = st.active_seats()[0]
            assert rebuilt.legal_actions(seat) == st.legal_actions(seat)


def test_clone_is_independent_and_equal():
    for st in _random_positions(3, 77, every=101):
        twin = st.clone()
        assert twin.to_json() == st.to_json()
        if twin.is_terminal():
            continue
        before = st.to_json()
        seat = twin.active_seats()[0]
        twin.apply(seat, next(concrete_actions(twin.legal_actions(seat)[-1:])))
        assert st.to_json() == before
