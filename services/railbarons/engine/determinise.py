"""Rebuilding a full state from a view (``Game.state_from_view``).

Chicago Express hides nothing (§3.7 [S]), so the view carries the whole state and the
rebuilt state equals the real one in every public respect; the seed is not needed.
Derived bookkeeping (frontiers, hex counts, the occupied mask, a pending Chicago phase,
the opening-auction index) is recomputed from the public data.
"""

from __future__ import annotations

from typing import Any

from services.kernel.engine import MalformedAction, Result
from services.railbarons.engine import data, phases
from services.railbarons.engine.options import DIAL_NAMES, RailbaronsOptions, compile_rules
from services.railbarons.engine.state import RailbaronsState

NC = data.NUM_COMPANIES
_KIND = {name: i for i, name in enumerate(phases.AUCTION_KIND_NAMES)}
_PHASE = {name: i for i, name in enumerate(phases.PHASE_NAMES)}


def _hex(hid: str) -> int:
    h = data.HEX_INDEX.get(hid)
    if h is None:
        raise MalformedAction("bad_view", f"unknown hex {hid!r} in the view")
    return h


def state_from_view(game: Any, view: dict[str, Any]) -> RailbaronsState:
    """A :class:`RailbaronsState` equal to the one ``view`` was taken from.

    Raises:
        MalformedAction: ``view`` is not a railbarons view.
    """
    try:
        return _rebuild(game, view)
    except MalformedAction:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise MalformedAction("bad_view", f"not a railbarons view: {exc!r}") from None


def _rebuild(game: Any, view: dict[str, Any]) -> RailbaronsState:
    opts = RailbaronsOptions.model_validate(view["options"])
    rules = compile_rules(opts)
    players = view["players"]
    n = len(players)
    st = RailbaronsState.__new__(RailbaronsState)
    st.game = game
    st.num_players = n
    st.version = int(view.get("version") or 0)
    st.opts = opts
    st.rules = rules
    st.cash = [int(p["cash"]) for p in players]
    held = [0] * (n * NC)
    for s, p in enumerate(players):
        for cid, k in p["shares"].items():
            held[s * NC + data.COMPANY_INDEX[cid]] = int(k)
    st.held = held
    comps = view["companies"]
    st.treasury = [0] * NC
    st.income = [0] * NC
    st.locos = [0] * NC
    st.sold = [0] * NC
    st.net = [0] * NC
    st.front = [0] * NC
    st.opened = 0
    st.chicago = 0
    st.occ = 0
    st.count = [0] * data.NUM_HEXES
    for c, cid in enumerate(data.COMPANY_IDS):
        cv = comps[cid]
        st.treasury[c] = int(cv["treasury"])
        st.income[c] = int(cv["income"])
        st.locos[c] = int(cv["locomotives_left"])
        st.sold[c] = int(cv["shares_sold"])
        if cv["open"]:
            st.opened |= 1 << c
        if cv["reached_chicago"]:
            st.chicago |= 1 << c
        net = 0
        near = 0
        for hid in cv["hexes"]:
            h = _hex(hid)
            net |= 1 << h
            near |= data.NB_MASK[h]
            st.count[h] += 1
        st.net[c] = net
        st.front[c] = near & ~net & rules.allowed[c]
        st.occ |= net
    developed = 0
    for hid, hv in view["hexes"].items():
        if hv.get("developed"):
            developed |= 1 << _hex(hid)
    st.developed = developed
    ind = view["industrial"]
    st.ind = [int(ind[k]["value"]) for k in data.INDUSTRIAL_KEYS]
    st.houses = int(view["houses"])
    st.dials = [int(view["dials"][d]["used"]) for d in DIAL_NAMES]
    st.phase = _PHASE[view["phase"]]
    st.turn = int(view["turn"])
    active = view.get("active_seat")
    st.active = int(active) if active is not None else st.turn
    first = view.get("first_player")
    st.first_player = int(first) if first is not None else -1
    st.rounds = int(view["round"]) - 1
    st.end_reason = "+".join(view.get("end_conditions") or [])
    st.final = None
    result = view.get("result")
    if result:
        st.final = Result(
            tuple(result["scores"]), tuple(result["ranks"]), result.get("end_reason", "")
        )
    st.a_kind = phases.KIND_NONE
    st.a_company = 0
    st.a_starter = 0
    st.a_high = 0
    st.a_bidder = -1
    st.a_out = 0
    st.opening_i = len(data.INITIAL_ORDER)
    a = view.get("auction")
    if st.phase == phases.BIDDING and a:
        st.a_kind = _KIND[a["kind"]]
        st.a_company = data.COMPANY_INDEX[a["company"]]
        st.a_starter = int(a["auctioneer"])
        st.a_high = int(a["high_bid"])
        hb = a.get("high_bidder")
        st.a_bidder = int(hb) if hb is not None else -1
        out = 0
        for s in a.get("passed") or []:
            out |= 1 << int(s)
        st.a_out = out
        if st.a_kind == phases.KIND_OPENING:
            st.opening_i = data.INITIAL_ORDER.index(st.a_company)
    st.x_company = -1
    st.x_hexes = ()
    st.chi_pending = -1
    x = view.get("expansion")
    if st.phase == phases.EXPAND and x:
        if x.get("company"):
            st.x_company = data.COMPANY_INDEX[x["company"]]
        st.x_hexes = tuple(_hex(h) for h in x.get("built") or [])
        if data.CHICAGO in st.x_hexes:
            st.chi_pending = st.x_company
    return st
