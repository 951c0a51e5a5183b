"""Operating rounds: private revenue, then each corporation's turn, step by step.

Spec: ``shared/rules/e1894.md`` "Shares and the stock market" (redeem / reissue),
"Map, track and tokens", "London, ferries and bonuses", "Trains and phases", "Game end";
step order of the reference engine: ``data/game.json`` ``operating_round_step_order``.

An OR set has 1 (Yellow), 2 (Green, Blue) or 3 (Brown on) ORs, fixed when the set starts. At the
start of each OR every private pays its owner; the floated corporations then operate in order
of share price (:func:`.market.operating_order`); after each turn the corporations still to
operate are sorted again by their current prices (emergency sales may have moved them).
A corporation's turn:

1. ``home``: on its first turn it places its home token(s) (a choice of city only on a split
   brown home);
2. ``redeem``: one redemption of pool shares at market price (1, or 2 in the first OR of a
   set; errata A6) or a reissue of all redeemed shares at 100 each when they outnumber the
   Treasury's (not Belge nor the drawn French starting corporation); either, or ``pass``,
   ends the step;
3. ``track``: up to two lays (:mod:`.track`), ``pass`` ends the step; a green -> brown split
   that removes its own token makes it re-place that token at once (``replace``);
4. ``token``: one token (:mod:`.tokens`);
5. ``route``: run the trains (:mod:`.routes`; revenue recomputed, never trusted); skipped,
   with revenue 0, when the corporation has no train or no route (errata A3);
6. ``dividend``: payout (price right) or withhold (left); no revenue withholds by itself;
7. ``buy_train``: from the depot (one trade-in per step) or from other corporations; a
   corporation without trains that has a route must buy one, with the president's money and
   emergency sales if needed, or the president goes bankrupt;
8. ``buy_company``: buy privates from players (Green, Blue, Brown);
9. ``update``: other corporations whose tokens the split removed re-place them, in operating
   order.

Steps with nothing to do are skipped at once. At any time of its turn the corporation may buy
privates (in the phases that allow it), buy a ferry marker and use London shipping's token.
In the last OR set (after the first D) the track and token steps are skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.common.engine import (
    Action,
    ActionRange,
    IllegalAction,
    LegalAction,
    MalformedAction,
)

from . import bankruptcy, teleport
from . import routes as routes_mod
from . import tokens as tokens_mod
from . import track as track_mod
from .actions import (
    Bankrupt,
    BuyCompany,
    BuyFerry,
    BuyTrain,
    DiscardTrain,
    Dividend,
    LayTile,
    Pass,
    PlaceToken,
    RedeemShare,
    ReissueShares,
    RunRoutes,
    SellShares,
)
from .gamedata import (
    BLOCKED_HEX_WHILE_PLAYER_OWNED,
    CORP_INDEX,
    CORPS,
    FERRY_COST,
    FERRY_COST_LS,
    MAJOR_PRIVATE_OF,
    PHASES,
    PRIVATE_INDEX,
    PRIVATES,
    TELEPORT_PRIVATES,
    TRAIN_INDEX,
    TRAINS,
    train_name,
)
from .graph import reach, route_available
from .market import move_left, move_right, operating_order, order_key, price
from .privates import CORP_OWNER, buyable_by_corps, close_private, pay_revenue, price_range
from .shares import can_sell_count, sell_shares
from .trains import (
    crowded_corps,
    depot_train_id,
    depot_type,
    owner_of_train,
    take_from_depot,
    trade_in_discount,
    train_limit,
)

if TYPE_CHECKING:
    from .state import E1894State

HOME, REPLACE, REDEEM, TRACK, TOKEN, ROUTE, DIVIDEND = (
    "home",
    "replace",
    "redeem",
    "track",
    "token",
    "route",
    "dividend",
)
BUY_TRAIN, BUY_COMPANY, UPDATE = "buy_train", "buy_company", "update"
TELEPORT = teleport.TELEPORT
PASSIVE_STEPS = frozenset({REDEEM, TRACK, TOKEN, ROUTE, DIVIDEND, BUY_TRAIN, BUY_COMPANY})

S_SHARES = "§Shares and the stock market"
S_TRACK = "§Map, track and tokens"
S_TRAINS = "§Trains and phases"
S_LONDON = "§London, ferries and bonuses"


# ====================================================================== round structure


def start_operating_set(st: E1894State) -> None:
    """After a stock round: the next OR set (the last one if the first D has been bought)."""
    st.final_set = st.last_set_triggered
    st.or_total = PHASES[st.phase].operating_rounds
    st.or_num = 1
    start_operating_round(st)


def start_operating_round(st: E1894State) -> None:
    """One OR: private revenue, then the floated corporations in operating order."""
    st.round = "operating"
    st.or_events = pay_revenue(st)
    st.or_order = operating_order(st)
    st.or_pos = 0
    _start_turn(st)


def _start_turn(st: E1894State) -> None:
    st.step = HOME
    clear_turn_record(st)
    advance(st)


def clear_turn_record(st: E1894State) -> None:
    """Start a corporation's turn with a clean record of what it did in it: no tile laid,
    no token placed, no share redeemed nor reissued, no revenue, no routes, no trade-in, no
    teleport, no private bought: the per-turn limits of the turn's steps (module docstring).
    Also the values of a new game."""
    st.t_laid = []
    st.t_tokened = False
    st.t_redeemed = 0
    st.t_revenue = 0
    st.t_routes = ()
    st.t_traded = False
    st.t_teleport = ""
    st.t_bought_company = False
    st.t_reissued = False
    st.t_sale_price = 0
    st.t_lrc_hex = ""
    st.t_teleport_step = ""


def _end_turn(st: E1894State) -> None:
    st.or_pos += 1
    # the corporations still to operate are re-sorted by their current share prices
    rest = st.or_order[st.or_pos :]
    rest.sort(key=lambda ci: order_key(st, ci))
    st.or_order[st.or_pos :] = rest
    if st.or_pos < len(st.or_order):
        _start_turn(st)
        return
    if st.check_stock_market_end():  # a price reached 450 in this OR: no next round
        return
    if st.or_num < st.or_total:
        st.or_num += 1
        start_operating_round(st)
        return
    if st.final_set:
        st.end_game("final_phase")
        return
    from .stock_round import start_stock_round

    start_stock_round(st)


def operating_corp(st: E1894State) -> int:
    """Index of the corporation whose turn it is."""
    return st.or_order[st.or_pos]


def acting_corp(st: E1894State) -> int:
    """The corporation that must act now (the operating one, one discarding a train, or one
    re-placing a token after a split)."""
    if st.discard:
        return st.discard[0]
    if st.step == UPDATE:
        return _update_corp(st)
    return operating_corp(st)


def _update_corp(st: E1894State) -> int:
    """The corporation re-placing a token removed by a split now: the first, in the current
    operating order by price (reference engine), with a token waiting; -1 if none."""
    waiting = {c for c, _ in st.board.waiting_tokens()}
    for ci in operating_order(st):
        if CORPS[ci].sym in waiting:
            return ci
    return -1


# ====================================================================== step machine


def advance(st: E1894State) -> None:
    """Skip the steps with nothing to do; stop at the first that needs a decision."""
    while st.round == "operating" and not st.discard:
        ci = operating_corp(st)
        sym = CORPS[ci].sym
        step = st.step
        if step == HOME:
            if not st.homed[ci]:
                if _place_automatic_homes(st, ci):
                    return
                st.homed[ci] = True
            st.step = REDEEM
        elif step == REPLACE:
            if st.board.waiting_tokens(sym):
                return
            st.step = TRACK
        elif step == TELEPORT:
            return
        elif step == REDEEM:
            if can_redeem(st, ci) or can_reissue(st, ci):
                return
            st.step = TRACK
        elif step == TRACK:
            if not st.final_set and (len(st.t_laid) < 2 or _lrc_pending(st, ci)):
                return
            st.step = TOKEN
        elif step == TOKEN:
            if not st.final_set and not st.t_tokened and _token_step_open(st, ci):
                return
            st.step = ROUTE
        elif step == ROUTE:
            if st.trains[ci] and has_route(st, ci):
                return
            # errata A3: no train or no route: the step is skipped, revenue 0 (withhold)
            st.t_revenue = 0
            st.step = DIVIDEND
        elif step == DIVIDEND:
            if st.t_revenue > 0:
                return
            _dividend(st, ci, "withhold")
            if st.round != "operating":
                return
            st.step = BUY_TRAIN
        elif step == BUY_TRAIN:
            if must_buy(st, ci) or can_buy_train(st, ci):
                return
            st.step = BUY_COMPANY
        elif step == BUY_COMPANY:
            if _company_step_open(st, ci):
                return
            st.step = UPDATE
        elif step == UPDATE:
            if _update_corp(st) >= 0:
                return
            _end_turn(st)
            return
        else:  # pragma: no cover
            raise AssertionError(step)


def _place_automatic_homes(st: E1894State, ci: int) -> bool:
    """Place the home tokens that need no choice; True if one needs a choice."""
    sym = CORPS[ci].sym
    for opts in tokens_mod.home_token_options(st.board, sym, _homes(st, ci)):
        if len(opts) == 1:
            tokens_mod.place_home_token(st.board, sym, opts[0].hex, opts[0].city, automatic=True)
    return bool(tokens_mod.home_token_options(st.board, sym, _homes(st, ci)))


def _homes(st: E1894State, ci: int) -> list[str] | None:
    if CORPS[ci].is_late:
        return [st.home[ci]] if st.home[ci] else []
    return None


# ====================================================================== queries


def can_redeem_at_all(st: E1894State, ci: int) -> bool:
    """Belge and the drawn French starting corporation may not redeem or reissue."""
    return ci not in st.starting_corps


def redeem_limit(st: E1894State) -> int:
    """Shares a corporation may redeem in this OR: 2 in the first OR of a set, else 1."""
    return 2 if st.or_num == 1 else 1


def redeem_counts(st: E1894State, ci: int) -> list[int]:
    """How many shares the operating corporation may redeem now in its one redemption
    (errata A6): 1 up to :func:`redeem_limit`, as many as the pool holds and its cash pays."""
    if not can_redeem_at_all(st, ci) or st.t_reissued or st.t_redeemed:
        return []
    p = price(st, ci)
    top = min(redeem_limit(st), st.pool[ci] // 10)
    return [k for k in range(1, top + 1) if k * p <= st.corp_cash[ci]]


def can_redeem(st: E1894State, ci: int) -> bool:
    """The operating corporation may redeem pool shares now (cash, limit, nothing redeemed or
    reissued this turn)."""
    return bool(redeem_counts(st, ci))


def can_reissue(st: E1894State, ci: int) -> bool:
    """Reissue when the redeemed shares outnumber the Treasury's; a corporation that redeemed
    in this turn does not reissue in it (reference behaviour)."""
    return (
        can_redeem_at_all(st, ci)
        and st.t_redeemed == 0
        and st.redeemed[ci] > 0
        and st.redeemed[ci] > st.ipo[ci]
    )


def _company_step_open(st: E1894State, ci: int) -> bool:
    """The final buy-company step waits for the corporation's ``pass`` only when (errata A5)
    it can buy a private now (the phase allows it, a player owns a private that may be sold
    to corporations, and the cheapest minimum price is within its cash), or it owns LS and
    could still use the free A12 token (not used yet, a token left). Having bought a private
    earlier in the turn does not hold it."""
    if (
        _owns(st, ci, "LS")
        and st.board.london_bonus_corporation() is None
        and tokens_mod.tokens_left(st.board, CORPS[ci].sym) > 0
    ):
        return True
    if not PHASES[st.phase].can_buy:
        return False
    privates = buyable_by_corps(st)
    return bool(privates) and min(price_range(pi)[0] for pi in privates) <= st.corp_cash[ci]


def _lrc_pending(st: E1894State, ci: int) -> bool:
    """LRC's extra lay keeps the track step open after the two lays: when the corporation owns
    LRC and has not used it, or when a player owns it, corporations may buy privates and the
    corporation's cash covers LRC's minimum price (it could be bought and used). Behaviour of
    the reference engine (recorded games; the cash condition from the differential runs)."""
    if st.lrc_used:
        return False
    li = PRIVATE_INDEX["LRC"]
    owner = st.private_owner[li]
    if owner == CORP_OWNER + ci:
        return True
    return (
        0 <= owner < CORP_OWNER
        and PHASES[st.phase].can_buy
        and price_range(li)[0] <= st.corp_cash[ci]
    )


def blocked_hexes(st: E1894State) -> tuple[str, ...]:
    """Hexes blocked by privates a player still owns (I14 LRC, H17 GLG, D17 SAC)."""
    out = []
    for sym, hex_id in BLOCKED_HEX_WHILE_PLAYER_OWNED.items():
        owner = st.private_owner[PRIVATE_INDEX[sym]]
        if 0 <= owner < CORP_OWNER:
            out.append(hex_id)
    return tuple(out)


def _owns(st: E1894State, ci: int, sym: str) -> bool:
    return st.private_owner[PRIVATE_INDEX[sym]] == CORP_OWNER + ci


def _token_step_open(st: E1894State, ci: int) -> bool:
    """The token step waits (:func:`.tokens.token_step_open`); an unused LS token counts as a
    free token (the reference's cheapest token price is then 0)."""
    sym = CORPS[ci].sym
    cost = tokens_mod.next_token_cost(st.board, sym)
    if cost is None:
        return False
    free_ls = _owns(st, ci, "LS") and st.board.london_bonus_corporation() is None
    if cost > st.corp_cash[ci] and not free_ls:
        return False
    memo = st.board.token_memo if st.options.reference_token_memo else None
    if memo is not None and sym in memo:
        # option reference_token_memo: the reference's remembered answer (Board.token_memo)
        return memo[sym]
    found = _cached(
        st,
        "tokenable",
        ci,
        lambda: tokens_mod.tokenable_city_in_reach(st.board, sym, _network(st, ci)),
    )
    if memo is not None:
        memo[sym] = found
    return found


def _network(st: E1894State, ci: int):
    """The corporation's :func:`.graph.reach` network, cached per board position."""
    return _cached(st, "network", ci, lambda: reach(st.board, CORPS[ci].sym))


def _token_options(st: E1894State, ci: int) -> list:
    return tokens_mod.legal_token_placements(st.board, CORPS[ci].sym, cash=st.corp_cash[ci])


def _cached(st: E1894State, what: str, ci: int, compute) -> bool:
    """Board queries cached per board position (the board's version counter; a clone starts
    with its parent's entries for the same position, see :meth:`E1894State.clone`)."""
    cache = st.route_cache
    version = st.board.version
    if cache.get("version") != version:
        cache.clear()
        cache["version"] = version
    key = (what, ci)
    hit = cache.get(key)
    if hit is None:
        hit = compute()
        cache[key] = hit
    return hit


def has_route(st: E1894State, ci: int) -> bool:
    """True if the corporation has a route step (and must own a train): the reference's test
    :func:`.graph.route_available` (two revenue locations met from one token; London counts
    without a ferry), cached per board position. Errata A3 / differential runs."""
    return _cached(st, "route", ci, lambda: route_available(st.board, CORPS[ci].sym))


def can_buy_ferry(st: E1894State, ci: int) -> bool:
    """True if the corporation may take a ferry marker (:func:`.tokens.check_ferry_purchase`),
    cached."""

    def compute() -> bool:
        try:
            tokens_mod.check_ferry_purchase(st.board, CORPS[ci].sym)
        except IllegalAction:
            return False
        return True

    return _cached(st, "ferry", ci, compute)


def must_buy(st: E1894State, ci: int) -> bool:
    """A corporation with no train and a route must buy one (spec "Trains and phases")."""
    return not st.trains[ci] and has_route(st, ci)


def depot_price(st: E1894State) -> int:
    """Price of the train the depot sells now."""
    return TRAINS[depot_type(st)].price


def president_cash(st: E1894State, ci: int) -> int:
    """Cash of the corporation's president (0 without one)."""
    pres = st.president[ci]
    return st.cash[pres] if pres >= 0 else 0


def emergency(st: E1894State, ci: int) -> bool:
    """Must buy a train and cannot pay the depot's cheapest alone: the president helps."""
    return not st.trains[ci] and st.corp_cash[ci] < depot_price(st) and has_route(st, ci)


def _other_trains(st: E1894State, ci: int) -> list[tuple[int, str]]:
    return [
        (cj, t) for cj in range(len(CORPS)) if cj != ci and st.floated[cj] for t in st.trains[cj]
    ]


def can_buy_train(st: E1894State, ci: int) -> bool:
    """The buy-train step has something to offer (a depot train, a trade-in, another
    corporation's train for at least 1)."""
    cash = st.corp_cash[ci]
    room = len(st.trains[ci]) < train_limit(st)
    if room and cash >= depot_price(st):
        return True
    if room and cash >= 1 and _other_trains(st, ci):
        return True
    if not st.t_traded:
        ti = depot_type(st)
        for t in st.trains[ci]:
            d = trade_in_discount(ti, t, st.options.trade_in_next_colour_only)
            if d and cash >= TRAINS[ti].price - d:
                return True
    return False


def shortfall(st: E1894State, ci: int) -> int:
    """Francs the president still lacks for the depot's cheapest train in an emergency."""
    return depot_price(st) - st.corp_cash[ci] - president_cash(st, ci)


def emergency_sales(st: E1894State, ci: int) -> list[tuple[int, int]]:
    """(corporation, count) sales the president may make now: only while money is missing,
    never more than needed, never passing the operating corporation's presidency on."""
    need = shortfall(st, ci)
    if need <= 0:
        return []
    pres = st.president[ci]
    out = []
    for cj in range(len(CORPS)):
        held = st.holdings[cj][pres]
        if not held or not st.par[cj]:
            continue
        p = price(st, cj)
        for count in range(1, held // 10 + 1):
            if (count - 1) * p >= need:
                break
            if can_sell_count(st, cj, pres, count, keep_presidency=(cj == ci)) is None:
                out.append((cj, count))
    return out


def ebuy_min_price(st: E1894State, ci: int, face: int) -> int:
    """Lowest price for a train of face value ``face`` from another corporation: 1, or, once
    the president has made an emergency sale in this turn and the corporation's cash is below
    ``face``, the money of the corporation and its president less the last share's sale
    price, plus 1 (he may not have sold more than the purchase needs; reference engine)."""
    if not st.t_sale_price or st.corp_cash[ci] >= face:
        return 1
    return st.corp_cash[ci] + president_cash(st, ci) - st.t_sale_price + 1


def liquidation_value(st: E1894State, ci: int) -> int:
    """The most the president could raise by emergency sales (each corporation's largest
    allowed sale at the current price)."""
    pres = st.president[ci]
    total = 0
    for cj in range(len(CORPS)):
        held = st.holdings[cj][pres]
        if not held or not st.par[cj]:
            continue
        best = 0
        for count in range(1, held // 10 + 1):
            if can_sell_count(st, cj, pres, count, keep_presidency=(cj == ci)) is None:
                best = count
        total += best * price(st, cj)
    return total


BANKRUPT_STEPS = frozenset({REDEEM, TRACK, TOKEN, ROUTE, DIVIDEND, BUY_TRAIN, BUY_COMPANY})
"""Steps of its own turn in which a corporation's president may declare bankruptcy."""


def can_go_bankrupt(st: E1894State, ci: int) -> bool:
    """Bankruptcy is allowed (reference engine, :mod:`.bankruptcy`) in any step of the
    corporation's turn (:data:`BANKRUPT_STEPS`) when its cash and its president's cash, plus
    in the buy-train step all he could sell by the emergency rules, are below the depot's
    cheapest train. Neither a train it must buy nor another corporation's train matters."""
    if st.step not in BANKRUPT_STEPS:
        return False
    funds = st.corp_cash[ci] + president_cash(st, ci)
    if st.step == BUY_TRAIN:
        funds += liquidation_value(st, ci)
    return funds < depot_price(st)


# ====================================================================== legal actions


def legal(st: E1894State, seat: int) -> list[LegalAction]:
    """Every move of the seat that must act now in the OR; a train bought from another
    corporation and a private bought from a player are one :class:`ActionRange` of prices
    each (every price ``apply`` accepts).
    """
    if st.discard:
        cj = st.discard[0]
        return [DiscardTrain(t) for t in dict.fromkeys(st.trains[cj])]
    ci = operating_corp(st)
    sym = CORPS[ci].sym
    step = st.step
    if step == HOME:
        for opts in tokens_mod.home_token_options(st.board, sym, _homes(st, ci)):
            if len(opts) > 1:
                return [PlaceToken(p.hex, p.city) for p in opts]
        return []
    if step == REPLACE:
        return [PlaceToken(p.hex, p.city) for p in tokens_mod.replacement_options(st.board, sym)]
    if step == UPDATE:
        cj = _update_corp(st)
        return [
            PlaceToken(p.hex, p.city)
            for p in tokens_mod.replacement_options(st.board, CORPS[cj].sym)
        ]
    out: list[LegalAction] = []
    if step == REDEEM:
        out.extend(RedeemShare(k) for k in redeem_counts(st, ci))
        if can_reissue(st, ci):
            out.append(ReissueShares())
        out.append(Pass())
        # the privates' lays (LRC, GLG/SAC teleport) may come before the track step (_lay)
        out.extend(a for a in _lay_options(st, ci) if a.company)
    elif step == TRACK:
        out.extend(_lay_options(st, ci))
        out.append(Pass())
    elif step == TELEPORT:
        return teleport.decision_options(st, ci)
    elif step == TOKEN:
        out.extend(PlaceToken(p.hex, p.city) for p in _token_options(st, ci))
        out.append(Pass())
    elif step == ROUTE:
        best = routes_mod.best_routes(st.board, sym, st.trains[ci], PHASES[st.phase].name)
        out.append(RunRoutes(tuple(routes_mod.route_to_string(r) for r in best.routes)))
    elif step == DIVIDEND:
        out.append(Dividend("payout"))
        out.append(Dividend("withhold"))
    elif step == BUY_TRAIN:
        out.extend(_train_options(st, ci))
        if emergency(st, ci):
            for cj, count in emergency_sales(st, ci):
                out.append(SellShares(CORPS[cj].sym, count))
        if not must_buy(st, ci):
            out.append(Pass())
    elif step == BUY_COMPANY:
        out.append(Pass())
    if can_go_bankrupt(st, ci):
        out.append(Bankrupt())
    out.extend(_passive_options(st, ci))
    return out


def _lay_options(st: E1894State, ci: int) -> list[Action]:
    sym = CORPS[ci].sym
    phase = PHASES[st.phase].name
    cash = st.corp_cash[ci]
    blocked = blocked_hexes(st)
    out: list[Action] = []
    if len(st.t_laid) < 2:
        for lay in track_mod.legal_tile_lays(
            st.board, sym, phase, laid=st.t_laid, cash=cash, blocked_hexes=blocked
        ):
            out.append(LayTile(lay.hex, lay.tile, lay.rotation))
        for priv in TELEPORT_PRIVATES:
            if _owns(st, ci, priv) and not st.teleport_used:
                for lay in track_mod.legal_tile_lays(
                    st.board,
                    sym,
                    phase,
                    laid=st.t_laid,
                    cash=cash,
                    blocked_hexes=blocked,
                    special=priv,
                ):
                    out.append(LayTile(lay.hex, lay.tile, lay.rotation, priv))
    if _owns(st, ci, "LRC") and not st.lrc_used:
        for lay in track_mod.legal_tile_lays(
            st.board,
            sym,
            phase,
            laid=st.t_laid,
            cash=cash,
            blocked_hexes=blocked,
            special="LRC",
        ):
            out.append(LayTile(lay.hex, lay.tile, lay.rotation, "LRC"))
    if st.t_lrc_hex and len(st.t_laid) == 1:  # no second lay on LRC's hex of this turn
        out = [a for a in out if a.company == "LRC" or a.hex != st.t_lrc_hex]
    return out


def _other_train_range(t: str, low: int, cash: int, em: bool, money: int) -> ActionRange | None:
    """The prices a corporation may pay for another corporation's train ``t``: any from
    ``low`` (1, or more after the president's emergency sale: :func:`ebuy_min_price`) to its
    own cash, or in an emergency (:func:`emergency`) up to the face value when the
    president's money (``money`` = both together) covers it; ``None`` when nothing."""
    top = cash
    if em:
        top = max(top, min(TRAINS[_train_index(t)].price, money))
    lo = max(1, low)
    return ActionRange.of(BuyTrain(t, lo, None), "price", lo, top)


def _train_index(train_id: str) -> int:
    return TRAIN_INDEX[train_name(train_id)]


def _train_options(st: E1894State, ci: int) -> list[LegalAction]:
    out: list[LegalAction] = []
    cash = st.corp_cash[ci]
    room = len(st.trains[ci]) < train_limit(st)
    em = emergency(st, ci)
    money = cash + president_cash(st, ci) if em else cash
    ti = depot_type(st)
    tid = depot_train_id(st)
    full = TRAINS[ti].price
    if room and money >= full:
        out.append(BuyTrain(tid, full, None))
    if not st.t_traded:
        for old in dict.fromkeys(st.trains[ci]):
            d = trade_in_discount(ti, old, st.options.trade_in_next_colour_only)
            if d and cash >= full - d:
                out.append(BuyTrain(tid, full - d, old))
    if room:
        for _cj, t in _other_trains(st, ci):
            low = ebuy_min_price(st, ci, TRAINS[_train_index(t)].price)
            prices = _other_train_range(t, low, cash, em, money)
            if prices is not None:
                out.append(prices)
    return out


def _passive_options(st: E1894State, ci: int) -> list[LegalAction]:
    out: list[LegalAction] = []
    if st.step not in PASSIVE_STEPS:
        return out
    sym = CORPS[ci].sym
    cash = st.corp_cash[ci]
    if PHASES[st.phase].can_buy:
        for pi in buyable_by_corps(st):
            lo, hi = price_range(pi)
            prices = ActionRange.of(BuyCompany(PRIVATES[pi].sym, lo), "price", lo, min(hi, cash))
            if prices is not None:
                out.append(prices)
    if cash >= _ferry_cost(st, ci) and can_buy_ferry(st, ci):
        out.append(BuyFerry())
    if _owns(st, ci, "LS") and not st.final_set:
        try:
            tokens_mod.check_ls_token(st.board, sym)
            out.append(PlaceToken("A12", 0, "LS"))
        except IllegalAction:
            pass
    return out


def _ferry_cost(st: E1894State, ci: int) -> int:
    return FERRY_COST_LS if _owns(st, ci, "LS") else FERRY_COST


# ====================================================================== applying


def apply(st: E1894State, seat: int, action: Action) -> list[dict]:
    """Check and apply an OR move (raises :class:`IllegalAction` before any change), then skip the
    steps with nothing to do.
    """
    if st.discard:
        if not isinstance(action, DiscardTrain):
            raise IllegalAction(
                "must_discard",
                f"{S_TRAINS}: {CORPS[st.discard[0]].sym} is over the train limit and must "
                "discard first",
            )
        events = _discard(st, action)
        advance(st)
        _stock_market_end(st)
        return events
    ci = operating_corp(st)
    step = st.step
    if isinstance(action, PlaceToken):
        events = _place_token(st, ci, action)
    elif isinstance(action, (BuyCompany, BuyFerry)) or (
        isinstance(action, PlaceToken) and action.company == "LS"
    ):
        events = _passive(st, ci, action)
    elif step in (HOME, REPLACE, UPDATE):
        raise IllegalAction("token_pending", f"{S_TRACK}: a token must be placed first ({step})")
    elif isinstance(action, Pass):
        events = _pass(st, ci)
    elif isinstance(action, (RedeemShare, ReissueShares)):
        events = _redeem(st, ci, action)
    elif isinstance(action, LayTile):
        events = _lay(st, ci, action)
    elif isinstance(action, RunRoutes):
        events = _run(st, ci, action)
    elif isinstance(action, Dividend):
        events = _dividend_action(st, ci, action)
    elif isinstance(action, BuyTrain):
        events = _buy_train(st, ci, action)
    elif isinstance(action, SellShares):
        events = _emergency_sell(st, ci, seat, action)
    elif isinstance(action, Bankrupt):
        if not can_go_bankrupt(st, ci):
            raise IllegalAction(
                "not_bankrupt",
                f"{S_TRAINS}: bankruptcy only when the corporation's and its president's money "
                "(and, in the buy-train step, all he may sell) cannot pay the depot's cheapest "
                "train",
            )
        return bankruptcy.declare(st, ci)
    elif isinstance(action, DiscardTrain):
        raise IllegalAction("no_discard", f"{S_TRAINS}: no corporation is over its train limit")
    else:
        raise IllegalAction(
            "not_in_operating_round",
            f"§Operating round: {action.TYPE} is not possible in an operating round",
        )
    advance(st)
    _stock_market_end(st)
    return events


def _stock_market_end(st: E1894State) -> None:
    """The 450 cell ends the game once the action and the automatic steps after it (the
    next corporations' skipped steps, their withholds) are done, within this OR (reference
    engine: the end check follows the round's own processing)."""
    if st.round == "operating":
        st.check_stock_market_end()


def _wrong_step(action: Action, step: str) -> IllegalAction:
    return IllegalAction(
        "wrong_step", f"§Operating round: {action.TYPE} is not possible in the {step} step"
    )


def _pass(st: E1894State, ci: int) -> list[dict]:
    step = st.step
    if step == TELEPORT:
        st.step = st.t_teleport_step or TRACK
        return teleport.decline(st, ci)
    if step == REDEEM:
        st.step = TRACK
    elif step == TRACK:
        st.step = TOKEN
    elif step == TOKEN:
        st.step = ROUTE
    elif step == BUY_TRAIN:
        if must_buy(st, ci):
            raise IllegalAction(
                "must_buy_train",
                f"{S_TRAINS}: a corporation with a route and no train must buy a train",
            )
        st.step = BUY_COMPANY
    elif step == BUY_COMPANY:
        st.step = UPDATE
    else:
        raise IllegalAction("cannot_pass", f"§Operating round: the {step} step cannot be passed")
    return [{"type": "pass", "corporation": CORPS[ci].sym, "step": step}]


# ---------------------------------------------------------------------- redeem / reissue


def _redeem(st: E1894State, ci: int, action: Action) -> list[dict]:
    sym = CORPS[ci].sym
    if st.step != REDEEM:
        raise _wrong_step(action, st.step)
    if not can_redeem_at_all(st, ci):
        raise IllegalAction(
            "may_not_redeem",
            f"{S_SHARES}: Belge and the starting French corporation may not redeem or reissue",
        )
    if isinstance(action, RedeemShare):
        return _redeem_shares(st, ci, action.count)
    if not can_reissue(st, ci):
        raise IllegalAction(
            "cannot_reissue",
            f"{S_SHARES}: reissue only when the redeemed shares outnumber the Treasury's, and "
            "not in a turn with a redemption",
        )
    n = st.redeemed[ci] // 10
    st.ipo[ci] += st.redeemed[ci]
    st.redeemed[ci] = 0
    st.corp_cash[ci] += 100 * n
    st.par[ci] = 100
    st.t_reissued = True
    st.step = TRACK  # a reissue also ends the redeem step
    return [{"type": "reissued", "corporation": sym, "count": n}]


def _redeem_shares(st: E1894State, ci: int, count: int) -> list[dict]:
    """One redemption of ``count`` pool shares at the market price each; the redeem step
    ends (errata A6: one action, 1 share, or 2 in the first OR of a set)."""
    sym = CORPS[ci].sym
    if count < 1 or count > redeem_limit(st):
        raise IllegalAction(
            "redeem_limit", f"{S_SHARES}: a redemption is 1 to {redeem_limit(st)} share(s) here"
        )
    if st.pool[ci] < 10 * count:
        raise IllegalAction(
            "none_in_pool", f"{S_SHARES}: the pool holds {st.pool[ci] // 10} {sym} share(s)"
        )
    cost = price(st, ci) * count
    if st.corp_cash[ci] < cost:
        raise IllegalAction("insufficient_cash", f"{S_SHARES}: the shares cost {cost}")
    st.corp_cash[ci] -= cost
    st.pool[ci] -= 10 * count
    st.redeemed[ci] += 10 * count
    st.t_redeemed += count
    st.step = TRACK
    return [{"type": "redeemed", "corporation": sym, "count": count, "price": cost}]


# ---------------------------------------------------------------------- track


def _lay(st: E1894State, ci: int, action: LayTile) -> list[dict]:
    # the privates' lays (LRC's extra lay, the GLG/SAC teleport) are powers usable until the
    # track step ends, so also in the redeem step; the redeem step then goes on (it ends if no
    # redemption is affordable any more). Reference engine: its 18xx.games fixture
    # 1894_game_end_bankrupt, actions 445 (LRC) and 568-570 (GLG, its token, the redeem pass).
    if st.step != TRACK and not (st.step == REDEEM and action.company):
        raise _wrong_step(action, st.step)
    sym = CORPS[ci].sym
    special = action.company or ""
    if special:
        if special not in ("LRC", *TELEPORT_PRIVATES):
            raise MalformedAction("unknown_special", f"{special} has no tile power")
        if not _owns(st, ci, special):
            raise IllegalAction("not_owner", f"{S_TRACK}: {sym} does not own {special}")
        if special == "LRC" and st.lrc_used:
            raise IllegalAction("lrc_used", f"{S_TRACK}: LRC's extra tile is once per game")
        if special in TELEPORT_PRIVATES:
            teleport.check_unused(st, special)
    if special != "LRC" and len(st.t_laid) >= 2:
        raise IllegalAction("no_lays_left", f"{S_TRACK}: two tile lays per OR")
    if special != "LRC" and len(st.t_laid) == 1 and action.hex == st.t_lrc_hex:
        raise IllegalAction(
            "same_hex", f"{S_TRACK}: the second lay may not be on a hex laid this turn (LRC's)"
        )
    old_paths = len(st.board.tile(action.hex).base_paths) if special == "LRC" else 0
    res = track_mod.lay_tile(
        st.board,
        sym,
        PHASES[st.phase].name,
        action.hex,
        action.tile,
        action.rotation,
        laid=st.t_laid,
        cash=st.corp_cash[ci],
        blocked_hexes=blocked_hexes(st),
        special=special,
    )
    # LRC on printed Paris (no track): the corporation chooses its token's city (REPLACE)
    if special == "LRC" and tokens_mod.lift_after_special_lay(st.board, sym, res.hex, old_paths):
        st.step = REPLACE
    st.corp_cash[ci] -= res.cost
    if special == "LRC":
        st.lrc_used = True
        st.t_lrc_hex = res.hex
    else:
        st.t_laid.append((res.hex, res.upgrade))
    if special in TELEPORT_PRIVATES and teleport.after_lay(st, ci, special):
        st.t_teleport_step = st.step  # back to it after the decision (redeem or track)
        st.step = TELEPORT
    if any(c == sym for c, _ in res.removed):
        st.step = REPLACE
    return [
        {
            "type": "tile",
            "corporation": sym,
            "hex": res.hex,
            "tile": res.tile_id,
            "rotation": action.rotation,
            "cost": res.cost,
        }
    ]


# ---------------------------------------------------------------------- tokens


def _place_token(st: E1894State, ci: int, action: PlaceToken) -> list[dict]:
    step = st.step
    if action.company == "LS":
        return _passive(st, ci, action)
    if step == UPDATE:
        cj = _update_corp(st)
        sym = CORPS[cj].sym
        if action.company:
            raise _wrong_step(action, step)
        tokens_mod.replace_token(st.board, sym, action.hex, action.city)
        return [{"type": "token", "corporation": sym, "hex": action.hex, "city": action.city}]
    sym = CORPS[ci].sym
    if step == HOME:
        if action.company:
            raise _wrong_step(action, step)
        tokens_mod.place_home_token(st.board, sym, action.hex, action.city)
        return [{"type": "token", "corporation": sym, "hex": action.hex, "city": action.city}]
    if step == REPLACE:
        if action.company:
            raise _wrong_step(action, step)
        tokens_mod.replace_token(st.board, sym, action.hex, action.city)
        return [{"type": "token", "corporation": sym, "hex": action.hex, "city": action.city}]
    if step == TELEPORT:
        events = teleport.place_token(st, ci, action)
        st.step = st.t_teleport_step or TRACK
        return events
    if action.company in TELEPORT_PRIVATES:
        raise IllegalAction(
            "no_teleport_token",
            f"{S_TRACK}: {action.company}'s free token is its decision right after its lay",
        )
    if action.company:
        raise MalformedAction("unknown_special", f"{action.company} has no token power")
    if step != TOKEN:
        raise _wrong_step(action, step)
    p = tokens_mod.check_token_placement(
        st.board, sym, action.hex, action.city, cash=st.corp_cash[ci], network=_network(st, ci)
    )
    st.board.put_token(sym, action.hex, action.city)
    st.corp_cash[ci] -= p.cost
    st.t_tokened = True
    return [
        {
            "type": "token",
            "corporation": sym,
            "hex": action.hex,
            "city": action.city,
            "cost": p.cost,
        }
    ]


# ---------------------------------------------------------------------- passive actions


def _passive(st: E1894State, ci: int, action: Action) -> list[dict]:
    sym = CORPS[ci].sym
    if st.step not in PASSIVE_STEPS:
        raise _wrong_step(action, st.step)
    if isinstance(action, BuyCompany):
        pi = PRIVATE_INDEX.get(action.company)
        if pi is None:
            raise MalformedAction("unknown_company", f"no private named {action.company!r}")
        if not PHASES[st.phase].can_buy:
            raise IllegalAction(
                "no_company_buying",
                f"{S_TRAINS}: corporations buy privates only in the Green, Blue and Brown phases",
            )
        owner = st.private_owner[pi]
        if not 0 <= owner < CORP_OWNER:
            raise IllegalAction(
                "not_player_owned", f"{S_TRAINS}: {action.company} is not owned by a player"
            )
        if PRIVATES[pi].major_of:
            raise IllegalAction(
                "no_buy", f"§Setup and auction: {action.company} may not be sold to a corporation"
            )
        lo, hi = price_range(pi)
        if not lo <= action.price <= hi:
            raise IllegalAction("bad_price", f"{S_TRAINS}: {action.company} sells for {lo} to {hi}")
        if st.corp_cash[ci] < action.price:
            raise IllegalAction("insufficient_cash", f"{S_TRAINS}: {sym} has {st.corp_cash[ci]}")
        st.corp_cash[ci] -= action.price
        st.cash[owner] += action.price
        st.private_owner[pi] = CORP_OWNER + ci
        st.t_bought_company = True
        return [
            {
                "type": "bought_private",
                "corporation": sym,
                "company": action.company,
                "price": action.price,
            }
        ]
    if isinstance(action, BuyFerry):
        cost = _ferry_cost(st, ci)
        tokens_mod.check_ferry_purchase(st.board, sym)
        if st.corp_cash[ci] < cost:
            raise IllegalAction("insufficient_cash", f"{S_LONDON}: a ferry marker costs {cost}")
        st.corp_cash[ci] -= cost
        st.board.give_ferry(sym)
        return [{"type": "ferry", "corporation": sym, "cost": cost}]
    assert isinstance(action, PlaceToken)
    if not _owns(st, ci, "LS"):
        raise IllegalAction("not_owner", f"{S_LONDON}: {sym} does not own LS")
    if st.final_set:
        raise IllegalAction("last_set", "§Game end: no tokens in the last OR set")
    if action.hex != "A12" or action.city != 0:
        raise IllegalAction("ls_a12", f"{S_LONDON}: LS's token goes on A12")
    tokens_mod.place_ls_token(st.board, sym)
    return [{"type": "token", "corporation": sym, "hex": "A12", "city": 0}]


# ---------------------------------------------------------------------- routes and dividends


def _run(st: E1894State, ci: int, action: RunRoutes) -> list[dict]:
    if st.step != ROUTE:
        raise _wrong_step(action, st.step)
    sym = CORPS[ci].sym
    for text in action.routes:
        train = text.partition(":")[0]
        if train not in st.trains[ci]:
            raise IllegalAction("not_own_train", f"{S_TRAINS}: {sym} does not own train {train}")
    rs = routes_mod.value_route_strings(st.board, sym, PHASES[st.phase].name, action.routes)
    st.t_revenue = rs.total
    st.t_routes = tuple(routes_mod.route_to_string(r) for r in rs.routes)
    st.step = DIVIDEND
    return [
        {
            "type": "routes",
            "corporation": sym,
            "revenue": rs.total,
            "routes": [f"{r.train}:{'-'.join(r.hexes)}={r.revenue}" for r in rs.routes],
        }
    ]


def _dividend_action(st: E1894State, ci: int, action: Dividend) -> list[dict]:
    if st.step != DIVIDEND:
        raise _wrong_step(action, st.step)
    if action.kind not in ("payout", "withhold"):
        raise MalformedAction("bad_kind", "dividend kind is 'payout' or 'withhold'")
    return _dividend(st, ci, action.kind)


def _dividend(st: E1894State, ci: int, kind: str) -> list[dict]:
    """Pay out (per 10%: revenue / 10; Treasury and redeemed shares pay the corporation, pool
    shares nobody; price right) or withhold (all to the corporation; price left). Then the
    corporation has operated: its major shareholding closes."""
    rev = st.t_revenue
    sym = CORPS[ci].sym
    if kind == "payout":
        for seat in range(st.num_players):
            pct = st.holdings[ci][seat]
            if pct:
                st.cash[seat] += rev * pct // 100
        st.corp_cash[ci] += rev * (st.ipo[ci] + st.redeemed[ci]) // 100
        move_right(st, ci)
    else:
        st.corp_cash[ci] += rev
        move_left(st, ci)
    st.operated[ci] = True
    major = MAJOR_PRIVATE_OF.get(sym)
    if major:
        close_private(st, PRIVATE_INDEX[major])
    st.step = BUY_TRAIN
    return [{"type": "dividend", "corporation": sym, "kind": kind, "revenue": rev}]


# ---------------------------------------------------------------------- trains


def _buy_train(st: E1894State, ci: int, action: BuyTrain) -> list[dict]:
    if st.step != BUY_TRAIN:
        raise _wrong_step(action, st.step)
    sym = CORPS[ci].sym
    cash = st.corp_cash[ci]
    room = len(st.trains[ci]) < train_limit(st)
    em = emergency(st, ci)
    pres = st.president[ci]
    money = cash + president_cash(st, ci) if em else cash
    tid = depot_train_id(st)
    if action.train == tid:
        ti = depot_type(st)
        full = TRAINS[ti].price
        discount = 0
        if action.exchange is not None:
            if st.t_traded:
                raise IllegalAction("one_trade_in", f"{S_TRAINS}: one trade-in per buy step")
            if action.exchange not in st.trains[ci]:
                raise IllegalAction(
                    "not_own_train", f"{S_TRAINS}: {sym} has no train {action.exchange}"
                )
            discount = trade_in_discount(ti, action.exchange, st.options.trade_in_next_colour_only)
            if not discount:
                raise IllegalAction(
                    "no_trade_in",
                    f"{S_TRAINS}: a {train_name(action.exchange)} cannot be traded in for a "
                    f"{TRAINS[ti].name}",
                )
        elif not room:
            raise IllegalAction("train_limit", f"{S_TRAINS}: the train limit is {train_limit(st)}")
        cost = full - discount
        if action.price != cost:
            raise IllegalAction("wrong_price", f"{S_TRAINS}: this train costs {cost}")
        if cost > money or (discount and cost > cash):
            raise IllegalAction("insufficient_cash", f"{S_TRAINS}: {sym} cannot pay {cost}")
        _pay(st, ci, pres, cost)
        if action.exchange is not None:
            st.trains[ci].remove(action.exchange)
            st.t_traded = True
        got, events = take_from_depot(st, ci)
        events.insert(
            0,
            {
                "type": "train",
                "corporation": sym,
                "train": got,
                "price": cost,
                "exchange": action.exchange,
            },
        )
        st.discard = crowded_corps(st)
        return events
    cj = owner_of_train(st, action.train)
    if cj < 0:
        if action.train.rpartition("-")[0] in {t.name for t in TRAINS}:
            raise IllegalAction(
                "not_available", f"{S_TRAINS}: train {action.train} is not for sale (next: {tid})"
            )
        raise MalformedAction("unknown_train", f"there is no train {action.train!r}")
    if cj == ci:
        raise IllegalAction("own_train", f"{S_TRAINS}: {sym} already owns {action.train}")
    if action.exchange is not None:
        raise IllegalAction(
            "no_trade_in", f"{S_TRAINS}: trade-ins are only for trains from the depot"
        )
    if not room:
        raise IllegalAction("train_limit", f"{S_TRAINS}: the train limit is {train_limit(st)}")
    face = TRAINS[_train_index(action.train)].price
    if action.price < 1:
        raise IllegalAction("bad_price", f"{S_TRAINS}: a train costs at least 1")
    low = ebuy_min_price(st, ci, TRAINS[_train_index(action.train)].price)
    if action.price < low:
        raise IllegalAction(
            "sold_more_than_needed",
            f"{S_TRAINS}: after the president's emergency sale this train costs at least {low} "
            "(no more may be sold than the purchase needs)",
        )
    if action.price > cash and not (em and action.price <= face and action.price <= money):
        raise IllegalAction(
            "insufficient_cash",
            f"{S_TRAINS}: {sym} cannot pay {action.price} (with the president's help at most "
            "the face value)",
        )
    _pay(st, ci, pres, action.price)
    st.corp_cash[cj] += action.price
    st.trains[cj].remove(action.train)
    st.trains[ci].append(action.train)
    return [
        {
            "type": "train",
            "corporation": sym,
            "train": action.train,
            "price": action.price,
            "from": CORPS[cj].sym,
        }
    ]


def _pay(st: E1894State, ci: int, pres: int, cost: int) -> None:
    """The corporation pays; in an emergency its president pays what it lacks."""
    if cost <= st.corp_cash[ci]:
        st.corp_cash[ci] -= cost
        return
    st.cash[pres] -= cost - st.corp_cash[ci]
    st.corp_cash[ci] = 0


def _emergency_sell(st: E1894State, ci: int, seat: int, action: SellShares) -> list[dict]:
    cj = CORP_INDEX.get(action.corporation)
    if cj is None:
        raise MalformedAction("unknown_corporation", f"no corporation {action.corporation!r}")
    if st.step != BUY_TRAIN or not emergency(st, ci):
        raise IllegalAction(
            "no_emergency",
            f"{S_TRAINS}: the president sells shares in an OR only to buy a forced train",
        )
    if (cj, action.count) not in emergency_sales(st, ci):
        if shortfall(st, ci) <= 0:
            raise IllegalAction("not_needed", f"{S_TRAINS}: the president has enough money")
        why = can_sell_count(st, cj, seat, action.count, keep_presidency=(cj == ci))
        raise IllegalAction(
            "cannot_sell",
            f"{S_TRAINS}: {why or 'an emergency sale may not raise more than needed'}",
        )
    event = sell_shares(st, cj, seat, action.count)
    st.t_sale_price = event["amount"] // action.count
    return [event]


def _discard(st: E1894State, action: DiscardTrain) -> list[dict]:
    cj = st.discard[0]
    if action.train not in st.trains[cj]:
        raise IllegalAction(
            "not_own_train", f"{S_TRAINS}: {CORPS[cj].sym} has no train {action.train}"
        )
    st.trains[cj].remove(action.train)
    st.discard = crowded_corps(st)
    return [{"type": "discard", "corporation": CORPS[cj].sym, "train": action.train}]
