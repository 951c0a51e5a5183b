"""Game end and scores (spec "Game end", "Replay semantics" step 5)."""

from __future__ import annotations

from ..gamedata import MARKET, PRIVATES
from ..market import price
from .flow_helpers import FINAL, at, fixture
from .flow_helpers import MARKET as MARKET_GAME


def _score(st, seat):
    total = st.cash[seat]
    for ci in range(len(st.holdings)):
        if st.row[ci] >= 0:
            total += st.holdings[ci][seat] // 10 * price(st, ci)
    total += sum(PRIVATES[pi].value for pi, o in enumerate(st.private_owner) if o == seat)
    return total


def test_450_ends_the_game_at_once():
    """§Game end: a share price on the 450 cell ends the game immediately."""
    st = at(MARKET_GAME)
    assert st.is_terminal() and st.result().end_reason == "stock_market"
    assert any(
        st.row[ci] >= 0 and MARKET.is_endgame(st.row[ci], st.col[ci]) for ci in range(len(st.row))
    )
    assert st.active_seats() == () and st.legal_actions(0) == []


def test_one_more_full_or_set_after_the_first_d():
    """§Game end: the set with the first D finishes, then a SR, then one more full OR set
    without track and tokens; then the game ends (final_phase)."""
    st = at(FINAL)
    assert st.is_terminal() and st.result().end_reason == "final_phase"
    assert st.final_set and st.or_num == st.or_total == 3


def test_scores_are_cash_shares_and_privates():
    """§Game end: cash + shares at market value + face value of privates still held; the
    recorded results are reproduced."""
    for name in (FINAL, MARKET_GAME):
        st = at(name)
        ids = [p["id"] for p in fixture(name)["players"]]
        assert [_score(st, s) for s in range(st.num_players)] == list(st.result().scores)
        assert {str(ids[s]): v for s, v in enumerate(st.result().scores)} == {
            str(k): v for k, v in fixture(name)["result"].items()
        }
