"""Invariants over random games (hypothesis): bookkeeping always agrees with a
recomputation from scratch (spec §6-§11), money is conserved, views rebuild the state."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from services.common.engine import IllegalAction
from services.common.rng import SeededRandom
from services.railbarons.engine import GAME, board, expansion, phases

NC = board.NUM_COMPANIES

OPTIONS = hs.fixed_dictionaries(
    {},
    optional={
        "build_cost_formula": hs.sampled_from(
            ["multiply", "add_one_per_company", "count_multiplier", "doubling"]
        ),
        "auctioneer_must_open": hs.booleans(),
        "dividend_rounding": hs.sampled_from(["up", "down"]),
        "start_hexes_exclusive": hs.booleans(),
        "industrial_development_uses_house": hs.booleans(),
        "develop_requires_share": hs.booleans(),
        "development_cost": hs.integers(0, 2),
        "bid_increment": hs.integers(1, 3),
        "initial_auction_no_bid": hs.sampled_from(["stays_unsold", "starter_must_bid"]),
    },
)


def _connected(mask: int, start: int) -> bool:
    seen = 1 << start
    todo = [start]
    while todo:
        h = todo.pop()
        for n in board.NEIGHBOURS[h]:
            if mask >> n & 1 and not seen >> n & 1:
                seen |= 1 << n
                todo.append(n)
    return seen == mask


def check_invariants(st) -> None:
    """Every piece of incremental bookkeeping equals its recomputation."""
    rules = st.rules
    occ = 0
    count = [0] * board.NUM_HEXES
    for c in range(NC):
        net = st.net[c]
        if not st.opened >> c & 1:
            assert net == 0
            continue
        start = board.START_HEX[c]
        assert net >> start & 1 and _connected(net, start)
        income = rules.start_income[c] + sum(
            expansion.hex_income(st, h) for h in board.iter_bits(net) if h != start
        )
        assert st.income[c] == income, board.COMPANY_IDS[c]
        near = 0
        for h in board.iter_bits(net):
            near |= board.NB_MASK[h]
            count[h] += 1
        assert st.front[c] == near & ~net & rules.allowed[c]
        occ |= net
        assert st.locos[c] + bin(net).count("1") == board.LOCOMOTIVES[c]
        assert st.locos[c] >= 0
        assert sum(st.held[s * NC + c] for s in range(st.num_players)) == st.sold[c]
        assert st.sold[c] <= board.SHARES[c]
        assert st.treasury[c] >= 0
    assert st.occ == occ and st.count == count
    for h in board.iter_bits(board.EXCLUSIVE_MASK & occ):
        assert count[h] == 1
    assert all(x >= 0 for x in st.cash)
    assert st.houses >= 0
    assert all(0 <= st.dials[d] <= rules.dial_limits[d] for d in range(3))
    if st.phase == phases.DIAL:
        assert sum(st.dials[d] >= rules.dial_limits[d] for d in range(3)) <= 1


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=hs.integers(0, 2**40), n=hs.integers(2, 6), options=OPTIONS)
def test_bookkeeping_and_money_over_random_games(seed, n, options):
    """§6-§11: incomes = start income + current hex incomes; frontiers, counts, shares and
    locomotives agree with the board; money only moves as the rules say; clones and
    rebuilt views equal the state."""
    st = GAME.new_state(n, seed, options)
    rng = SeededRandom(seed)
    money = sum(st.cash) + sum(st.treasury)
    houses_used = 0
    step = 0
    while not st.is_terminal():
        seat = st.active
        legal = st.legal_actions(seat)
        action = legal[rng.randbelow(len(legal))]
        events = st.apply(seat, action)
        for e in events:
            if e["type"] == "dividend":
                money += sum(e["paid"])
            elif e["type"] == "built":
                money -= e["cost"]
            elif e["type"] == "developed":
                money += e.get("treasury_gain", 0) - st.rules.dev_cost
                houses_used += 1
            elif e["type"] == "industrial_advanced" and "seat" in e:
                money -= st.rules.dev_cost
                houses_used += st.rules.ind_uses_house
        assert sum(st.cash) + sum(st.treasury) == money
        assert st.houses == board.HOUSES_IN_SUPPLY - houses_used
        check_invariants(st)
        if step % 23 == 0:
            assert st.clone().to_json() == st.to_json()
            rebuilt = GAME.state_from_view(st.view(None), None, 0)
            assert rebuilt.to_json() == st.to_json()
        step += 1
    result = st.result()
    assert list(result.scores) == st.cash
    assert st.end_reason and st.rounds <= 8


def _probe_actions(st, rng):
    """A varied sample of actions, legal and not, for the current position."""
    from services.railbarons.engine import actions as A

    out = list(A.DIAL_ACTIONS) + list(A.AUCTION_ACTIONS) + [A.PASS, A.DONE, A.DECLINE]
    seat = st.active
    floor = st.a_high + 1 if st.a_bidder >= 0 else 1
    for amount in {0, floor - 1, floor, floor + 1, st.cash[seat], st.cash[seat] + 1}:
        if amount >= 0:
            out.append(A.Bid(amount))
    for c in range(NC):
        hexes = set(board.iter_bits(st.front[c])) | {rng.randbelow(board.NUM_HEXES)}
        for h in hexes:
            out.append(A.BUILD_ACTIONS[c * board.NUM_HEXES + h])
    for h in set(board.iter_bits(st.occ)) | {rng.randbelow(board.NUM_HEXES)}:
        out.append(A.DEVELOP_ACTIONS[h])
    return out


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=hs.integers(0, 2**40), n=hs.integers(2, 6), options=OPTIONS)
def test_apply_accepts_exactly_the_legal_actions(seed, n, options):
    """Engine contract: an action is accepted exactly when legal_actions lists it; a
    refused one changes nothing (checked on a wide sample of actions at every step)."""
    st = GAME.new_state(n, seed, options)
    rng = SeededRandom(seed ^ 0x5EED)
    while not st.is_terminal():
        seat = st.active
        legal = st.legal_actions(seat)
        legal_set = set(legal)
        before = st.to_json()
        for action in _probe_actions(st, rng):
            if action in legal_set:
                st.clone().apply(seat, action)  # must not raise
                continue
            with pytest.raises(IllegalAction):
                st.apply(seat, action)
        assert st.to_json() == before
        st.apply(seat, legal[rng.randbelow(len(legal))])
