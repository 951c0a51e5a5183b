"""Step 1 of a corporation's turn: its home token(s), on its first turn only.

Spec: designer's rules 7.3.1 "Place home station marker"; the 1894 rules summary, "Map,
track and tokens" (the home cities; LF/LB's home chosen in the stock round). A choice of city
only arises on a split brown home; every other home token is placed without a decision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, LegalAction

from .. import tokens as tokens_mod
from ..actions import PlaceToken
from ..data import CORPS
from .common import HOME, wrong_step

if TYPE_CHECKING:
    from ..state import E1894State

NAME = HOME
OWN_TURN = False
WAITS_FOR_TOKEN = True
HANDLES: tuple[type[Action], ...] = (PlaceToken,)


def homes(st: E1894State, ci: int) -> list[str] | None:
    """The home hexes of a late corporation (LF/LB: the one chosen, or none yet); ``None``
    for the others (their homes are in the map data)."""
    if CORPS[ci].is_late:
        return [st.home[ci]] if st.home[ci] else []
    return None


def skip(st: E1894State, ci: int) -> bool:
    """Places the home tokens that need no choice; True (and the corporation is homed) when
    none needs one."""
    if st.homed[ci]:
        return True
    sym = CORPS[ci].sym
    for opts in tokens_mod.home_token_options(st.board, sym, homes(st, ci)):
        if len(opts) == 1:
            tokens_mod.place_home_token(st.board, sym, opts[0].hex, opts[0].city, automatic=True)
    if tokens_mod.home_token_options(st.board, sym, homes(st, ci)):
        return False
    st.homed[ci] = True
    return True


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """The cities of the first home that needs a choice."""
    sym = CORPS[ci].sym
    for opts in tokens_mod.home_token_options(st.board, sym, homes(st, ci)):
        if len(opts) > 1:
            return [PlaceToken(p.hex, p.city) for p in opts]
    return []


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """Place the chosen home token (:func:`.tokens.place_home_token` raises on a city that is
    not a home choice)."""
    assert isinstance(action, PlaceToken)
    if action.company:
        raise wrong_step(action, NAME)
    sym = CORPS[ci].sym
    tokens_mod.place_home_token(st.board, sym, action.hex, action.city)
    return [{"type": "token", "corporation": sym, "hex": action.hex, "city": action.city}], None
