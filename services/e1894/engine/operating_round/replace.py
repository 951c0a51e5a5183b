"""Inside the track step: the corporation re-places its own token that its green -> brown
split (or LRC's lay on the printed Paris) just removed, before anything else.

Spec: the 1894 rules summary, "Map, track and tokens" (the split of a green city);
designer's rules 7.3.8 for the other corporations' tokens (:mod:`.update`). The step of the
lay resumes afterwards (``t_teleport_step``): the track step, or the redeem step for LRC's lay
made there (the reference engine's redeem step stays open after the token).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, LegalAction

from .. import tokens as tokens_mod
from ..actions import PlaceToken
from ..data import CORPS
from .common import REPLACE, TRACK, wrong_step

if TYPE_CHECKING:
    from ..state import E1894State

NAME = REPLACE
OWN_TURN = False
WAITS_FOR_TOKEN = True
HANDLES: tuple[type[Action], ...] = (PlaceToken,)


def skip(st: E1894State, ci: int) -> bool:
    """No token of the corporation waits to be re-placed."""
    return not st.board.waiting_tokens(CORPS[ci].sym)


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """The cities the removed token may go to (:func:`..tokens.replacement_options`)."""
    return [
        PlaceToken(p.hex, p.city) for p in tokens_mod.replacement_options(st.board, CORPS[ci].sym)
    ]


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """Re-place the token (:func:`..tokens.replace_token` raises on a wrong city); the step of
    the lay resumes."""
    assert isinstance(action, PlaceToken)
    if action.company:
        raise wrong_step(action, NAME)
    sym = CORPS[ci].sym
    tokens_mod.replace_token(st.board, sym, action.hex, action.city)
    event = {"type": "token", "corporation": sym, "hex": action.hex, "city": action.city}
    return [event], st.t_teleport_step or TRACK
