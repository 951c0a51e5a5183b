"""Illegal and malformed moves: each is refused with its rule's reason and leaves the
state (its canonical JSON) unchanged (spec §4-§11; engine contract)."""

from __future__ import annotations

import pytest

from services.kernel.engine import IllegalAction, MalformedAction
from services.railbarons.engine import GAME, data
from services.railbarons.engine.tests.helpers import (
    Bid,
    Build,
    ChooseDial,
    Decline,
    Develop,
    Done,
    Pass,
    StartAuction,
    decline_turn,
    lay_track,
    refuse,
    standard_opening,
    turn,
)

CI = data.COMPANY_INDEX


def test_dial_in_red():
    """§5: a dial in its red zone cannot be chosen."""
    st = standard_opening(4)
    for _ in range(3):
        decline_turn(st, "auction")
    refuse(st, st.active, ChooseDial("auction"), "dial_in_red", "§5")


def test_expand_without_a_share():
    """§7: expanding needs a share of the company."""
    st = standard_opening(4)
    turn(st, "expand")
    refuse(st, 0, Build("NYC", "S4"), "no_share", "§7")


def test_non_adjacent_hex():
    """§7: the locomotive must touch the company's network."""
    st = standard_opening(4)
    turn(st, "expand")
    refuse(st, 0, Build("PRR", "K4"), "not_adjacent", "§7")


def test_forest_already_taken():
    """§7: a forest holds one company only."""
    st = standard_opening(4)
    lay_track(st, "NYC", ["R3"])
    lay_track(st, "PRR", ["R4"])
    turn(st, "expand")
    refuse(st, 0, Build("PRR", "R3"), "exclusive_terrain", "§7")


def test_not_enough_treasury():
    """§7: the treasury must pay the full cost."""
    st = standard_opening(4)
    st.treasury[CI["PRR"]] = 0
    turn(st, "expand")
    refuse(st, 0, Build("PRR", "Q5"), "insufficient_treasury", "§7")


def test_bid_below_minimum_and_above_cash():
    """§6.2, §6.5: bids between the minimum and the bidder's cash."""
    st = GAME.new_state(4, 1)
    refuse(st, 0, Bid(6), "bid_below_minimum", "§6.2")
    refuse(st, 0, Bid(31), "bid_above_cash", "§6.5")
    refuse(st, 0, Bid(-3), "bid_below_minimum", "§6.2")


def test_develop_twice():
    """§8: once per ordinary hex."""
    st = standard_opening(4)
    lay_track(st, "NYC", ["R3"])
    seat = turn(st, "develop")
    st.apply(seat, Develop("R3"))
    seat = turn(st, "develop")
    refuse(st, seat, Develop("R3"), "already_developed", "§8")


def test_develop_detroit():
    """§8: Detroit develops automatically only."""
    st = standard_opening(4)
    seat = turn(st, "develop")
    refuse(st, seat, Develop("E0"), "detroit_automatic", "§8")


def test_wrong_seat():
    """Contract: only the active seat may act."""
    st = standard_opening(4)
    before = st.to_json()
    with pytest.raises(IllegalAction) as err:
        st.apply(2, ChooseDial("auction"))
    assert err.value.code == "not_your_turn"
    assert st.to_json() == before


def test_wrong_step():
    """§5: each step of the turn accepts its own actions only."""
    st = standard_opening(4)
    refuse(st, 0, Build("PRR", "Q5"), "wrong_step", "§7")
    refuse(st, 0, StartAuction("PRR"), "wrong_step", "§6")
    refuse(st, 0, Develop("Q5"), "wrong_step", "§8")
    turn(st, "develop")
    refuse(st, 0, Pass(), "wrong_step", "§6")


def test_game_over():
    """§11: nothing is accepted after the end."""
    st = standard_opening(3)
    st.houses = 3
    while not st.is_terminal():
        seat = st.active
        st.apply(seat, st.legal_actions(seat)[-1])
    refuse(st, 0, ChooseDial("expand"), "game_over", "§11")


@pytest.mark.parametrize(
    "action,code",
    [
        (StartAuction("ERIE"), "unknown_company"),
        (Build("XYZ", "Q5"), "unknown_company"),
        (Build("PRR", "Z9"), "unknown_hex"),
        (Develop("A1"), "unknown_hex"),  # Lake Michigan: not a hex of the map
        (ChooseDial("build"), "unknown_dial"),
    ],
)
def test_unknown_company_hex_or_dial_is_malformed(action, code):
    """Contract: ids that do not exist are MalformedAction, and change nothing."""
    st = standard_opening(4)
    if isinstance(action, (StartAuction,)):
        turn(st, "auction")
    elif isinstance(action, Build):
        turn(st, "expand")
    elif isinstance(action, Develop):
        turn(st, "develop")
    before = st.to_json()
    with pytest.raises(MalformedAction) as err:
        st.apply(st.active, action)
    assert err.value.code == code
    assert st.to_json() == before


def test_foreign_action_object_is_malformed():
    """Contract: an Action of another title is malformed."""
    import dataclasses
    from typing import ClassVar

    from services.kernel.engine import Action

    @dataclasses.dataclass(frozen=True, slots=True)
    class Other(Action):
        TYPE: ClassVar[str] = "other"

    st = standard_opening(4)
    with pytest.raises(MalformedAction):
        st.apply(0, Other())


def test_codec_refuses_bad_fields():
    """Contract: the JSON form is checked field by field."""
    for bad in (
        {"type": "bid"},
        {"type": "bid", "amount": "7"},
        {"type": "bid", "amount": True},
        {"type": "build", "company": "PRR"},
        {"type": "pass", "amount": 1},
    ):
        with pytest.raises(MalformedAction):
            GAME.parse_action(bad)


@pytest.mark.parametrize("dial", [["auction"], None, 2])
def test_a_dial_that_is_not_a_name_is_malformed(dial):
    """§5 / contract: a ``choose_dial`` whose dial is not a string is MalformedAction
    (``unknown_dial``), not a crash, and changes nothing."""
    st = standard_opening(4)
    before = st.to_json()
    with pytest.raises(MalformedAction) as err:
        st.apply(0, ChooseDial(dial))
    assert err.value.code == "unknown_dial"
    assert st.to_json() == before


def test_decline_done_and_develop_at_the_wrong_step():
    """§5/§7/§8: ``decline`` only after a dial, ``done`` only inside an expansion,
    ``develop`` only after the Develop dial; each refused with its section, nothing
    changed."""
    st = standard_opening(4)
    refuse(st, 0, Decline(), "wrong_step", "§5")
    refuse(st, 0, Done(), "wrong_step", "§7")
    turn(st, "auction")
    refuse(st, 0, Develop("Q5"), "wrong_step", "§8")
    refuse(st, 0, Done(), "wrong_step", "§7")
    st.apply(0, StartAuction("PRR"))
    refuse(st, 0, Decline(), "wrong_step", "§5")
    refuse(st, 0, ChooseDial("expand"), "wrong_step", "§5")


@pytest.mark.parametrize("amount", ["7", 7.0, True, None])
def test_a_bid_that_is_not_an_integer_is_malformed(amount):
    """§6 / contract: a bid amount must be a whole number of dollars; anything else is
    MalformedAction and changes nothing."""
    st = GAME.new_state(4, 1)
    before = st.to_json()
    with pytest.raises(MalformedAction) as err:
        st.apply(0, Bid(amount))
    assert err.value.code == "bad_field"
    assert st.to_json() == before


@pytest.mark.parametrize("n", [0, 1, 7])
def test_player_counts_outside_2_to_6_are_refused(n):
    """§1/§2: Chicago Express takes 2 to 6 players."""
    from services.kernel.engine import InvalidOptions

    with pytest.raises(InvalidOptions):
        GAME.new_state(n, 1)
