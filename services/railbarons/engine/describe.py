"""Chicago Express moves and seats in words (``Game.describe`` / ``Game.summarize_view``).

Terms are the rulebook's (``railbarons.md``): dial, auction, share, bid, expansion,
locomotive, development, house. Company ids are the data file's (``PRR``, ``BO``, ``CO``,
``NYC``, ``WAB``); hexes are named by id and, where the map names them, by city. Everything
in Chicago Express is public (§3.7), so a label never hides anything.

>>> from services.railbarons.engine import GAME
>>> state = GAME.new_state(4, seed=1)
>>> [GAME.describe(state, a) for a in state.legal_actions(0)][:3]
['Pass (PRR opening auction)', 'Bid $7 on PRR', 'Bid $8 on PRR']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.kernel.engine import Action, ActionRange, LegalAction
from services.railbarons.engine import actions as A
from services.railbarons.engine import data, phases
from services.railbarons.engine.auction import min_bid
from services.railbarons.engine.expansion import build_cost, hex_income
from services.railbarons.engine.options import DIAL_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState

_DIAL_VERB = {"auction": "Auction", "develop": "Develop", "expand": "Expand"}
_KIND = {
    phases.KIND_OPENING: "opening auction",
    phases.KIND_NORMAL: "auction",
    phases.KIND_WABASH: "Wabash auction",
}


def hex_text(hex_id: str) -> str:
    """``"K4 (Pittsburgh)"`` for a named hex, else the id alone."""
    name = data.HEX_NAMES[data.HEX_INDEX[hex_id]] if hex_id in data.HEX_INDEX else None
    return f"{hex_id} ({name})" if name else hex_id


def describe(st: RailbaronsState, action: LegalAction) -> str:
    """One move of ``st`` in words (``st``: a RailbaronsState; ``action`` legal there, or a
    range of bids). Raises nothing for a well-formed action; an unknown type gets its
    compact form."""
    if isinstance(action, ActionRange):
        if isinstance(action.action, A.Bid):
            return f"Bid ${action.min}-${action.max} on {data.COMPANY_IDS[st.a_company]}"
        return str(action)
    return _plain(st, action)


def _plain(st: RailbaronsState, a: Action) -> str:
    if isinstance(a, A.Bid):
        return f"Bid ${a.amount} on {data.COMPANY_IDS[st.a_company]}"
    if isinstance(a, A.Pass):
        kind = _KIND.get(st.a_kind, "auction")
        return f"Pass ({data.COMPANY_IDS[st.a_company]} {kind})"
    if isinstance(a, A.ChooseDial):
        d = DIAL_NAMES.index(a.dial) if a.dial in DIAL_NAMES else -1
        if d < 0:
            return str(a)
        used, limit = st.dials[d], st.rules.dial_limits[d]
        return f"Advance the {_DIAL_VERB[a.dial]} dial (use {used + 1} of {limit})"
    if isinstance(a, A.StartAuction):
        c = data.COMPANY_INDEX.get(a.company)
        if c is None:
            return str(a)
        return f"Auction a {a.company} share (minimum bid ${min_bid(st, c)})"
    if isinstance(a, A.Build):
        h = data.HEX_INDEX.get(a.hex)
        if h is None:
            return str(a)
        income = hex_income(st, h)
        gain = f", income +${income}" if income else ""
        return f"Build a {a.company} locomotive on {hex_text(a.hex)} for ${build_cost(st, h)}{gain}"
    if isinstance(a, A.Done):
        return "End the expansion"
    if isinstance(a, A.Decline):
        dial = "Expand" if st.phase == phases.EXPAND else "Develop"
        if st.phase == phases.AUCTION:
            dial = "Auction"
        return f"Do nothing (skip the {dial} action)"
    if isinstance(a, A.Develop):
        return f"Develop {hex_text(a.hex)}"
    return str(a)


def summarize_view(view: dict[str, Any]) -> list[str]:
    """One line per seat from a railbarons view: cash, shares held, who is to act.

    >>> from services.railbarons.engine import GAME
    >>> GAME.summarize_view(GAME.new_state(3, seed=1).view(None), 3)[0]
    'Seat 0: $40 cash, no shares (to act)'
    """
    active = view.get("active_seat")
    out = []
    for p in view["players"]:
        shares = ", ".join(f"{c} {n}" for c, n in p["shares"].items() if n)
        held = f"shares {shares}" if shares else "no shares"
        line = f"Seat {p['seat']}: ${p['cash']} cash, {held}"
        if p["seat"] == active:
            line += " (to act)"
        out.append(line)
    return out
