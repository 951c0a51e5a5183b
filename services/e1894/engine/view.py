"""What a seat sees of an 1894 position, and the canonical JSON of a state.

1894 has no hidden information and no randomness after the setup, so :func:`view` is the
whole state (:func:`state_json`: the seed is never part of it) plus ``viewer``, the seat the
view is for (``None`` for a spectator); :func:`state_from_json` rebuilds a state from any view
(``Game.state_from_view``). Shape: ``proto/roundhouse/v1/e1894.proto`` message ``View``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import JSON, MalformedAction

from .board import Board
from .data import CORP_INDEX, CORPS, PHASES, PRIVATE_INDEX, PRIVATES
from .market import price
from .privates import CLOSED, CORP_OWNER, UNSOLD
from .trains import depot_train_id

if TYPE_CHECKING:  # pragma: no cover
    from .game import E1894Game
    from .options import E1894Options
    from .state import E1894State

NUM_CORPS = len(CORPS)


def view(st: E1894State, seat: int | None) -> dict[str, JSON]:
    """What ``seat`` (or a spectator, ``None``) sees: :func:`state_json` and
    ``"viewer"``, the seat (``None`` for a spectator)."""
    v = state_json(st)
    v["viewer"] = seat
    return v


def state_json(st: E1894State) -> dict[str, JSON]:
    """The canonical JSON of the whole state (:meth:`E1894State.to_json`); the seed is never
    part of it (nothing random is left after the setup)."""
    n = st.num_players
    corps = {}
    for ci, info in enumerate(CORPS):
        corps[info.sym] = {
            "cash": st.corp_cash[ci],
            "par": st.par[ci],
            "row": st.row[ci],
            "col": st.col[ci],
            "price": price(st, ci) if st.row[ci] >= 0 else 0,
            "stamp": st.stamp[ci],
            "floated": st.floated[ci],
            "operated": st.operated[ci],
            "homed": st.homed[ci],
            "home": st.home[ci],
            "president": st.president[ci],
            "treasury": st.ipo[ci],
            "pool": st.pool[ci],
            "redeemed": st.redeemed[ci],
            "holdings": list(st.holdings[ci]),
            "trains": list(st.trains[ci]),
        }
    privates = {}
    for pi, pinfo in enumerate(PRIVATES):
        owner = st.private_owner[pi]
        privates[pinfo.sym] = {
            "status": "closed" if owner == CLOSED else "unsold" if owner == UNSOLD else "owned",
            "player": owner if 0 <= owner < CORP_OWNER else -1,
            "corporation": CORPS[owner - CORP_OWNER].sym if owner >= CORP_OWNER else "",
        }
    bids = [
        {"company": PRIVATES[pi].sym, "seat": s, "price": p}
        for pi, lst in st.auc_bids.items()
        for s, p in lst
    ]
    active = st.active_seats()
    return {
        "num_players": n,
        "options": st.options.model_dump(),
        "version": st.version,
        "round": st.round,
        "phase": PHASES[st.phase].name,
        "active_seats": list(active),
        "acting_corporation": st.acting_corporation(),
        "order": list(st.order),
        "cash": list(st.cash),
        "corporations": corps,
        "privates": privates,
        "starting_corporations": [CORPS[ci].sym for ci in st.starting_corps],
        "depot": {
            "left": list(st.depot_left),
            "next": list(st.depot_next),
            "next_train": depot_train_id(st),
        },
        "stamp_counter": st.stamp_counter,
        "late_available": st.late_available,
        "last_set_triggered": st.last_set_triggered,
        "final_set": st.final_set,
        "lrc_used": st.lrc_used,
        "teleport_used": st.teleport_used,
        "end_reason": st.end_reason,
        "bankrupt_seat": st.bankrupt_seat,
        "auction": {
            "companies": [PRIVATES[pi].sym for pi in st.auc_companies],
            "bids": bids,
            "discount": st.auc_discount,
            "turn": st.auc_turn,
            "passes": st.auc_passes,
            "auctioning": PRIVATES[st.auc_auctioning].sym if st.auc_auctioning >= 0 else "",
            "pending_par": [{"seat": s, "corporation": CORPS[ci].sym} for s, ci in st.pending_par],
        },
        "stock": {
            "number": st.sr_number,
            "turn": st.sr_turn,
            "acted": st.sr_acted,
            "buys": st.sr_buys,
            "buy_corporation": CORPS[st.sr_buy_corp].sym if st.sr_buy_corp >= 0 else "",
            "sold": [
                {"corporations": [CORPS[ci].sym for ci in range(NUM_CORPS) if m >> ci & 1]}
                for m in st.sr_sold
            ],
            "passed": list(st.sr_passed),
            "pass_order": list(st.sr_pass_order),
            "pending_home": CORPS[st.pending_home].sym if st.pending_home >= 0 else "",
        },
        "operating": {
            "number": st.or_num,
            "total": st.or_total,
            "order": [CORPS[ci].sym for ci in st.or_order],
            "position": st.or_pos,
            "step": st.step,
            "laid": [{"hex": h, "upgrade": u} for h, u in st.t_laid],
            "tokened": st.t_tokened,
            "redeemed": st.t_redeemed,
            "revenue": st.t_revenue,
            "routes": list(st.t_routes),
            "traded": st.t_traded,
            "teleport": st.t_teleport,
            "bought_company": st.t_bought_company,
            "reissued": st.t_reissued,
            "sale_price": st.t_sale_price,
            "lrc_hex": st.t_lrc_hex,
            "teleport_step": st.t_teleport_step,
            "discard": [CORPS[ci].sym for ci in st.discard],
        },
        "board": board_to_view(st.board),
        "scores": st.scores(),
    }


def state_from_json(
    cls: type[E1894State], game: E1894Game, obj: dict[str, JSON], options: E1894Options
) -> E1894State:
    """Rebuild a state of class ``cls`` from :func:`state_json` (or a view); ``obj``'s own
    ``options`` win over ``options``.

    Raises:
        MalformedAction: ``obj`` is not an 1894 view (``"bad_view"``).
    """
    try:
        return _from_json(cls, game, obj, options)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise MalformedAction("bad_view", f"not an 1894 view: {exc!r}") from None


def _from_json(
    cls: type[E1894State], game: E1894Game, obj: dict[str, JSON], options: E1894Options
) -> E1894State:
    n = int(obj["num_players"])
    if "options" in obj:
        options = game.parse_options(obj["options"])
    st = cls.blank(game, n, options)
    st.version = int(obj["version"])
    st.round = obj["round"]
    st.phase = [p.name for p in PHASES].index(obj["phase"])
    st.order = [int(x) for x in obj["order"]]
    st.cash = [int(x) for x in obj["cash"]]
    for sym, c in obj["corporations"].items():
        ci = CORP_INDEX[sym]
        st.corp_cash[ci] = c["cash"]
        st.par[ci] = c["par"]
        st.row[ci] = c["row"]
        st.col[ci] = c["col"]
        st.stamp[ci] = c["stamp"]
        st.floated[ci] = c["floated"]
        st.operated[ci] = c["operated"]
        st.homed[ci] = c["homed"]
        st.home[ci] = c["home"]
        st.president[ci] = c["president"]
        st.ipo[ci] = c["treasury"]
        st.pool[ci] = c["pool"]
        st.redeemed[ci] = c["redeemed"]
        st.holdings[ci] = [int(x) for x in c["holdings"]]
        st.trains[ci] = list(c["trains"])
    for sym, p in obj["privates"].items():
        pi = PRIVATE_INDEX[sym]
        if p["status"] == "closed":
            st.private_owner[pi] = CLOSED
        elif p["status"] == "unsold":
            st.private_owner[pi] = UNSOLD
        elif p["corporation"]:
            st.private_owner[pi] = CORP_OWNER + CORP_INDEX[p["corporation"]]
        else:
            st.private_owner[pi] = int(p["player"])
    st.starting_corps = tuple(CORP_INDEX[s] for s in obj["starting_corporations"])
    st.depot_left = [int(x) for x in obj["depot"]["left"]]
    st.depot_next = [int(x) for x in obj["depot"]["next"]]
    st.stamp_counter = obj["stamp_counter"]
    st.late_available = obj["late_available"]
    st.last_set_triggered = obj["last_set_triggered"]
    st.final_set = obj["final_set"]
    st.lrc_used = obj["lrc_used"]
    st.teleport_used = obj["teleport_used"]
    st.end_reason = obj["end_reason"]
    st.bankrupt_seat = obj["bankrupt_seat"]
    a = obj["auction"]
    st.auc_companies = [PRIVATE_INDEX[s] for s in a["companies"]]
    st.auc_bids = {}
    for b in a["bids"]:
        st.auc_bids.setdefault(PRIVATE_INDEX[b["company"]], []).append((b["seat"], b["price"]))
    st.auc_discount = a["discount"]
    st.auc_turn = a["turn"]
    st.auc_passes = a["passes"]
    st.auc_auctioning = PRIVATE_INDEX[a["auctioning"]] if a["auctioning"] else -1
    st.pending_par = [(p["seat"], CORP_INDEX[p["corporation"]]) for p in a["pending_par"]]
    s = obj["stock"]
    st.sr_number = s["number"]
    st.sr_turn = s["turn"]
    st.sr_acted = s["acted"]
    st.sr_buys = s["buys"]
    st.sr_buy_corp = CORP_INDEX[s["buy_corporation"]] if s["buy_corporation"] else -1
    st.sr_sold = [sum(1 << CORP_INDEX[c] for c in entry["corporations"]) for entry in s["sold"]]
    st.sr_passed = [bool(x) for x in s["passed"]]
    st.sr_pass_order = [int(x) for x in s["pass_order"]]
    st.pending_home = CORP_INDEX[s["pending_home"]] if s["pending_home"] else -1
    o = obj["operating"]
    st.or_num = o["number"]
    st.or_total = o["total"]
    st.or_order = [CORP_INDEX[c] for c in o["order"]]
    st.or_pos = o["position"]
    st.step = o["step"]
    st.t_laid = [(x["hex"], x["upgrade"]) for x in o["laid"]]
    st.t_tokened = o["tokened"]
    st.t_redeemed = o["redeemed"]
    st.t_revenue = o["revenue"]
    st.t_routes = tuple(o["routes"])
    st.t_traded = o["traded"]
    st.t_teleport = o["teleport"]
    st.t_bought_company = o["bought_company"]
    st.t_reissued = o["reissued"]
    st.t_sale_price = o["sale_price"]
    st.t_lrc_hex = o["lrc_hex"]
    st.t_teleport_step = o.get("teleport_step", "")
    st.discard = [CORP_INDEX[c] for c in o["discard"]]
    st.board = board_from_view(obj["board"])
    return st


# ---------------------------------------------------------------------- board <-> view


def board_to_view(board: Board) -> dict[str, JSON]:
    """The board as a proto-friendly JSON object (no nulls or lists inside lists): laid tiles,
    tokens per city (``""`` = empty slot), reservations, waiting tokens, free tile copies and
    ferry holders."""
    raw = board.to_json()
    return {
        "tiles": {h: {"tile": t, "rotation": r} for h, (t, r) in raw["tiles"].items()},
        "tokens": {
            h: {"cities": [{"slots": [c or "" for c in s]} for s in cities]}
            for h, cities in raw["tokens"].items()
        },
        "reserved": {h: {"cities": [c or "" for c in r]} for h, r in raw["reserved"].items()},
        "hex_reserved": {h: {"corporations": list(r)} for h, r in raw["hex_reserved"].items()},
        "waiting": [{"corporation": c, "hex": h} for c, h in raw["waiting"]],
        "free_copies": {k: {"copies": list(v)} for k, v in raw["free_copies"].items()},
        "ferries": list(raw["ferries"]),
        "token_memo": dict(raw["token_memo"]),
    }


def board_from_view(v: dict[str, JSON]) -> Board:
    """Inverse of :func:`board_to_view`."""
    raw = {
        "tiles": {h: [x["tile"], x["rotation"]] for h, x in v["tiles"].items()},
        "tokens": {
            h: [[c or None for c in city["slots"]] for city in x["cities"]]
            for h, x in v["tokens"].items()
        },
        "reserved": {h: [c or None for c in x["cities"]] for h, x in v["reserved"].items()},
        "hex_reserved": {h: list(x["corporations"]) for h, x in v["hex_reserved"].items()},
        "waiting": [[w["corporation"], w["hex"]] for w in v["waiting"]],
        "free_copies": {k: list(x["copies"]) for k, x in v["free_copies"].items()},
        "ferries": list(v["ferries"]),
        "token_memo": dict(v.get("token_memo", {})),
    }
    return Board.from_json(raw)
