"""Views (spec §3.7: everything is public) and the rebuilt state (state_from_view)."""

from __future__ import annotations

import json

import pytest

from services.kernel.engine import MalformedAction
from services.railbarons.engine import GAME
from services.railbarons.engine.tests.helpers import (
    Build,
    lay_track,
    path,
    standard_opening,
    steered_policy,
    turn,
)


def test_views_are_equal_for_every_seat_but_the_viewer_key():
    """§3.7 [S]: holdings and money are open information."""
    st = standard_opening(4)
    spectator = st.view(None)
    assert spectator["viewer"] is None
    for seat in range(4):
        v = st.view(seat)
        assert v["viewer"] == seat
        assert {**v, "viewer": None} == spectator


def test_view_content():
    """The view shows cash, shares, companies, dials, houses, industrial track and hexes."""
    st = standard_opening(4)
    lay_track(st, "PRR", ["Q5"])
    turn(st, "expand")
    st.apply(0, Build("PRR", "P5"))
    v = st.view(2)
    assert v["phase"] == "expand" and v["active_seat"] == 0 and v["turn"] == 0
    assert v["players"][0] == {
        "seat": 0,
        "cash": 23,
        "shares": {"PRR": 1, "BO": 0, "CO": 0, "NYC": 0, "WAB": 0},
    }
    prr = v["companies"]["PRR"]
    assert prr["hexes"] == ["P5", "Q5", "R5"] and prr["treasury"] == 7 - 1
    assert prr["minimum_bid"] == 4 and prr["open"] and not v["companies"]["WAB"]["open"]
    assert v["dials"]["expand"] == {"used": 1, "limit": 5, "red": False}
    assert v["expansion"] == {"company": "PRR", "built": ["P5"], "remaining": 2}
    assert v["auction"] is None
    assert v["hexes"]["Q5"] == {"companies": ["PRR"], "developed": False, "income": 0}
    assert v["industrial"]["pittsburgh"] == {"hex": "K4", "value": 4, "max": 8}
    assert v["houses"] == 20 and v["round"] == 1 and v["result"] is None
    assert v["options"]["build_cost_formula"] == "multiply"


def test_state_from_view_rebuilds_everything_through_a_game():
    """Game.state_from_view: the rebuilt state equals the real one (nothing is hidden),
    including mid-auction, mid-expansion with a pending Chicago phase, and the end."""
    st = GAME.new_state(4, 31)
    policy = steered_policy(31)
    seen_phases = set()
    while True:
        v = json.loads(json.dumps(st.view(st.active if not st.is_terminal() else None)))
        rebuilt = GAME.state_from_view(v, None, 0)
        assert rebuilt.to_json() == st.to_json()
        seen_phases.add(v["phase"])
        if st.is_terminal():
            break
        seat = st.active
        assert rebuilt.legal_actions(seat) == st.legal_actions(seat)
        st.apply(seat, policy(st, seat))
    assert seen_phases == {"bidding", "choose_dial", "auction", "expand", "develop", "game_over"}


def test_state_from_view_refuses_other_things():
    """A non-view is malformed."""
    with pytest.raises(MalformedAction):
        GAME.state_from_view({"phase": "x"}, None, 0)


def test_pending_chicago_phase_survives_a_rebuild():
    """§9: a Chicago build mid-action is recovered from the view's expansion."""
    st = standard_opening(4)
    lay_track(st, "PRR", path("PRR", "B2"))
    st.treasury[0] = 30
    turn(st, "expand")
    st.apply(0, Build("PRR", "A2"))
    rebuilt = GAME.state_from_view(st.view(0), 0, 0)
    assert rebuilt.chi_pending == 0
    assert rebuilt.to_json() == st.to_json()
