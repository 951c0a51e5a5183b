"""The three action dials and the turn structure (spec §5)."""

from __future__ import annotations

from services.railbarons.engine import phases
from services.railbarons.engine.actions import DECLINE
from services.railbarons.engine.tests.helpers import (
    ChooseDial,
    Decline,
    decline_turn,
    refuse,
    standard_opening,
    turn,
)


def test_a_turn_is_choose_a_dial_then_act_or_decline():
    """§5: the player must advance one dial, then may act or decline (the null action)."""
    st = standard_opening(4)
    assert st.phase == phases.DIAL
    assert [a.dial for a in st.legal_actions(0)] == ["auction", "develop", "expand"]
    assert st.legal_actions(1) == []
    for dial, phase in (
        ("auction", phases.AUCTION),
        ("develop", phases.DEVELOP),
        ("expand", phases.EXPAND),
    ):
        s = st.clone()
        seat = turn(s, dial)
        assert s.phase == phase and s.active == seat
        assert s.legal_actions(seat)[0] == DECLINE
        s.apply(seat, Decline())
        assert s.phase == phases.DIAL and s.active == (seat + 1) % 4


def test_dial_limits_and_red_zone():
    """§5: Auction 3, Develop 4, Expand 5 uses; a dial in red cannot be chosen."""
    st = standard_opening(4)
    for _ in range(3):
        decline_turn(st, "auction")
    assert st.dials == [3, 0, 0] and st.dial_in_red(0)
    seat = st.active
    assert [a.dial for a in st.legal_actions(seat)] == ["develop", "expand"]
    refuse(st, seat, ChooseDial("auction"), "dial_in_red", "§5")
    for _ in range(3):
        decline_turn(st, "develop")
    assert st.dials == [3, 3, 0] and not st.dial_in_red(1)
    for _ in range(4):
        decline_turn(st, "expand")
    assert st.dials == [3, 3, 4]


def test_two_dials_in_red_start_a_dividend_phase_and_reset():
    """§5/§10: when two dials are in red at the end of a turn, a General Dividend phase
    follows and resets all three dials; play continues with the next player."""
    st = standard_opening(4)
    for _ in range(3):
        decline_turn(st, "auction")
    for _ in range(3):
        decline_turn(st, "develop")
    cash = list(st.cash)
    seat = turn(st, "develop")
    events = st.apply(seat, Decline())
    assert [e["type"] for e in events][:2] == ["declined", "general_dividend"]
    assert st.dials == [0, 0, 0] and st.rounds == 1
    assert st.cash != cash  # dividends paid
    assert st.active == (seat + 1) % 4 and st.phase == phases.DIAL


def test_one_dial_in_red_is_not_enough():
    """§5: one dial in red does not end the round."""
    st = standard_opening(3)
    for _ in range(5):
        decline_turn(st, "expand")
    assert st.rounds == 0 and st.dials == [0, 0, 5]


def test_dial_use_options():
    """§5 [U: fixed for every player count] (auction/develop/expand_dial_uses)."""
    st = standard_opening(3, auction_dial_uses=1, develop_dial_uses=1)
    decline_turn(st, "auction")
    assert st.dial_in_red(0)
    decline_turn(st, "develop")
    assert st.rounds == 1 and st.dials == [0, 0, 0]


def test_unknown_dial_is_malformed():
    """§5: there are three dials only."""
    from services.kernel.engine import MalformedAction

    st = standard_opening(3)
    before = st.to_json()
    try:
        st.apply(0, ChooseDial("build"))
    except MalformedAction as err:
        assert err.code == "unknown_dial"
    else:  # pragma: no cover
        raise AssertionError("accepted an unknown dial")
    assert st.to_json() == before


def test_choose_dial_twice_is_the_wrong_step():
    """§5: one dial per turn."""
    st = standard_opening(3)
    turn(st, "expand")
    refuse(st, 0, ChooseDial("develop"), "wrong_step", "§5")
