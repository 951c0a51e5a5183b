"""Invariants over random games (hypothesis): bookkeeping always agrees with a
recomputation from scratch (spec §6-§11), money is conserved, views rebuild the state."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from services.kernel.engine import IllegalAction
from services.kernel.rng import SeededRandom
from services.railbarons.engine import GAME, data, expansion, phases
from services.railbarons.engine.tests.helpers import steered_policy

NC = data.NUM_COMPANIES

OPTION_STRATEGIES = {
    "first_auctioneer": hs.none() | hs.just(0),
    "start_incomes": hs.sampled_from(["condensed_rules", "digitisation"]),
    "initial_auction_no_bid": hs.sampled_from(["stays_unsold", "starter_must_bid"]),
    "initial_auction_next_starter": hs.sampled_from(["previous_buyer", "clockwise"]),
    "auction_dial_uses": hs.integers(1, 3),
    "develop_dial_uses": hs.integers(1, 4),
    "expand_dial_uses": hs.integers(1, 5),
    "auctioneer_must_open": hs.booleans(),
    "bid_increment": hs.integers(1, 3),
    "unsold_auction_spends_dial": hs.booleans(),
    "build_cost_formula": hs.sampled_from(
        ["multiply", "add_one_per_company", "count_multiplier", "doubling"]
    ),
    "start_hexes_exclusive": hs.booleans(),
    "develop_requires_share": hs.booleans(),
    "development_cost": hs.integers(0, 2),
    "forest_development_cash": hs.integers(0, 3),
    "detroit_step": hs.integers(1, 2),
    "wheeling_step": hs.integers(1, 2),
    "wheeling_max": hs.integers(3, 7),
    "pittsburgh_step": hs.integers(1, 3),
    "pittsburgh_max": hs.integers(4, 9),
    "industrial_development_uses_house": hs.booleans(),
    "wabash_start_income": hs.integers(1, 3),
    "wabash_start_locomotive_from_supply": hs.booleans(),
    "wabash_auction_uses_dial": hs.booleans(),
    "dividend_rounding": hs.sampled_from(["up", "down"]),
    "tiebreak": hs.sampled_from(["shared", "shares_held"]),
}
OPTIONS = hs.fixed_dictionaries({}, optional=OPTION_STRATEGIES)
"""Every rule option of :class:`RailbaronsOptions` (spec §14), drawn independently."""


def test_the_strategy_draws_every_option():
    """§14: the invariant tests below vary every option the engine has."""
    from services.railbarons.engine.options import RailbaronsOptions

    assert set(OPTION_STRATEGIES) == set(RailbaronsOptions.model_fields)


def _connected(mask: int, start: int) -> bool:
    seen = 1 << start
    todo = [start]
    while todo:
        h = todo.pop()
        for n in data.NEIGHBOURS[h]:
            if mask >> n & 1 and not seen >> n & 1:
                seen |= 1 << n
                todo.append(n)
    return seen == mask


def check_invariants(st) -> None:
    """Every piece of incremental bookkeeping equals its recomputation."""
    rules = st.rules
    occ = 0
    count = [0] * data.NUM_HEXES
    for c in range(NC):
        net = st.net[c]
        if not st.opened >> c & 1:
            assert net == 0
            continue
        start = data.START_HEX[c]
        assert net >> start & 1 and _connected(net, start)
        income = rules.start_income[c] + sum(
            expansion.hex_income(st, h) for h in data.iter_bits(net) if h != start
        )
        assert st.income[c] == income, data.COMPANY_IDS[c]
        near = 0
        for h in data.iter_bits(net):
            near |= data.NB_MASK[h]
            count[h] += 1
        assert st.front[c] == near & ~net & rules.allowed[c]
        occ |= net
        extra = c == data.WABASH and not rules.wabash_loco_from_supply
        assert st.locos[c] + bin(net).count("1") == data.LOCOMOTIVES[c] + extra
        assert st.locos[c] >= 0
        assert sum(st.held[s * NC + c] for s in range(st.num_players)) == st.sold[c]
        assert st.sold[c] <= data.SHARES[c]
        assert st.treasury[c] >= 0
    assert st.occ == occ and st.count == count
    for h in data.iter_bits(data.EXCLUSIVE_MASK & occ):
        assert count[h] == 1
    assert all(x >= 0 for x in st.cash)
    assert st.houses >= 0
    assert all(0 <= st.dials[d] <= rules.dial_limits[d] for d in range(3))
    if st.phase == phases.DIAL:
        # §5: a General Dividend phase follows every turn ending with two dials in red
        assert sum(st.dials[d] >= rules.dial_limits[d] for d in range(3)) <= 1
        # §9: a Chicago phase was held for exactly the companies in Chicago
        in_chicago = sum(1 << c for c in range(NC) if st.net[c] >> data.CHICAGO & 1)
        assert st.chicago == in_chicago
    # §9.2: the Wabash opens with the first Chicago phase
    assert bool(st.opened >> data.WABASH & 1) == bool(st.chicago)
    # §8/§10.3: Detroit moves one step per General Dividend phase, never otherwise
    assert st.ind[data.DETROIT] == min(
        data.DETROIT_MAX,
        data.INDUSTRIAL_START[data.DETROIT] + st.rounds * rules.ind_step[data.DETROIT],
    )


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=hs.integers(0, 2**40),
    n=hs.integers(2, 6),
    options=OPTIONS,
    steered=hs.booleans(),
)
def test_bookkeeping_and_money_over_random_games(seed, n, options, steered):
    """§5-§11: incomes = start income + current hex incomes; frontiers, counts, shares and
    locomotives agree with the board; money only moves as the rules say; one Chicago
    phase per company and the Wabash opens with the first; Detroit moves once per
    dividend phase; the game ends exactly after the first General Dividend phase that
    starts with an end condition met (§10.4, §11); clones and rebuilt views equal the
    state. Half the games use the Chicago-bound steered policy, so that Chicago phases
    and Wabash auctions occur under every option."""
    st = GAME.new_state(n, seed, options)
    rng = SeededRandom(seed)
    policy = steered_policy(seed) if steered else None
    money = sum(st.cash) + sum(st.treasury)
    houses_used = 0
    chicago_phases: list[str] = []
    triggered = False
    step = 0
    while not st.is_terminal():
        seat = st.active
        if policy is None:
            legal = st.legal_actions(seat)
            action = legal[rng.randbelow(len(legal))]
        else:
            action = policy(st, seat)
        events = st.apply(seat, action)
        ending_phase = None
        for e in events:
            kind = e["type"]
            if kind == "dividend":
                money += sum(e["paid"])
            elif kind == "built":
                money -= e["cost"]
            elif kind == "developed":
                money += e.get("treasury_gain", 0) - st.rules.dev_cost
                houses_used += 1
            elif kind == "industrial_advanced" and "seat" in e:
                money -= st.rules.dev_cost
                houses_used += st.rules.ind_uses_house
            elif kind == "chicago_phase":
                assert e["company"] not in chicago_phases
                assert e["first"] == (not chicago_phases)
                chicago_phases.append(e["company"])
            elif kind == "end_triggered":
                assert not triggered
                triggered = True
            elif kind == "general_dividend":
                ending_phase = triggered
            elif kind == "game_over":
                assert ending_phase is True
        if ending_phase:
            assert st.is_terminal() and events[-1]["type"] == "game_over"
        assert triggered == bool(st.end_reason)
        assert sum(st.cash) + sum(st.treasury) == money
        assert st.houses == data.HOUSES_IN_SUPPLY - houses_used
        check_invariants(st)
        if step % 23 == 0:
            assert st.clone().to_json() == st.to_json()
            rebuilt = GAME.state_from_view(st.view(None), None, 0)
            assert rebuilt.to_json() == st.to_json()
        step += 1
    result = st.result()
    assert list(result.scores) == st.cash
    assert st.end_reason and st.rounds <= 8
    assert 0 <= st.turn < n


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
        hexes = set(data.iter_bits(st.front[c])) | {rng.randbelow(data.NUM_HEXES)}
        for h in hexes:
            out.append(A.BUILD_ACTIONS[c * data.NUM_HEXES + h])
    for h in set(data.iter_bits(st.occ)) | {rng.randbelow(data.NUM_HEXES)}:
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
