"""Setup (spec §3) and the option that picks the banker (§4)."""

from __future__ import annotations

import pytest

from services.kernel.engine import InvalidOptions
from services.railbarons.engine import GAME, data, phases


@pytest.mark.parametrize("n,cash", [(2, 60), (3, 40), (4, 30), (5, 24), (6, 20)])
def test_starting_cash(n, cash):
    """§3.6: $120 split evenly."""
    st = GAME.new_state(n, 3)
    assert st.cash == [cash] * n


def test_start_locomotives_incomes_and_supplies():
    """§3.2-§3.4, §2: one locomotive of each starting company on its start hex (19/21/25/23
    left, Wabash 11 and closed), incomes 7/6/5/8, industrial track 1/3/4, 20 houses,
    dials at start, no shares sold, empty treasuries."""
    st = GAME.new_state(4, 3)
    assert st.locos == [19, 21, 25, 23, 11]
    assert st.income == [7, 6, 5, 8, 0]
    for c in range(4):
        assert st.net[c] == 1 << data.START_HEX[c]
    assert st.net[data.WABASH] == 0
    assert st.opened == 0b01111
    assert st.ind == [1, 3, 4]
    assert st.houses == 20
    assert st.dials == [0, 0, 0]
    assert st.sold == [0] * 5 and st.treasury == [0] * 5


def test_the_banker_opens_the_prr_auction():
    """§4: the opening auction starts with PRR; the banker (seat 0 by default) opens it."""
    st = GAME.new_state(4, 3)
    assert st.phase == phases.BIDDING and st.a_kind == phases.KIND_OPENING
    assert data.COMPANY_IDS[st.a_company] == "PRR"
    assert st.active_seats() == (0,)
    st2 = GAME.new_state(4, 3, {"first_auctioneer": 2})
    assert st2.active_seats() == (2,)


def test_banker_drawn_from_the_seed():
    """§4 (first_auctioneer = null): the banker is drawn from the seed, reproducibly."""
    seats = {GAME.new_state(5, seed, {"first_auctioneer": None}).active for seed in range(40)}
    assert seats == set(range(5))
    a = GAME.new_state(5, 99, {"first_auctioneer": None})
    b = GAME.new_state(5, 99, {"first_auctioneer": None})
    assert a.to_json() == b.to_json()


def test_banker_must_be_a_seat():
    """§4: the banker is one of the players."""
    with pytest.raises(InvalidOptions):
        GAME.new_state(3, 1, {"first_auctioneer": 4})


def test_unknown_options_are_refused():
    """§14: options are a closed, validated set."""
    with pytest.raises(InvalidOptions):
        GAME.new_state(3, 1, {"no_such_option": 1})
    with pytest.raises(InvalidOptions):
        GAME.new_state(3, 1, {"build_cost_formula": "whatever"})
