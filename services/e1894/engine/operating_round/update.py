"""Step 9 of a corporation's turn: update station markers.

Spec: designer's rules 7.3.8 "Update station markers"; the 1894 rules summary, "Map, track
and tokens". The other corporations whose tokens the operating corporation's green -> brown
splits removed re-place them now, one at a time in the current operating order by price
(reference engine); each decides for itself (its president acts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, LegalAction

from .. import tokens as tokens_mod
from ..actions import PlaceToken
from ..data import CORPS
from ..market import operating_order
from .common import UPDATE, wrong_step

if TYPE_CHECKING:
    from ..state import E1894State

NAME = UPDATE
OWN_TURN = False
WAITS_FOR_TOKEN = True
HANDLES: tuple[type[Action], ...] = (PlaceToken,)


def update_corp(st: E1894State) -> int:
    """The corporation re-placing a token removed by a split now: the first, in the current
    operating order by price (reference engine), with a token waiting; -1 if none."""
    waiting = {c for c, _ in st.board.waiting_tokens()}
    for ci in operating_order(st):
        if CORPS[ci].sym in waiting:
            return ci
    return -1


def skip(st: E1894State, ci: int) -> bool:
    """No token waits: the operating corporation's turn is over."""
    return update_corp(st) < 0


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """The cities the waiting corporation's token may go to."""
    cj = update_corp(st)
    return [
        PlaceToken(p.hex, p.city) for p in tokens_mod.replacement_options(st.board, CORPS[cj].sym)
    ]


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """The waiting corporation re-places its token (:func:`..tokens.replace_token` raises on
    a wrong city); the step goes on while tokens wait."""
    assert isinstance(action, PlaceToken)
    sym = CORPS[update_corp(st)].sym
    if action.company:
        raise wrong_step(action, NAME)
    tokens_mod.replace_token(st.board, sym, action.hex, action.city)
    return [{"type": "token", "corporation": sym, "hex": action.hex, "city": action.city}], None
