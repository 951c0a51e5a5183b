"""What a seat sees, and the canonical JSON of a state.

Chicago Express has no hidden information: cash, shares, treasuries, incomes, the board and
the dials are open to everybody (§3.7 [S]). So :func:`view` is the same for every seat and
for spectators, except the ``viewer`` key naming the seat it is for. It never contains the seed (the
engine keeps none after setup).

View shape (``proto/roundhouse/v1/railbarons.proto`` message ``View``)::

    {
      "viewer": int | None,          # the seat the view is for; None for a spectator
      "phase": str,   # bidding | choose_dial | auction | expand | develop | game_over
      "round": int,                  # 1 + general dividend phases paid
      "turn": int,                   # turn player (the banker during the opening auction)
      "active_seat": int | None,     # seat to act; None once over
      "players": [{"seat": int, "cash": int, "shares": {company_id: int}}],
      "companies": {company_id: {"name": str, "open": bool, "treasury": int, "income": int,
                    "shares_total": int, "shares_sold": int, "locomotives_left": int,
                    "hexes": [hex_id], "reached_chicago": bool, "minimum_bid": int}},
      "dials": {"auction"|"develop"|"expand": {"used": int, "limit": int, "red": bool}},
      "houses": int,                 # houses in the general supply
      "industrial": {"detroit"|"wheeling"|"pittsburgh": {"hex": str, "value": int, "max": int}},
      "hexes": {hex_id: {"companies": [company_id], "developed": bool, "income": int}},
                                     # only hexes holding a locomotive or a house
      "auction": None | {"kind": "opening"|"dial"|"wabash", "company": str, "auctioneer": int,
                  "high_bid": int, "high_bidder": int | None, "passed": [int],
                  "next_bid": int},
      "expansion": None | {"company": str | None, "built": [hex_id], "remaining": int},
      "end_triggered": bool,
      "end_conditions": [str],       # locomotives | shares | houses | detroit
      "result": None | {"scores": [int], "ranks": [int], "end_reason": str},
      "version": int,                # actions applied so far
      "first_player": int | None,    # buyer of the PRR opening share (who starts play)
      "options": {option_name: value},   # the game's rule options (see options.py)
    }

:func:`state_from_view` rebuilds the full state from a view (``Game.state_from_view``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.railbarons.engine import auction, data, phases
from services.railbarons.engine.expansion import MAX_PER_ACTION, hex_income
from services.railbarons.engine.options import DIAL_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState

NC = data.NUM_COMPANIES
CIDS = data.COMPANY_IDS


def _hexes(mask: int) -> list[str]:
    return [data.HEX_IDS[h] for h in data.iter_bits(mask)]


def _company(st: RailbaronsState, c: int) -> dict[str, Any]:
    return {
        "name": data.COMPANY_NAMES[c],
        "open": bool((st.opened >> c) & 1),
        "treasury": st.treasury[c],
        "income": st.income[c],
        "shares_total": data.SHARES[c],
        "shares_sold": st.sold[c],
        "locomotives_left": st.locos[c],
        "hexes": _hexes(st.net[c]),
        "reached_chicago": bool((st.chicago >> c) & 1),
        "minimum_bid": auction.min_bid(st, c),
    }


def _auction(st: RailbaronsState) -> dict[str, Any] | None:
    if st.phase != phases.BIDDING:
        return None
    return {
        "kind": phases.AUCTION_KIND_NAMES[st.a_kind],
        "company": CIDS[st.a_company],
        "auctioneer": st.a_starter,
        "high_bid": st.a_high,
        "high_bidder": st.a_bidder if st.a_bidder >= 0 else None,
        "passed": [s for s in range(st.num_players) if (st.a_out >> s) & 1],
        "next_bid": auction.floor(st),
    }


def _expansion(st: RailbaronsState) -> dict[str, Any] | None:
    if st.phase != phases.EXPAND:
        return None
    return {
        "company": CIDS[st.x_company] if st.x_company >= 0 else None,
        "built": [data.HEX_IDS[h] for h in st.x_hexes],
        "remaining": MAX_PER_ACTION - len(st.x_hexes),
    }


def view(st: RailbaronsState, seat: int | None) -> dict[str, Any]:
    """The (public) view of the state for ``seat`` or a spectator (``None``)."""
    n = st.num_players
    over = st.phase == phases.OVER
    hexes = {}
    for h in data.iter_bits(st.occ | st.developed):
        bit = 1 << h
        hexes[data.HEX_IDS[h]] = {
            "companies": [CIDS[c] for c in range(NC) if st.net[c] & bit],
            "developed": bool(st.developed & bit),
            "income": hex_income(st, h),
        }
    limits = st.rules.dial_limits
    return {
        "viewer": seat,
        "phase": phases.PHASE_NAMES[st.phase],
        "round": st.rounds + 1,
        "turn": st.turn,
        "active_seat": None if over else st.active,
        "players": [
            {
                "seat": s,
                "cash": st.cash[s],
                "shares": {CIDS[c]: st.held[s * NC + c] for c in range(NC)},
            }
            for s in range(n)
        ],
        "companies": {CIDS[c]: _company(st, c) for c in range(NC)},
        "dials": {
            DIAL_NAMES[d]: {
                "used": st.dials[d],
                "limit": limits[d],
                "red": st.dials[d] >= limits[d],
            }
            for d in range(3)
        },
        "houses": st.houses,
        "industrial": {
            data.INDUSTRIAL_KEYS[i]: {
                "hex": data.HEX_IDS[data.INDUSTRIAL_HEX[i]],
                "value": st.ind[i],
                "max": st.rules.ind_max[i],
            }
            for i in range(3)
        },
        "hexes": hexes,
        "auction": _auction(st),
        "expansion": _expansion(st),
        "end_triggered": bool(st.end_reason),
        "end_conditions": st.end_reason.split("+") if st.end_reason else [],
        "result": st.final.to_json() if st.final is not None else None,
        "version": st.version,
        "first_player": st.first_player if st.first_player >= 0 else None,
        "options": st.opts.model_dump(mode="json"),
    }


def state_json(st: RailbaronsState) -> dict[str, Any]:
    """Canonical JSON of the whole state (equal states give equal JSON)."""
    n = st.num_players
    return {
        "title": "railbarons",
        "options": st.opts.model_dump(mode="json"),
        "num_players": n,
        "version": st.version,
        "cash": list(st.cash),
        "held": [st.held[s * NC : (s + 1) * NC] for s in range(n)],
        "treasury": list(st.treasury),
        "income": list(st.income),
        "locomotives": list(st.locos),
        "sold": list(st.sold),
        "opened": [CIDS[c] for c in range(NC) if (st.opened >> c) & 1],
        "networks": {CIDS[c]: _hexes(st.net[c]) for c in range(NC)},
        "frontiers": {CIDS[c]: _hexes(st.front[c]) for c in range(NC)},
        "developed": _hexes(st.developed),
        "industrial": list(st.ind),
        "houses": st.houses,
        "dials": list(st.dials),
        "chicago": [CIDS[c] for c in range(NC) if (st.chicago >> c) & 1],
        "phase": phases.PHASE_NAMES[st.phase],
        "turn": st.turn,
        "active": st.active,
        "auction": {
            "kind": phases.AUCTION_KIND_NAMES[st.a_kind],
            "company": CIDS[st.a_company] if st.a_kind else None,
            "starter": st.a_starter if st.a_kind else None,
            "high": st.a_high if st.a_kind else None,
            "bidder": st.a_bidder if st.a_kind else None,
            "out": st.a_out if st.a_kind else None,
        },
        "opening_i": st.opening_i,
        "first_player": st.first_player,
        "expansion": {
            "company": CIDS[st.x_company] if st.x_company >= 0 else None,
            "hexes": [data.HEX_IDS[h] for h in st.x_hexes],
        },
        "chicago_pending": CIDS[st.chi_pending] if st.chi_pending >= 0 else None,
        "rounds": st.rounds,
        "end_reason": st.end_reason,
        "result": st.final.to_json() if st.final is not None else None,
    }
