"""Step 4 of a corporation's turn: place one station token.

Spec: designer's rules 7.3.4 "Place station marker"; the 1894 rules summary, "Map, track
and tokens" (the placement rules are :mod:`..tokens`). Skipped in the last OR set, after the
turn's token (a teleport token counts) and when no affordable city is in reach; an unused LS
token counts as a free token when the step opens (the reference's cheapest token price is
then 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, IllegalAction, LegalAction, MalformedAction

from .. import tokens as tokens_mod
from ..actions import Pass, PlaceToken
from ..data import CORPS, TELEPORT_PRIVATES
from .common import DONE, S_TRACK, TOKEN, cached, network, owns, pass_event, wrong_step

if TYPE_CHECKING:
    from ..state import E1894State

NAME = TOKEN
OWN_TURN = True
WAITS_FOR_TOKEN = False
HANDLES: tuple[type[Action], ...] = (PlaceToken, Pass)


def token_step_open(st: E1894State, ci: int) -> bool:
    """The token step waits (:func:`..tokens.token_step_open`): a token left whose price the
    corporation pays (or a free LS token), and a city in reach that takes it (cached per
    board position)."""
    sym = CORPS[ci].sym
    cost = tokens_mod.next_token_cost(st.board, sym)
    if cost is None:
        return False
    free_ls = owns(st, ci, "LS") and st.board.london_bonus_corporation() is None
    if cost > st.corp_cash[ci] and not free_ls:
        return False
    memo = st.board.token_memo if st.options.reference_token_memo else None
    if memo is not None and sym in memo:
        # option reference_token_memo: the reference's remembered answer (Board.token_memo)
        return memo[sym]
    found = cached(
        st,
        "tokenable",
        ci,
        lambda: tokens_mod.tokenable_city_in_reach(st.board, sym, network(st, ci)),
    )
    if memo is not None:
        memo[sym] = found
    return found


def skip(st: E1894State, ci: int) -> bool:
    """The last OR set, a token placed this turn, or nowhere to place one."""
    return st.final_set or st.t_tokened or not token_step_open(st, ci)


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """Every placement the corporation pays (:func:`..tokens.legal_token_placements`), then
    ``pass``."""
    out: list[LegalAction] = [
        PlaceToken(p.hex, p.city)
        for p in tokens_mod.legal_token_placements(st.board, CORPS[ci].sym, cash=st.corp_cash[ci])
    ]
    out.append(Pass())
    return out


def refuse(action: PlaceToken, step: str) -> IllegalAction | MalformedAction:
    """Why a token placement (not LS's) is refused in ``step``, when no step inside the turn
    takes it: a teleport token outside its decision, a private with no token power, or the
    wrong step."""
    if action.company in TELEPORT_PRIVATES:
        return IllegalAction(
            "no_teleport_token",
            f"{S_TRACK}: {action.company}'s free token is its decision right after its lay",
        )
    if action.company:
        return MalformedAction("unknown_special", f"{action.company} has no token power")
    return wrong_step(action, step)


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """The token (the step then skips: one per turn) or ``pass`` (the step ends).

    Raises:
        IllegalAction: ``no_teleport_token``, and the placement rules' codes
            (:func:`..tokens.check_token_placement`).
        MalformedAction: ``unknown_special``.
    """
    if isinstance(action, Pass):
        return [pass_event(ci, NAME)], DONE
    assert isinstance(action, PlaceToken)
    if action.company:
        raise refuse(action, NAME)
    sym = CORPS[ci].sym
    p = tokens_mod.check_token_placement(
        st.board, sym, action.hex, action.city, cash=st.corp_cash[ci], network=network(st, ci)
    )
    st.board.put_token(sym, action.hex, action.city)
    st.corp_cash[ci] -= p.cost
    st.t_tokened = True
    event = {
        "type": "token",
        "corporation": sym,
        "hex": action.hex,
        "city": action.city,
        "cost": p.cost,
    }
    return [event], None
