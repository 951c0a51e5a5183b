"""Import a game recorded on 18xx.games: its JSON becomes an ordinary game of ours.

Spec: the 1894 rules summary, "Replay semantics of a recorded 18xx.games game" and
"Action JSON format".

:func:`import_game` takes the recorded JSON (a dict), applies the undo/redo filtering
(:mod:`.filter`), then converts each effective action, and after it each of its
``auto_actions``, into one or more of our typed actions and applies them to our state with all
checks on. ``program_*`` and ``message`` actions are accepted and ignored. The ids of
18xx.games are mapped onto ours: players by their position in ``players`` (seat), shares by the
:class:`~.ledger.ShareLedger` (Treasury or pool), tiles by name (``57-3`` -> ``57``), cities by
the board (``X16-0-1`` -> hex and city), trains by a map of their ids to ours.

Routes stored in ``run_routes`` are recomputed; a stored revenue that differs is an error.
Every error is an :class:`ImportDivergence` naming the action id and the reason; nothing is
ever silently accepted.

The result is an :class:`ImportedGame`: ``(num_players, seed, options)`` and the log of
``(seat, action)`` that :meth:`~services.kernel.engine.Game.replay` rebuilds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from services.kernel.engine import Action, Event, IllegalAction

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
from ..data import CORP_INDEX, CORPS, MARKET, PRIVATE_INDEX, train_name
from ..game import GAME
from ..state import E1894State
from ..tiles import parse_tile_id
from ..trains import depot_train_id, owner_of_train
from .filter import filtered_actions
from .ledger import POOL, REDEEMED, TREASURY, ShareLedger, split

IGNORED = ("program_buy_shares", "program_share_pass", "program_disable", "message")
KNOWN_OPTIONAL_RULES: tuple[str, ...] = ()


class ImportDivergence(Exception):
    """A recorded action our rules refuse or that disagrees with our state.

    Attributes:
        action_id: the 18xx.games ``id`` of the effective action (for an auto action, the id of
            the action carrying it).
        reason: what went wrong (the rule's reason for a refused action).
        code: the :class:`IllegalAction` code, or ``"divergence"``.
    """

    def __init__(self, action_id: int | None, reason: str, code: str = "divergence") -> None:
        super().__init__(f"action {action_id}: {reason}")
        self.action_id = action_id
        self.reason = reason
        self.code = code


@dataclasses.dataclass
class ImportedGame:
    """A recorded game as one of ours.

    Attributes:
        num_players, seed, options: what :meth:`Game.new_state` needs.
        log: ``(seat, action)`` pairs, replayable with :meth:`Game.replay`.
        player_ids: 18xx.games player id of each seat.
        state: the final state.
        source_ids: for each log entry, the 18xx.games id of the action it came from.
    """

    num_players: int
    seed: int
    options: dict[str, Any]
    log: list[tuple[int, Action]]
    player_ids: list[int]
    state: E1894State
    source_ids: list[int]

    def result(self) -> dict[str, int]:
        """18xx.games ``result`` form: player id (as text) -> score."""
        scores = self.state.scores()
        return {str(pid): scores[s] for s, pid in enumerate(self.player_ids)}

    @property
    def game_end_reason(self) -> str:
        """The end reason of our replay (``""`` while unfinished)."""
        return self.state.end_reason


def import_game(
    data: dict[str, Any],
    *,
    upto: int | None = None,
    on_step: Callable[[dict[str, Any], E1894State], object] | None = None,
) -> ImportedGame:
    """Replay a recorded 18xx.games game with our rules.

    Args:
        data: the recorded game (``players``, ``settings.seed``, ``actions``...).
        upto: stop after the effective action with this id (``None``: play everything).
        on_step: optional callback ``(action_dict, state)`` after each effective action (its
            auto actions included): the per-action trace comparison uses it.

    Raises:
        ImportDivergence: the first action our rules refuse or that disagrees with our state.
    """
    imp = _Importer(data)
    for act in filtered_actions(data["actions"]):
        imp.effective(act)
        if on_step is not None:
            on_step(act, imp.state)
        if upto is not None and act.get("id") == upto:
            break
    return imp.finish()


class _Importer:
    def __init__(self, data: dict[str, Any]) -> None:
        players = data.get("players") or []
        self.player_ids = [int(p["id"]) for p in players]
        self.seat_of = {pid: s for s, pid in enumerate(self.player_ids)}
        n = len(self.player_ids)
        settings = data.get("settings") or {}
        rules = list(settings.get("optional_rules") or data.get("optional_rules") or [])
        unknown = [r for r in rules if r not in KNOWN_OPTIONAL_RULES]
        if unknown:
            raise ImportDivergence(None, f"unsupported optional rules {unknown}", "options")
        if not GAME.min_players <= n <= GAME.max_players:
            raise ImportDivergence(None, f"1894 takes 3 or 4 players, the game has {n}", "players")
        self.seed = int(settings["seed"])
        self.options: dict[str, Any] = {}
        state = GAME.new_state(n, self.seed, self.options)
        assert isinstance(state, E1894State)
        self.state = state
        starting = tuple(CORPS[ci].sym for ci in self.state.starting_corps)
        self.ledger = ShareLedger(n, starting)
        self.train_map: dict[str, str] = {}
        self.log: list[tuple[int, Action]] = []
        self.source_ids: list[int] = []
        self.action_id: int | None = None

    # ------------------------------------------------------------------ driving

    def effective(self, act: dict[str, Any]) -> None:
        self.action_id = act.get("id")
        self.one(act)
        for auto in act.get("auto_actions") or []:
            self.one(auto)

    def finish(self) -> ImportedGame:
        return ImportedGame(
            len(self.player_ids),
            self.seed,
            self.options,
            self.log,
            self.player_ids,
            self.state,
            self.source_ids,
        )

    def fail(self, reason: str, code: str = "divergence") -> ImportDivergence:
        return ImportDivergence(self.action_id, reason, code)

    def one(self, act: dict[str, Any]) -> None:
        kind = act.get("type")
        if kind in IGNORED or kind in ("undo", "redo"):
            return
        st = self.state
        if st.is_terminal():
            raise self.fail(f"{kind} after the end of the game", "game_over")
        handler = getattr(self, f"_{kind}", None)
        if handler is None:
            raise self.fail(f"unknown action type {kind!r}", "unknown_action")
        handler(act)

    def apply(self, seat: int, action: Action) -> list[Event]:
        try:
            events = self.state.apply(seat, action)
        except IllegalAction as exc:
            raise ImportDivergence(
                self.action_id, f"{action} refused: {exc.reason}", exc.code
            ) from None
        self.log.append((seat, action))
        self.source_ids.append(self.action_id if self.action_id is not None else -1)
        return events

    # ------------------------------------------------------------------ entities

    def player_seat(self, act: dict[str, Any]) -> int:
        try:
            seat = self.seat_of[int(act["entity"])]
        except (KeyError, ValueError, TypeError):
            raise self.fail(f"unknown player {act.get('entity')!r}") from None
        active = self.state.active_seats()
        if seat not in active:
            raise self.fail(
                f"player {act['entity']} acts but the rules wait for {self._describe_active()}",
                "not_your_turn",
            )
        return seat

    def corp_seat(self, act: dict[str, Any]) -> int:
        """Seat acting for the corporation (or company) entity of ``act``."""
        st = self.state
        entity = str(act.get("entity"))
        if entity in PRIVATE_INDEX:
            owner = st.private_owner[PRIVATE_INDEX[entity]]
            if owner < 100:
                raise self.fail(f"{entity} is not owned by a corporation")
            entity = CORPS[owner - 100].sym
        if entity not in CORP_INDEX:
            raise self.fail(f"unknown entity {act.get('entity')!r}")
        acting = st.acting_corporation()
        if entity != acting:
            raise self.fail(
                f"{entity} acts but the rules wait for {self._describe_active()}",
                "not_your_turn",
            )
        return st.active_seats()[0]

    def seat_for(self, act: dict[str, Any]) -> int:
        if act.get("entity_type") == "player" or isinstance(act.get("entity"), int):
            return self.player_seat(act)
        return self.corp_seat(act)

    def _describe_active(self) -> str:
        st = self.state
        corp = st.acting_corporation()
        if corp:
            return f"{corp} ({st.step})"
        seats = st.active_seats()
        return ", ".join(f"player {self.player_ids[s]}" for s in seats) or "nobody"

    # ------------------------------------------------------------------ ledger upkeep

    def presidents(self) -> list[int]:
        return list(self.state.president)

    def sync_presidents(self, before: list[int], events: Sequence[Event] = ()) -> None:
        self.ledger.follow(list(events), before, self.state.president)

    # ------------------------------------------------------------------ action types

    def _bid(self, act: dict[str, Any]) -> None:
        seat = self.player_seat(act)
        events = self.apply(seat, Bid(str(act["company"]), int(act["price"])))
        self.sync_presidents(self.presidents(), events)

    def _pass(self, act: dict[str, Any]) -> None:
        seat = self.seat_for(act)
        events = self.apply(seat, Pass())
        self.sync_presidents(self.presidents(), events)

    def _par(self, act: dict[str, Any]) -> None:
        seat = self.player_seat(act)
        corp = str(act["corporation"])
        cell = MARKET.by_id.get(str(act.get("share_price")))
        if cell is None:
            raise self.fail(f"unknown share price {act.get('share_price')!r}")
        par = MARKET.price(*cell)
        if MARKET.par_cells.get(par) != cell:
            raise self.fail(f"{act.get('share_price')} is not a par cell")
        before = self.presidents()
        self.apply(seat, Par(corp, par))
        self.ledger.move(f"{corp}_0", seat)
        self.sync_presidents(before)

    def _choose(self, act: dict[str, Any]) -> None:
        seat = self.player_seat(act)
        choice = str(act.get("choice", ""))
        hex_id = choice.rpartition("(")[2].rstrip(")").strip() if "(" in choice else choice
        self.apply(seat, ChooseHome(hex_id))

    def _buy_shares(self, act: dict[str, Any]) -> None:
        shares = [str(s) for s in act.get("shares") or []]
        if not shares:
            raise self.fail("buy_shares without shares")
        if int(act.get("percent", 10 * len(shares))) != 10 * len(shares):
            raise self.fail(f"buy_shares of {shares} with percent {act.get('percent')}")
        if act.get("entity_type") == "corporation":
            seat = self.corp_seat(act)
            for sid in shares:
                if self.ledger.location(sid) != POOL:
                    raise self.fail(f"{sid} is not in the pool: only pool shares are redeemed")
            self.apply(seat, RedeemShare(len(shares)))
            for sid in shares:
                self.ledger.move(sid, REDEEMED)
            return
        seat = self.player_seat(act)
        for sid in shares:
            corp, k = split(sid)
            if corp not in CORP_INDEX or not 0 <= k <= 8:
                raise self.fail(f"unknown share {sid!r}")
            where = self.ledger.location(sid)
            if where not in (TREASURY, POOL):
                raise self.fail(f"{sid} is held by {where}, not in the Treasury or the pool")
            source = "treasury" if where == TREASURY else "pool"
            before = self.presidents()
            self.apply(seat, BuyShares(corp, source))
            self.ledger.move(sid, seat)
            self.sync_presidents(before)

    def _sell_shares(self, act: dict[str, Any]) -> None:
        shares = [str(s) for s in act.get("shares") or []]
        if not shares:
            raise self.fail("sell_shares without shares")
        corps = {split(s)[0] for s in shares}
        if len(corps) != 1:
            raise self.fail(f"sell_shares of several corporations {sorted(corps)}")
        corp = corps.pop()
        if act.get("entity_type") == "corporation":
            seat = self.corp_seat(act)
            self.apply(seat, ReissueShares())
            for sid in shares:
                self.ledger.move(sid, TREASURY)
            for k in self.ledger.ids_at(corp, REDEEMED):
                self.ledger.move(f"{corp}_{k}", TREASURY)
            return
        seat = self.player_seat(act)
        percent = int(act.get("percent", 0))
        if percent % 10 or percent <= 0:
            raise self.fail(f"sell_shares percent {percent}")
        for sid in shares:
            if self.ledger.location(sid) != seat:
                raise self.fail(f"{sid} is not held by player {act['entity']}")
        before = self.presidents()
        self.apply(seat, SellShares(corp, percent // 10))
        ci = CORP_INDEX[corp]
        self.ledger.sell(seat, corp, shares, percent, self.state.president[ci])
        if f"{corp}_0" in shares:
            before[ci] = self.state.president[ci]
        self.sync_presidents(before)
        self._reconcile(ci)

    def _reconcile(self, ci: int) -> None:
        """Make the ledger's pool/Treasury counts match our state after unusual moves."""
        st = self.state
        corp = CORPS[ci].sym
        want_pool = st.pool[ci] // 10
        have = self.ledger.ids_at(corp, POOL)
        if len(have) == want_pool:
            return
        for seat in range(st.num_players):
            held = self.ledger.held_by(seat, corp)
            pct = sum(20 if s.endswith("_0") else 10 for s in held)
            while pct > st.holdings[ci][seat] and len(self.ledger.ids_at(corp, POOL)) < want_pool:
                sid = next(s for s in held if not s.endswith("_0"))
                held.remove(sid)
                self.ledger.move(sid, POOL)
                pct -= 10

    def _lay_tile(self, act: dict[str, Any]) -> None:
        seat = self.corp_seat(act)
        name, _ = parse_tile_id(str(act["tile"]))
        company = str(act["entity"]) if str(act.get("entity")) in PRIVATE_INDEX else None
        self.apply(seat, LayTile(str(act["hex"]), name, int(act["rotation"]), company))

    def _place_token(self, act: dict[str, Any]) -> None:
        seat = self.corp_seat(act)
        entity = str(act.get("entity"))
        company = entity if entity in PRIVATE_INDEX else None
        try:
            hex_id, city = self.state.board.parse_city_id(str(act["city"]))
        except IllegalAction as exc:
            raise self.fail(f"unknown city {act.get('city')!r}: {exc.reason}") from None
        self.apply(seat, PlaceToken(hex_id, city, company))

    def _run_routes(self, act: dict[str, Any]) -> None:
        seat = self.corp_seat(act)
        texts = []
        for r in act.get("routes") or []:
            train = self.our_train(str(r["train"]))
            chains = [[str(h) for h in chain] for chain in r.get("connections") or []]
            if not chains:
                raise self.fail(f"route of train {r['train']} has no connections")
            texts.append(f"{train}:" + ";".join(",".join(c) for c in chains))
        extra = int(act.get("extra_revenue") or 0) + int(act.get("subsidy") or 0)
        if extra:
            raise self.fail(f"extra revenue {extra} does not exist in 1894")
        # the route step validates and values the routes, once (a refused route stops the
        # import with the rule's code); then each stored revenue is compared with our value
        events = self.apply(seat, RunRoutes(tuple(texts)))
        valued = next(e["routes"] for e in events if e.get("type") == "routes")
        for r, ours in zip(act.get("routes") or [], valued, strict=True):
            hexes, _, revenue = ours.partition(":")[2].rpartition("=")
            if "revenue" in r and int(r["revenue"]) != int(revenue):
                raise self.fail(
                    f"route of train {r['train']} ({hexes}) is worth "
                    f"{revenue}, the record says {r['revenue']}",
                    "route_revenue",
                )

    def _dividend(self, act: dict[str, Any]) -> None:
        seat = self.corp_seat(act)
        self.apply(seat, Dividend(str(act["kind"])))

    def our_train(self, ref_id: str) -> str:
        return self.train_map.get(ref_id, ref_id)

    def _buy_train(self, act: dict[str, Any]) -> None:
        seat = self.corp_seat(act)
        st = self.state
        ref = str(act["train"])
        ours = self.our_train(ref)
        exchange = act.get("exchange")
        exchange = self.our_train(str(exchange)) if exchange else None
        if owner_of_train(st, ours) < 0:
            nxt = depot_train_id(st)
            if train_name(ours) != train_name(nxt):
                raise self.fail(
                    f"train {ref} is not for sale: the depot sells {nxt} and no "
                    "corporation owns it",
                    "not_available",
                )
            self.train_map[ref] = nxt
            ours = nxt
        self.apply(seat, BuyTrain(ours, int(act["price"]), exchange))

    def _discard_train(self, act: dict[str, Any]) -> None:
        seat = self.corp_seat(act)
        self.apply(seat, DiscardTrain(self.our_train(str(act["train"]))))

    def _buy_company(self, act: dict[str, Any]) -> None:
        seat = self.corp_seat(act)
        self.apply(seat, BuyCompany(str(act["company"]), int(act["price"])))

    def _special_buy(self, act: dict[str, Any]) -> None:
        seat = self.corp_seat(act)
        desc = str(act.get("description", ""))
        if "ferry" not in desc.lower():
            raise self.fail(f"unknown special purchase {desc!r}")
        st = self.state
        ci = CORP_INDEX[st.acting_corporation()]
        before = st.corp_cash[ci]
        self.apply(seat, BuyFerry())
        paid = before - st.corp_cash[ci]
        if "cost" in act and int(act["cost"]) != paid:
            raise self.fail(f"the ferry marker costs {paid}, the record says {act['cost']}")

    def _bankrupt(self, act: dict[str, Any]) -> None:
        seat = self.corp_seat(act)
        self.apply(seat, Bankrupt())
