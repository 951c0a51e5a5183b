"""Step 7 of a corporation's turn: buy trains, from the depot or from other corporations.

Spec: designer's rules 7.3.7 (7.3.7.1 "Purchase trains", 7.3.7.2 "Upgrade a train", 7.3.7.3
"Emergency train purchasing"); the 1894 rules summary, "Trains and phases" (the depot,
phases and limits are :mod:`..trains`).

* From the depot at its price, or trading a train in for the next colour (one trade-in per
  step); from another corporation for any price from 1.
* A corporation without trains that has a route must buy one (no ``pass``). When it cannot
  pay the depot's cheapest, its president helps with his money and, while money is still
  missing, emergency sales (never more than needed, never passing on its presidency); a train
  from another corporation then costs at most its face value. Otherwise the president goes
  bankrupt (:mod:`.anytime`, :mod:`..bankruptcy`).
* A purchase that crowds a corporation over the (new) train limit makes it discard first
  (:func:`discard`, a step of its own for the corporation concerned).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import (
    Action,
    ActionRange,
    Event,
    IllegalAction,
    LegalAction,
    MalformedAction,
)

from ..actions import BuyTrain, DiscardTrain, Pass, SellShares
from ..data import CORP_INDEX, CORPS, TRAIN_INDEX, TRAINS, train_name
from ..market import price
from ..shares import can_sell_count, sell_shares
from ..trains import (
    crowded_corps,
    depot_train_id,
    depot_type,
    owner_of_train,
    take_from_depot,
    trade_in_discount,
    train_limit,
)
from .common import BUY_TRAIN, DONE, S_TRAINS, has_route, pass_event

if TYPE_CHECKING:
    from ..state import E1894State

NAME = BUY_TRAIN
OWN_TURN = True
WAITS_FOR_TOKEN = False
HANDLES: tuple[type[Action], ...] = (BuyTrain, SellShares, Pass)


# ---------------------------------------------------------------------- queries


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


def other_trains(st: E1894State, ci: int) -> list[tuple[int, str]]:
    """(corporation, train id) of every train the floated other corporations own."""
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
    if room and cash >= 1 and other_trains(st, ci):
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


def skip(st: E1894State, ci: int) -> bool:
    """No train it must buy and none it can buy."""
    return not (must_buy(st, ci) or can_buy_train(st, ci))


# ---------------------------------------------------------------------- legal moves


def legal(st: E1894State, ci: int) -> list[LegalAction]:
    """The purchases (:func:`train_options`), in an emergency the president's sales, and
    ``pass`` unless a train must be bought."""
    out = train_options(st, ci)
    if emergency(st, ci):
        for cj, count in emergency_sales(st, ci):
            out.append(SellShares(CORPS[cj].sym, count))
    if not must_buy(st, ci):
        out.append(Pass())
    return out


def _train_index(train_id: str) -> int:
    return TRAIN_INDEX[train_name(train_id)]


def other_train_range(t: str, low: int, cash: int, em: bool, money: int) -> ActionRange | None:
    """The prices a corporation may pay for another corporation's train ``t``: any from
    ``low`` (1, or more after the president's emergency sale: :func:`ebuy_min_price`) to its
    own cash, or in an emergency (:func:`emergency`) up to the face value when the
    president's money (``money`` = both together) covers it; ``None`` when nothing."""
    top = cash
    if em:
        top = max(top, min(TRAINS[_train_index(t)].price, money))
    lo = max(1, low)
    return ActionRange.of(BuyTrain(t, lo, None), "price", lo, top)


def train_options(st: E1894State, ci: int) -> list[LegalAction]:
    """The depot's train (with the president's money in an emergency), each trade-in, and a
    price range for each train of another corporation."""
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
        for _cj, t in other_trains(st, ci):
            low = ebuy_min_price(st, ci, TRAINS[_train_index(t)].price)
            prices = other_train_range(t, low, cash, em, money)
            if prices is not None:
                out.append(prices)
    return out


# ---------------------------------------------------------------------- applying


def apply(st: E1894State, ci: int, seat: int, action: Action) -> tuple[list[Event], str | None]:
    """A purchase or an emergency sale (the step goes on), or ``pass`` (the step ends).

    Raises:
        IllegalAction: ``must_buy_train`` (pass with a forced train), and the codes of
            :func:`buy` and :func:`emergency_sell`.
        MalformedAction: ``unknown_train``, ``unknown_corporation``.
    """
    if isinstance(action, Pass):
        if must_buy(st, ci):
            raise IllegalAction(
                "must_buy_train",
                f"{S_TRAINS}: a corporation with a route and no train must buy a train",
            )
        return [pass_event(ci, NAME)], DONE
    if isinstance(action, SellShares):
        return emergency_sell(st, ci, seat, action), None
    assert isinstance(action, BuyTrain)
    return buy(st, ci, action), None


def buy(st: E1894State, ci: int, action: BuyTrain) -> list[Event]:
    """Buy ``action.train`` for ``action.price``: the depot's next train (optionally trading
    one in) or another corporation's. Over-limit corporations must then discard.

    Raises:
        IllegalAction: ``one_trade_in``, ``not_own_train``, ``no_trade_in``, ``train_limit``,
            ``wrong_price``, ``insufficient_cash``, ``not_available``, ``own_train``,
            ``bad_price``, ``sold_more_than_needed``.
        MalformedAction: ``unknown_train``.
    """
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


def refuse_sale(st: E1894State, ci: int, action: SellShares) -> Exception:
    """Why a share sale is refused outside an emergency: ``unknown_corporation`` or
    ``no_emergency``."""
    if CORP_INDEX.get(action.corporation) is None:
        return MalformedAction("unknown_corporation", f"no corporation {action.corporation!r}")
    return IllegalAction(
        "no_emergency",
        f"{S_TRAINS}: the president sells shares in an OR only to buy a forced train",
    )


def emergency_sell(st: E1894State, ci: int, seat: int, action: SellShares) -> list[Event]:
    """The president's emergency sale (:func:`emergency_sales` lists the allowed ones).

    Raises:
        MalformedAction: ``unknown_corporation``.
        IllegalAction: ``no_emergency``, ``not_needed``, ``cannot_sell``.
    """
    cj = CORP_INDEX.get(action.corporation)
    if cj is None or not emergency(st, ci):
        raise refuse_sale(st, ci, action)
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


# ---------------------------------------------------------------------- discarding


def discard_options(st: E1894State) -> list[LegalAction]:
    """The trains the first crowded corporation may discard (one entry per train id)."""
    cj = st.discard[0]
    return [DiscardTrain(t) for t in dict.fromkeys(st.trains[cj])]


def discard(st: E1894State, action: Action) -> list[Event]:
    """The first corporation over the train limit discards a train to the pool.

    Raises:
        IllegalAction: ``must_discard`` (another move first), ``not_own_train``.
    """
    cj = st.discard[0]
    if not isinstance(action, DiscardTrain):
        raise IllegalAction(
            "must_discard",
            f"{S_TRAINS}: {CORPS[cj].sym} is over the train limit and must discard first",
        )
    if action.train not in st.trains[cj]:
        raise IllegalAction(
            "not_own_train", f"{S_TRAINS}: {CORPS[cj].sym} has no train {action.train}"
        )
    st.trains[cj].remove(action.train)
    st.discard = crowded_corps(st)
    return [{"type": "discard", "corporation": CORPS[cj].sym, "train": action.train}]
