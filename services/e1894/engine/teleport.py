"""The GLG / SAC teleport: a tile lay in Liège (H17) / Antwerpen (D17) without connection,
then the private's decision about a free token there.

Spec: the 1894 rules summary, "Setup and auction" (the teleport private); errata A4 and A8
(reference engine behaviour):

* The owning corporation may use the teleport once per game (A8): the lay counts as one of
  its two tile lays; afterwards the power is gone.
* After the lay, if the corporation still has a token on its charter, the *private* decides
  before anything else (A4): it places the free token in the teleport hex, or passes. The
  token counts as the turn's token placement. Either way only the decision ends: the
  corporation stays in its track step and may still make its second lay. Without a token
  left there is no decision.

State: ``st.teleport_used`` (the power is spent), ``st.t_teleport`` (the private whose lay
this turn opened the decision) and the operating step :data:`TELEPORT` while the decision
is open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, IllegalAction

from . import tokens as tokens_mod
from .actions import Pass, PlaceToken
from .data import CORPS, TELEPORT_HEX

if TYPE_CHECKING:
    from .state import E1894State

TELEPORT = "teleport"
"""The operating step of the private's token decision (inside the track step)."""

S_TELEPORT = "§Map, track and tokens (GLG/SAC; errata A4, A8)"


def after_lay(st: E1894State, ci: int, private: str) -> bool:
    """The corporation ``ci`` has just laid with ``private``'s teleport: the power is spent
    (errata A8). True if the private's token decision must follow (a token is left, A4)."""
    st.teleport_used = True
    st.t_teleport = private
    return tokens_mod.tokens_left(st.board, CORPS[ci].sym) > 0


def check_unused(st: E1894State, private: str) -> None:
    """Raise ``teleport_used`` if the teleport was used already in this game (errata A8)."""
    if st.teleport_used:
        raise IllegalAction("teleport_used", f"{S_TELEPORT}: {private}'s teleport is once per game")


def decision_options(st: E1894State, ci: int) -> list[Action]:
    """The private's choices: the free token in each city of the hex that may take it, or
    ``pass``."""
    sym = CORPS[ci].sym
    private = st.t_teleport
    hex_id = TELEPORT_HEX[private]
    out: list[Action] = []
    for city in st.board.tile(hex_id).city_indices:
        try:
            tokens_mod.check_teleport_token(st.board, sym, private, hex_id, city)
        except IllegalAction:
            continue
        out.append(PlaceToken(hex_id, city, private))
    out.append(Pass())
    return out


def place_token(st: E1894State, ci: int, action: PlaceToken) -> list[Event]:
    """The private places the free token (checked before any change); the decision ends.

    Raises:
        IllegalAction: ``no_teleport_token`` (not this private's decision now), or the
            token rules' code (full city, no token left...).
    """
    sym = CORPS[ci].sym
    if action.company != st.t_teleport:
        raise IllegalAction(
            "no_teleport_token",
            f"{S_TELEPORT}: the decision is {st.t_teleport}'s, about its token in "
            f"{TELEPORT_HEX[st.t_teleport]}",
        )
    tokens_mod.check_teleport_token(st.board, sym, action.company, action.hex, action.city)
    st.board.put_token(sym, action.hex, action.city)
    st.t_tokened = True
    return [{"type": "token", "corporation": sym, "hex": action.hex, "city": action.city}]


def decline(st: E1894State, ci: int) -> list[Event]:
    """The private passes: no token; the decision ends."""
    return [{"type": "pass", "corporation": CORPS[ci].sym, "company": st.t_teleport}]
