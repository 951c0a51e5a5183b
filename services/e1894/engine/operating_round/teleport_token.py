"""Inside the track step: the GLG / SAC private's decision about its free token, right after
its teleport lay (the rules are :mod:`..teleport`; errata A4, A8).

The private places the token in the teleport hex or passes; either way the step the lay was
made in resumes (``t_teleport_step``: the track step, where a second lay may follow, or the
redeem step).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, LegalAction

from .. import teleport
from ..actions import Pass, PlaceToken
from .common import TELEPORT, TRACK

if TYPE_CHECKING:
    from ..state import E1894State

NAME = TELEPORT
OWN_TURN = False
WAITS_FOR_TOKEN = False
HANDLES: tuple[type[Action], ...] = (PlaceToken, Pass)


def skip(st: E1894State, ci: int) -> bool:
    """Never: the decision is always the private's."""
    return False


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """The free token in each city that may take it, or ``pass``
    (:func:`..teleport.decision_options`)."""
    return list(teleport.decision_options(st, ci))


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """The token (:func:`..teleport.place_token`, which raises) or the pass; the decision
    ends and the step of the lay resumes."""
    back = st.t_teleport_step or TRACK
    if isinstance(action, Pass):
        return teleport.decline(st, ci), back
    assert isinstance(action, PlaceToken)
    return teleport.place_token(st, ci, action), back
