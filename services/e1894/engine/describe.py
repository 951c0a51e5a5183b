"""1894 moves and seats in words (``Game.describe`` / ``Game.summarize_view``).

Terms are the 18xx ones of ``e1894.md``: private, par, share, Treasury, pool, president,
lay/upgrade a tile, station token, run the trains, pay out / withhold, buy a train, trade
in, ferry marker. Corporations and privates go by their symbols (``PLM``, ``LRC``), hexes
by id and city name (``H17 (Lille)``), prices in francs (``F``). Ranged moves name their
span: ``"Buy 2-train 2-1 from Nord for 1-630 F"``. Nothing in 1894 is hidden.

>>> from services.e1894.engine import GAME
>>> state = GAME.new_state(3, seed=1)
>>> GAME.describe(state, state.legal_actions(state.active_seats()[0])[0])
'Bid 20 F on LRC (Ligne de Reims à Charleville)'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.kernel.engine import Action, ActionRange, LegalAction, MalformedAction

from . import actions as A
from .data import CORP_INDEX, CORPS, PRIVATE_INDEX, PRIVATES, train_name
from .hexmap import MAP
from .market import price
from .trains import owner_of_train

if TYPE_CHECKING:  # pragma: no cover
    from .state import E1894State


def hex_text(hex_id: str) -> str:
    """``"H17 (Lille)"`` for a named hex, else the id alone."""
    info = MAP.by_id.get(hex_id)
    return f"{hex_id} ({info.name})" if info is not None and info.name else hex_id


def _francs(lo: int, hi: int | None = None, step: int = 1) -> str:
    if hi is None or hi == lo:
        return f"{lo} F"
    return f"{lo}-{hi} F" + (f" in steps of {step}" if step != 1 else "")


def _private(sym: str) -> str:
    i = PRIVATE_INDEX.get(sym)
    return f"{sym} ({PRIVATES[i].name})" if i is not None else sym


def describe(st: E1894State, action: LegalAction) -> str:
    """One move of ``st`` (an E1894State) in words; ``action`` is legal there (a plain
    action or an :class:`ActionRange` of prices)."""
    if isinstance(action, ActionRange):
        return _plain(st, action.action, (action.min, action.max, action.step))
    return _plain(st, action, None)


def _corp(st: E1894State) -> str:
    return st.acting_corporation() or "the corporation"


def _plain(st: E1894State, a: Action, span: tuple[int, int, int] | None) -> str:
    def money(value: int) -> str:
        return _francs(*span) if span else _francs(value)

    if isinstance(a, A.Bid):
        return f"Bid {money(a.price)} on {_private(a.company)}"
    if isinstance(a, A.Par):
        return f"Par {a.corporation} at {a.price} F"
    if isinstance(a, A.ChooseHome):
        pending = st.pending_home
        corp = CORPS[pending].sym if pending >= 0 else "the corporation"
        return f"Choose {hex_text(a.hex)} as {corp}'s home"
    if isinstance(a, A.BuyShares):
        ci = CORP_INDEX.get(a.corporation)
        if a.source == "treasury":
            cost = st.par[ci] if ci is not None else 0
            return f"Buy a 10% share of {a.corporation} from the Treasury for {cost} F"
        cost = price(st, ci) if ci is not None and st.row[ci] >= 0 else 0
        return f"Buy a 10% share of {a.corporation} from the pool for {cost} F"
    if isinstance(a, A.SellShares):
        ci = CORP_INDEX.get(a.corporation)
        each = price(st, ci) if ci is not None and st.row[ci] >= 0 else 0
        noun = "share" if a.count == 1 else "shares"
        return f"Sell {a.count} {a.corporation} {noun} to the pool at {each} F each"
    if isinstance(a, A.RedeemShare):
        noun = "share" if a.count == 1 else "shares"
        return f"Redeem {a.count} {_corp(st)} {noun} from the pool"
    if isinstance(a, A.ReissueShares):
        return f"Reissue {_corp(st)}'s redeemed shares at 100 F"
    if isinstance(a, A.LayTile):
        upgrade = False
        try:
            current = st.board.tile(a.hex)
            upgrade = not current.preprinted or current.color != "white"
        except MalformedAction:  # unknown hex: described as given
            pass
        where = hex_text(a.hex)
        if upgrade:
            text = f"Upgrade {where} to tile {a.tile}, rotation {a.rotation}"
        else:
            text = f"Lay tile {a.tile} on {where}, rotation {a.rotation}"
        return text + (f", using {a.company}" if a.company else "")
    if isinstance(a, A.PlaceToken):
        text = f"Place a {_corp(st)} station token on {hex_text(a.hex)}, city {a.city}"
        return text + (f", using {a.company}" if a.company else "")
    if isinstance(a, A.BuyFerry):
        return f"Buy a ferry marker for {_corp(st)}"
    if isinstance(a, A.RunRoutes):
        if not a.routes:
            return "Run no trains (no route)"
        parts = []
        for text in a.routes:
            train, _, chains = text.partition(":")
            parts.append(f"{train} {chains.replace(',', '-').replace(';', ' + ')}")
        return "Run the trains: " + "; ".join(parts)
    if isinstance(a, A.Dividend):
        return "Pay out the revenue" if a.kind == "payout" else "Withhold the revenue"
    if isinstance(a, A.BuyTrain):
        owner = owner_of_train(st, a.train)
        kind = f"a {train_name(a.train)}-train ({a.train})"
        if owner >= 0:
            text = f"Buy {kind} from {CORPS[owner].sym} for {money(a.price)}"
        else:
            text = f"Buy {kind} from the depot for {money(a.price)}"
        return text + (f", trading in {a.exchange}" if a.exchange else "")
    if isinstance(a, A.DiscardTrain):
        owner = owner_of_train(st, a.train)
        corp = CORPS[owner].sym if owner >= 0 else "the corporation"
        return f"Discard {corp}'s {train_name(a.train)}-train {a.train}"
    if isinstance(a, A.BuyCompany):
        i = PRIVATE_INDEX.get(a.company)
        holder = st.private_owner[i] if i is not None else -1
        seller = f" from seat {holder}" if 0 <= holder < st.num_players else ""
        return f"{_corp(st)} buys {_private(a.company)}{seller} for {money(a.price)}"
    if isinstance(a, A.Pass):
        return "Pass"
    if isinstance(a, A.Bankrupt):
        return "Declare bankruptcy"
    return str(a)


def summarize_view(view: dict[str, Any]) -> list[str]:
    """One line per seat from an 1894 view: cash, shares (percent, president marked),
    privates; the seats to act are marked."""
    n = view["num_players"]
    active = set(view.get("active_seats", []))
    out = []
    for seat in range(n):
        holdings = []
        for sym, corp in view["corporations"].items():
            pct = corp["holdings"][seat]
            if pct:
                mark = "*" if corp["president"] == seat else ""
                holdings.append(f"{sym}{mark} {pct}%")
        privates = [sym for sym, p in view["privates"].items() if p["player"] == seat]
        line = f"Seat {seat}: {view['cash'][seat]} F"
        if holdings:
            line += ", " + ", ".join(holdings)
        if privates:
            line += ", privates " + " ".join(privates)
        if seat in active:
            line += " (to act)"
        out.append(line)
    return out
