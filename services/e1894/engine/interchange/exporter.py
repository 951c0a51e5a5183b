"""Export one of our games in the 18xx.games JSON format.

:func:`export_game` replays our log ``(seat, action)`` from ``(num_players, seed, options)``
and writes each action as the 18xx.games action(s) it corresponds to, with the ids 18xx.games
uses: players by id, shares from the :class:`~.ledger.ShareLedger`, tiles ``57-3`` and cities
``X16-0-1`` from the board, trains ``5+1-2``, share prices ``"95,1,1"``, routes in the
``run_routes`` form (connections, hexes, nodes, revenue). :func:`~.importer.import_game` of the
result gives the same log back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from services.kernel.engine import Action, Event

from .. import routes as routes_mod
from ..actions import (
    Bankrupt,
    Bid,
    BuyCompany,
    BuyFerry,
    BuyShares,
    BuyTrain,
    ChooseHome,
    DiscardTrain,
    Dividend,
    LayTile,
    Par,
    Pass,
    PlaceToken,
    RedeemShare,
    ReissueShares,
    RunRoutes,
    SellShares,
)
from ..data import CORP_INDEX, CORPS, MARKET, PHASES, train_name
from ..game import GAME
from ..hexmap import MAP
from ..state import E1894State
from ..teleport import TELEPORT
from ..trains import depot_train_id
from .ledger import REDEEMED, TREASURY, ShareLedger

TITLE = "1894"


def export_game(
    num_players: int,
    seed: int,
    options: dict[str, Any] | None,
    log: Iterable[tuple[int, Action]],
    *,
    player_ids: Sequence[int] | None = None,
    player_names: Sequence[str] | None = None,
    game_id: int = 0,
) -> dict[str, Any]:
    """The 18xx.games JSON of a game of ours.

    Args:
        num_players, seed, options: the game's setup (as for :meth:`Game.new_state`).
        log: ``(seat, action)`` pairs (typed actions or their canonical JSON).
        player_ids: 18xx.games player ids per seat (default 1..n).
        player_names: names per seat (default ``Player k``).

    Raises:
        IllegalAction: the log is not a legal game of ours.
    """
    ids = list(player_ids) if player_ids is not None else list(range(1, num_players + 1))
    names = list(player_names) if player_names else [f"Player {s + 1}" for s in range(num_players)]
    st = GAME.new_state(num_players, seed, options or {})
    assert isinstance(st, E1894State)
    ex = _Exporter(st, ids)
    for seat, action in log:
        if not isinstance(action, Action):
            action = GAME.parse_action(action)
        ex.export(seat, action)
    finished = st.is_terminal()
    data: dict[str, Any] = {
        "id": game_id,
        "description": "",
        "user": {"id": 0, "name": "You"},
        "players": [{"id": ids[s], "name": names[s]} for s in range(num_players)],
        "min_players": GAME.min_players,
        "max_players": GAME.max_players,
        "title": TITLE,
        "settings": {"seed": seed, "optional_rules": []},
        "status": "finished" if finished else "active",
        "actions": ex.actions,
        "loaded": True,
    }
    if finished:
        scores = st.scores()
        data["result"] = {str(ids[s]): scores[s] for s in range(num_players)}
        data["game_end_reason"] = st.end_reason
    return data


class _Exporter:
    def __init__(self, st: E1894State, player_ids: list[int]) -> None:
        self.st = st
        self.ids = player_ids
        self.ledger = ShareLedger(st.num_players, tuple(CORPS[ci].sym for ci in st.starting_corps))
        self.actions: list[dict[str, Any]] = []

    def _emit(self, entity: Any, entity_type: str, type_: str, **fields: Any) -> None:
        n = len(self.actions) + 1
        act = {
            "type": type_,
            "entity": entity,
            "entity_type": entity_type,
            "id": n,
            "created_at": n,
        }
        act.update(fields)
        self.actions.append(act)

    def _player(self, seat: int, type_: str, **fields: Any) -> None:
        self._emit(self.ids[seat], "player", type_, **fields)

    def export(self, seat: int, action: Action) -> None:
        """Apply one of our actions and write its 18xx.games form."""
        st = self.st
        before_pres = list(st.president)
        acting = st.acting_corporation()
        board = st.board
        city_id = None
        if isinstance(action, PlaceToken):
            city_id = board.city_id(action.hex, action.city)
        routes_json = None
        if isinstance(action, RunRoutes):
            rs = routes_mod.value_route_strings(board, acting, PHASES[st.phase].name, action.routes)
            routes_json = [
                _route_json(text, r) for text, r in zip(action.routes, rs.routes, strict=True)
            ]
        ferry_before = st.corp_cash[CORP_INDEX[acting]] if acting else 0
        depot_sale = isinstance(action, BuyTrain) and action.train == depot_train_id(st)
        redeemed_ids: list[str] = []
        if isinstance(action, ReissueShares):
            redeemed_ids = [f"{acting}_{k}" for k in self.ledger.ids_at(acting, REDEEMED)]
        teleport_decision = st.t_teleport if st.step == TELEPORT and acting else ""
        events = st.apply(seat, action)
        led = self.ledger
        if isinstance(action, Bid):
            self._player(seat, "bid", company=action.company, price=action.price)
        elif isinstance(action, Par):
            row, col = MARKET.par_cells[action.price]
            self._player(
                seat,
                "par",
                corporation=action.corporation,
                share_price=MARKET.cell_id(row, col),
            )
            led.move(f"{action.corporation}_0", seat)
        elif isinstance(action, ChooseHome):
            name = MAP.hexes[MAP.index(action.hex)].name
            self._player(seat, "choose", choice=f"{name} ({action.hex})" if name else action.hex)
        elif isinstance(action, BuyShares):
            sid = led.pick_buy(action.corporation, action.source)
            self._player(seat, "buy_shares", shares=[sid], percent=10)
            led.move(sid, seat)
        elif isinstance(action, SellShares):
            sids = led.pick_sell(seat, action.corporation, action.count)
            self._player(seat, "sell_shares", shares=sids, percent=10 * action.count)
            new = st.president[CORP_INDEX[action.corporation]]
            led.sell(seat, action.corporation, sids, 10 * action.count, new)
        elif isinstance(action, RedeemShare):
            sids = led.pick_redeem(acting, action.count)
            self._corp_as(acting, "buy_shares", shares=sids, percent=10 * action.count)
            for sid in sids:
                led.move(sid, REDEEMED)
        elif isinstance(action, ReissueShares):
            self._corp_as(
                acting,
                "sell_shares",
                shares=redeemed_ids,
                percent=10 * len(redeemed_ids),
                share_price=100,
            )
            for sid in redeemed_ids:
                led.move(sid, TREASURY)
        elif isinstance(action, LayTile):
            entity = action.company or acting
            etype = "company" if action.company else "corporation"
            self._emit(
                entity,
                etype,
                "lay_tile",
                hex=action.hex,
                tile=st.board.tile_id(action.hex),
                rotation=action.rotation,
            )
        elif isinstance(action, PlaceToken):
            corp = _token_corp(events, acting)
            slot = next(
                (i for i, c in enumerate(st.board.slots(action.hex, action.city)) if c == corp), 0
            )
            entity = action.company or corp
            etype = "company" if action.company else "corporation"
            self._emit(entity, etype, "place_token", city=city_id, slot=slot, tokener=corp)
        elif isinstance(action, BuyFerry):
            cost = ferry_before - st.corp_cash[CORP_INDEX[acting]]
            self._corp_as(acting, "special_buy", description="Ferry marker", cost=cost)
        elif isinstance(action, RunRoutes):
            self._corp_as(acting, "run_routes", routes=routes_json, extra_revenue=0, subsidy=0)
        elif isinstance(action, Dividend):
            self._corp_as(acting, "dividend", kind=action.kind)
        elif isinstance(action, BuyTrain):
            fields: dict[str, Any] = {"train": action.train, "price": action.price}
            if depot_sale:
                fields["variant"] = train_name(action.train)
            if action.exchange:
                fields["exchange"] = action.exchange
            self._corp_as(acting, "buy_train", **fields)
        elif isinstance(action, DiscardTrain):
            self._corp_as(acting, "discard_train", train=action.train)
        elif isinstance(action, BuyCompany):
            self._corp_as(acting, "buy_company", company=action.company, price=action.price)
        elif isinstance(action, Pass):
            if teleport_decision:
                self._emit(teleport_decision, "company", "pass")
            elif acting:
                self._corp_as(acting, "pass")
            else:
                self._player(seat, "pass")
        elif isinstance(action, Bankrupt):
            self._corp_as(acting, "bankrupt")
        led.follow(events, before_pres, st.president)

    def _corp_as(self, corp: str, type_: str, **fields: Any) -> None:
        self._emit(corp, "corporation", type_, **fields)


def _route_json(text: str, route: routes_mod.Route) -> dict[str, Any]:
    """The 18xx.games route, with the connections exactly as our action gives them."""
    out = route.to_json()
    _, chains = routes_mod.parse_route_string(text)
    if chains != out["connections"]:
        out["connections"] = chains
        if chains and chains[0] and out["hexes"] and chains[0][0] != out["hexes"][0]:
            out["hexes"] = out["hexes"][::-1]
            out["nodes"] = out["nodes"][::-1]
            out["revenue_str"] = "-".join(out["hexes"])
    return out


def _token_corp(events: list[Event], acting: str) -> str:
    for ev in events:
        if ev.get("type") == "token":
            return str(ev["corporation"])
    return acting
