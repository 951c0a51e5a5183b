"""End of the game and the final ranking (spec §11, §10.4)."""

from __future__ import annotations

import pytest

from services.kernel.engine import IllegalAction
from services.railbarons.engine import data, end, phases
from services.railbarons.engine.tests.helpers import (
    Bid,
    Build,
    ChooseDial,
    Decline,
    Develop,
    Pass,
    StartAuction,
    decline_turn,
    lay_track,
    refuse,
    standard_opening,
    turn,
)

CI = data.COMPANY_INDEX


def _finish_round(st):
    """Decline until a General Dividend phase has run; returns all events."""
    rounds = st.rounds
    events = []
    while st.rounds == rounds and not st.is_terminal():
        seat = st.active
        legal = [a.dial for a in st.legal_actions(seat)]
        dial = "auction" if "auction" in legal else "develop"
        events += st.apply(seat, ChooseDial(dial))
        events += st.apply(seat, Decline())
    return events


def test_detroit_reaching_8_ends_the_game_after_the_next_dividend():
    """§11 / worked example: Detroit starts at 1 and rises once per dividend phase; it
    reaches 8 after the 7th and the game ends after the 8th."""
    st = standard_opening(3)
    for k in range(1, 8):
        _finish_round(st)
        assert st.ind[0] == 1 + k and not st.is_terminal()
    assert st.end_reason == "detroit"
    events = _finish_round(st)
    assert st.is_terminal() and st.rounds == 8
    assert events[-1]["type"] == "game_over"
    assert st.result().end_reason == "detroit"


def test_houses_condition():
    """§11: 3 or fewer houses in the general supply; the game goes on until the end of
    the next General Dividend phase."""
    st = standard_opening(4)
    lay_track(st, "NYC", ["R2", "Q3"])
    st.houses = 4
    seat = turn(st, "develop")
    events = st.apply(seat, Develop("Q3"))
    assert st.houses == 3
    assert {"type": "end_triggered", "conditions": ["houses"]} in events
    assert not st.is_terminal()
    _finish_round(st)
    assert st.is_terminal() and st.result().end_reason == "houses"


def test_shares_condition():
    """§11: 3 or more companies with no unsold shares."""
    st = standard_opening(4)
    for cid in ("PRR", "BO"):
        c = CI[cid]
        st.held[0 * 5 + c] += data.SHARES[c] - st.sold[c]
        st.sold[c] = data.SHARES[c]
    nyc = CI["NYC"]
    st.held[0 * 5 + nyc] += 3
    st.sold[nyc] = 4
    assert end.conditions_met(st) == []
    seat = turn(st, "auction")
    st.apply(seat, StartAuction("NYC"))
    st.apply(seat, Bid(2))
    for s in (1, 2, 3):
        st.apply(s, Pass())
    assert st.end_reason == "shares"
    assert not st.is_terminal()
    _finish_round(st)
    assert st.is_terminal()


def test_locomotives_condition():
    """§11: 3 or more companies (of all five) without locomotives on their charters."""
    st = standard_opening(4)
    st.locos[CI["BO"]] = 0
    st.locos[CI["CO"]] = 0
    assert end.conditions_met(st) == []
    st.locos[CI["PRR"]] = 1
    seat = turn(st, "expand")
    events = st.apply(seat, Build("PRR", "Q5"))
    assert st.locos[CI["PRR"]] == 0 and st.phase == phases.EXPAND
    events = st.apply(seat, st.legal_actions(seat)[0])  # done: the only move left
    assert {"type": "end_triggered", "conditions": ["locomotives"]} in events
    _finish_round(st)
    assert st.is_terminal() and st.result().end_reason == "locomotives"


def test_closed_wabash_is_not_counted_as_empty():
    """§11: an unopened Wabash still has its locomotives and shares on its charter."""
    st = standard_opening(4)
    assert st.locos[CI["WAB"]] == 11 and st.sold[CI["WAB"]] == 0
    st.locos[CI["BO"]] = st.locos[CI["CO"]] = 0
    assert "locomotives" not in end.conditions_met(st)


def test_trigger_in_the_dividend_turn_ends_after_that_phase():
    """§11/§10.4: a condition met before the phase (even in the turn that starts it) ends
    the game after that very phase."""
    st = standard_opening(4)
    for _ in range(3):
        decline_turn(st, "auction")
    for _ in range(3):
        decline_turn(st, "develop")
    st.houses = 3  # met during the next turn
    seat = turn(st, "develop")
    events = st.apply(seat, Decline())
    assert st.is_terminal() and st.rounds == 1
    assert [e["type"] for e in events][-1] == "game_over"


def test_ranking_by_cash_with_shared_ties():
    """§11 [S] (tiebreak = shared): most cash wins; tied players share the rank."""
    st = standard_opening(4)
    st.cash = [50, 70, 50, 10]
    st.end_reason = "houses"
    result = end.final_result(st)
    assert result.scores == (50, 70, 50, 10)
    assert result.ranks == (2, 1, 2, 4)


def test_tiebreak_by_shares_option():
    """§11 [S] (tiebreak = shares_held): equal cash -> more shares ranks higher."""
    st = standard_opening(4, tiebreak="shares_held")
    st.cash = [50, 70, 50, 10]
    st.held[2 * 5 + CI["PRR"]] += 1
    st.end_reason = "houses"
    assert end.final_result(st).ranks == (3, 1, 2, 4)


def test_no_moves_after_the_end_and_no_result_before():
    """§11: the game is over after the final phase; before it there is no result."""
    st = standard_opening(3)
    with pytest.raises(IllegalAction) as err:
        st.result()
    assert err.value.code == "game_not_over"
    st.houses = 3
    _finish_round(st)
    assert st.is_terminal() and st.active_seats() == ()
    assert st.legal_actions(0) == []
    refuse(st, 0, ChooseDial("auction"), "game_over", "§11")
