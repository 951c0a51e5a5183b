"""Step 8 of a corporation's turn: the final buy-companies step (reference engine, errata
A5).

Privates may be bought all turn long (:mod:`.anytime`); this step only gives the corporation
a last chance after its trains. It waits for ``pass`` only when the corporation can buy a
private now (the phase allows it, a player owns a private that may be sold to corporations
and the cheapest minimum price is within its cash), or it owns LS and could still use the
free A12 token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, LegalAction

from .. import tokens as tokens_mod
from ..actions import Pass
from ..data import CORPS, PHASES
from ..privates import buyable_by_corps, price_range
from .common import BUY_COMPANY, DONE, owns, pass_event

if TYPE_CHECKING:
    from ..state import E1894State

NAME = BUY_COMPANY
OWN_TURN = True
WAITS_FOR_TOKEN = False
HANDLES: tuple[type[Action], ...] = (Pass,)


def company_step_open(st: E1894State, ci: int) -> bool:
    """The step waits (errata A5): an affordable private a player may sell, or LS's unused
    free token with a token on the charter. Having bought a private earlier in the turn does
    not hold it."""
    if (
        owns(st, ci, "LS")
        and st.board.london_bonus_corporation() is None
        and tokens_mod.tokens_left(st.board, CORPS[ci].sym) > 0
    ):
        return True
    if not PHASES[st.phase].can_buy:
        return False
    privates = buyable_by_corps(st)
    return bool(privates) and min(price_range(pi)[0] for pi in privates) <= st.corp_cash[ci]


def skip(st: E1894State, ci: int) -> bool:
    """Nothing to buy and no LS token to use."""
    return not company_step_open(st, ci)


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """``pass`` (the purchases themselves are :func:`.anytime.legal`)."""
    return [Pass()]


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """``pass``: the step ends."""
    return [pass_event(ci, NAME)], DONE
