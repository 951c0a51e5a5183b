"""Step 6 of a corporation's turn: pay out or withhold the revenue.

Spec: designer's rules 7.3.6 "Pay or withhold dividends" and 10.2; the 1894 rules summary
"Shares and the stock market". No revenue withholds by itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, LegalAction, MalformedAction

from ..actions import Dividend
from ..data import CORPS, MAJOR_PRIVATE_OF, PRIVATE_INDEX
from ..market import move_left, move_right
from ..privates import close_private
from .common import DIVIDEND, DONE

if TYPE_CHECKING:
    from ..state import E1894State

NAME = DIVIDEND
OWN_TURN = True
WAITS_FOR_TOKEN = False
HANDLES: tuple[type[Action], ...] = (Dividend,)


def skip(st: E1894State, ci: int) -> bool:
    """No revenue: withheld (price left) without a decision."""
    if st.t_revenue > 0:
        return False
    pay(st, ci, "withhold")
    return True


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """``payout`` and ``withhold``."""
    return [Dividend("payout"), Dividend("withhold")]


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """The chosen kind (:func:`pay`); the step ends.

    Raises:
        MalformedAction: ``bad_kind``.
    """
    assert isinstance(action, Dividend)
    if action.kind not in ("payout", "withhold"):
        raise MalformedAction("bad_kind", "dividend kind is 'payout' or 'withhold'")
    return pay(st, ci, action.kind), DONE


def pay(st: E1894State, ci: int, kind: str) -> list[Event]:
    """Pay out (per 10%: revenue / 10; Treasury and redeemed shares pay the corporation, pool
    shares nobody; price right) or withhold (all to the corporation; price left). Then the
    corporation has operated: its major shareholding closes."""
    rev = st.t_revenue
    sym = CORPS[ci].sym
    if kind == "payout":
        for seat in range(st.num_players):
            pct = st.holdings[ci][seat]
            if pct:
                st.cash[seat] += rev * pct // 100
        st.corp_cash[ci] += rev * (st.ipo[ci] + st.redeemed[ci]) // 100
        move_right(st, ci)
    else:
        st.corp_cash[ci] += rev
        move_left(st, ci)
    st.operated[ci] = True
    major = MAJOR_PRIVATE_OF.get(sym)
    if major:
        close_private(st, PRIVATE_INDEX[major])
    return [{"type": "dividend", "corporation": sym, "kind": kind, "revenue": rev}]
