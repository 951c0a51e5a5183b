"""Stock rounds: sell-buy-sell turns, pars, limits, the end-of-round price rises.

Spec: the 1894 rules summary, "Shares and the stock market" and "Setup and auction":

* A turn: sell any shares, then buy one share (or open a corporation with a par), then sell
  again; ``pass`` ends the turn. No selling in the first stock round. A player may not buy a
  corporation he sold in this round.
* Buying: from the Treasury at the par price or from the pool at the market price (the money
  goes to the bank: full capitalisation). A corporation floats when 60% is sold (the Treasury
  holds at most 40%) and then receives ten times its par.
* Limits: the certificate limit (18 / 14; privates count; shares of a corporation priced in
  the gray zone do not), at most 60% of a corporation (not in the gray zone), at most 50% of a
  corporation in the pool. In the gray zone the president may buy two shares of his own
  corporation in one turn.
* Par in a stock round: 95, 80 or 67 (``options.strict_stock_round_par``); LF and LB only after
  the first 5+1, and their president then chooses their home.
* A player over the certificate limit (after prices left the gray zone) must sell first.
* The round ends when every player has passed in a row; a player with nothing to do passes
  automatically; a player whose turn has nothing left to do ends it automatically. The next
  order is the order of passing (first to pass first).
* At the end a sold-out corporation (players and its redeemed shares hold 100%) rises one
  row, one more if it is in the gray zone, one more if its president and its redeemed shares
  hold 80% or more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.kernel.engine import Action, Event, IllegalAction, LegalAction, MalformedAction

from .actions import BuyShares, ChooseHome, Par, Pass, SellShares
from .data import CORP_INDEX, CORPS, MARKET, PAR_PRICES_ALL, PAR_PRICES_SR
from .market import in_gray, move_up, operating_order, place, price
from .shares import can_sell_count, cert_count, cert_limit, sell_shares, update_president
from .tokens import reserve_late_home

if TYPE_CHECKING:
    from .state import E1894State


def start_stock_round(st: E1894State) -> None:
    """A new stock round: the player order's first player starts; idle players pass."""
    st.round = "stock"
    st.sr_number += 1
    st.sr_turn = 0
    st.sr_passed = [False] * st.num_players
    st.sr_pass_order = []
    st.sr_sold = [0] * st.num_players
    _new_turn(st)
    _skip_idle(st)


def _new_turn(st: E1894State) -> None:
    st.sr_acted = False
    st.sr_buys = 0
    st.sr_buy_corp = -1


def active_seat(st: E1894State) -> int:
    """The seat whose turn it is."""
    return st.order[st.sr_turn]


def par_prices(st: E1894State) -> tuple[int, ...]:
    """Par prices allowed in a stock round (95/80/67, or all four without the strict option)."""
    return PAR_PRICES_SR if st.options.strict_stock_round_par else PAR_PRICES_ALL


# ------------------------------------------------------------------ what a player may do


def buy_price(st: E1894State, ci: int, source: str) -> int:
    """Price of one share from ``source``: the par from the Treasury, the market price from the
    pool.
    """
    return st.par[ci] if source == "treasury" else price(st, ci)


def over_limit(st: E1894State, seat: int) -> bool:
    """More certificates than the limit (prices left the gray zone): the player must sell
    before anything else."""
    return cert_count(st, seat) > cert_limit(st)


def _must_sell(st: E1894State, seat: int) -> IllegalAction:
    return IllegalAction(
        "over_certificate_limit",
        f"§Stock round: over the certificate limit of {cert_limit(st)}, the player must sell first",
    )


def _certificate_limit_refusal(st: E1894State, seat: int) -> IllegalAction | None:
    """Why ``seat`` may not take one more certificate (a buy or a par): it would go over the
    certificate limit (``None``: it may)."""
    if cert_count(st, seat) + 1 > cert_limit(st):
        return IllegalAction(
            "certificate_limit", f"§Stock round: the certificate limit is {cert_limit(st)}"
        )
    return None


def buy_refusal(st: E1894State, seat: int, ci: int, source: str) -> IllegalAction | None:
    """Why ``seat`` may not buy a share of ``ci`` from ``source`` now (``None``: may)."""
    sym = CORPS[ci].sym
    if over_limit(st, seat):
        return _must_sell(st, seat)
    if st.par[ci] == 0:
        return IllegalAction("not_parred", f"§Stock round: {sym} has no par yet")
    if source == "treasury":
        if st.ipo[ci] < 10:
            return IllegalAction("none_in_treasury", f"§Stock round: {sym}'s Treasury is empty")
    elif st.pool[ci] < 10:
        return IllegalAction("none_in_pool", f"§Stock round: the pool holds no {sym} share")
    if st.sr_buys:
        second_ok = (
            st.sr_buys == 1
            and st.sr_buy_corp == ci
            and st.president[ci] == seat
            and in_gray(st, ci)
        )
        if not second_ok:
            return IllegalAction(
                "already_bought",
                "§Stock round: one share per turn (the president may buy two of his own "
                "corporation in the gray zone)",
            )
    if st.sr_sold[seat] >> ci & 1:
        return IllegalAction(
            "sold_this_round", f"§Stock round: {sym} was sold by this player in this round"
        )
    cost = buy_price(st, ci, source)
    if st.cash[seat] < cost:
        return IllegalAction(
            "insufficient_cash",
            f"§Stock round: the share costs {cost}",
            cost=cost,
            cash=st.cash[seat],
        )
    gray = in_gray(st, ci)
    limit = CORPS[ci].max_ownership
    if not gray and st.holdings[ci][seat] + 10 > limit:
        return IllegalAction(
            "holding_limit", f"§Stock round: a player may hold at most {limit}% of {sym}"
        )
    return None if gray else _certificate_limit_refusal(st, seat)


def par_refusal(st: E1894State, seat: int, ci: int, par_price: int) -> IllegalAction | None:
    """Why ``seat`` may not open ``ci`` at ``par_price`` now (``None``: may)."""
    sym = CORPS[ci].sym
    if over_limit(st, seat):
        return _must_sell(st, seat)
    if st.sr_buys:
        return IllegalAction("already_bought", "§Stock round: one share (or one par) per turn")
    if st.par[ci]:
        return IllegalAction("already_parred", f"§Stock round: {sym} already has a par")
    if CORPS[ci].is_late and not st.late_available:
        return IllegalAction(
            "late_not_available", f"§Trains and phases: {sym} opens only after the first 5+1"
        )
    if st.ipo[ci] < 20:
        return IllegalAction("no_president_cert", f"§Stock round: {sym} cannot be opened")
    if CORPS[ci].is_late and not st.board_home_candidates(sym):
        return IllegalAction(
            "no_home",
            f"§Trains and phases: {sym} has no possible home (no candidate without a "
            "reservation and with a free city)",
        )
    if par_price not in par_prices(st):
        return IllegalAction(
            "bad_par",
            f"§Setup and auction: in a stock round the par is one of {par_prices(st)}",
        )
    if st.cash[seat] < 2 * par_price:
        return IllegalAction("insufficient_cash", f"§Stock round: the par costs {2 * par_price}")
    return _certificate_limit_refusal(st, seat)


def sell_refusal(st: E1894State, seat: int, ci: int, count: int) -> IllegalAction | None:
    """Why ``seat`` may not sell ``count`` shares of ``ci`` now (``None``: may)."""
    if st.sr_number == 1:
        return IllegalAction("no_selling_yet", "§Shares: no selling in the first stock round")
    if st.par[ci] == 0:
        return IllegalAction("not_parred", f"§Stock round: {CORPS[ci].sym} has no share price")
    why = can_sell_count(st, ci, seat, count)
    if why:
        return IllegalAction("cannot_sell", f"§Shares: {why}")
    return None


def legal(st: E1894State, seat: int) -> list[LegalAction]:
    """Every stock-round move of ``seat`` (or the home choice of a late corporation)."""
    if st.pending_home >= 0:
        corp = CORPS[st.pending_home].sym
        return [ChooseHome(h) for h in st.board_home_candidates(corp)]
    out: list[LegalAction] = _options(st, seat)
    if not (out and over_limit(st, seat)):
        out.append(Pass())
    return out


def _options(st: E1894State, seat: int) -> list[LegalAction]:
    """Every buy/par/sell ``seat`` may make now (empty: the turn has nothing to do)."""
    out: list[LegalAction] = []
    for ci in range(len(CORPS)):
        sym = CORPS[ci].sym
        if st.par[ci]:
            for source in ("treasury", "pool"):
                if buy_refusal(st, seat, ci, source) is None:
                    out.append(BuyShares(sym, source))
        elif not st.sr_buys:
            for p in par_prices(st):
                if par_refusal(st, seat, ci, p) is None:
                    out.append(Par(sym, p))
    if st.sr_number > 1:
        for ci in range(len(CORPS)):
            held = st.holdings[ci][seat]
            if not held or not st.par[ci]:
                continue
            sym = CORPS[ci].sym
            for count in range(1, held // 10 + 1):
                if can_sell_count(st, ci, seat, count) is None:
                    out.append(SellShares(sym, count))
    return out


def has_options(st: E1894State, seat: int) -> bool:
    """True if ``seat`` has a buy, par or sale to make (else its turn ends)."""
    return bool(_options(st, seat))


# ------------------------------------------------------------------ applying


def _corp(name: str) -> int:
    ci = CORP_INDEX.get(name)
    if ci is None:
        raise MalformedAction("unknown_corporation", f"no corporation named {name!r}")
    return ci


def apply(st: E1894State, seat: int, action: Action) -> list[Event]:
    """Check and apply a stock-round move (raises :class:`IllegalAction` before any change)."""
    if st.pending_home >= 0:
        if not isinstance(action, ChooseHome):
            raise IllegalAction(
                "home_pending",
                f"§Trains and phases: {CORPS[st.pending_home].sym}'s president must choose "
                "its home first",
            )
        return _choose_home(st, action)
    if isinstance(action, BuyShares):
        ci = _corp(action.corporation)
        if action.source not in ("treasury", "pool"):
            raise MalformedAction("bad_source", "source is 'treasury' or 'pool'")
        why = buy_refusal(st, seat, ci, action.source)
        if why:
            raise why
        events = _buy(st, seat, ci, action.source)
    elif isinstance(action, SellShares):
        ci = _corp(action.corporation)
        why = sell_refusal(st, seat, ci, action.count)
        if why:
            raise why
        events = [sell_shares(st, ci, seat, action.count)]
        st.sr_sold[seat] |= 1 << ci
        st.sr_acted = True
    elif isinstance(action, Par):
        ci = _corp(action.corporation)
        why = par_refusal(st, seat, ci, action.price)
        if why:
            raise why
        events = _par(st, seat, ci, action.price)
    elif isinstance(action, Pass):
        if over_limit(st, seat) and _options(st, seat):
            raise _must_sell(st, seat)
        _end_turn(st)
        return [{"type": "pass", "player": seat}]
    else:
        raise IllegalAction(
            "not_in_stock_round", f"§Stock round: {action.TYPE} is not possible in a stock round"
        )
    if st.pending_home < 0 and not has_options(st, seat):
        _end_turn(st)
    return events


def _buy(st: E1894State, seat: int, ci: int, source: str) -> list[Event]:
    cost = buy_price(st, ci, source)
    st.cash[seat] -= cost
    st.holdings[ci][seat] += 10
    if source == "treasury":
        st.ipo[ci] -= 10
    else:
        st.pool[ci] -= 10
    update_president(st, ci)
    st.sr_buys += 1
    st.sr_buy_corp = ci
    st.sr_acted = True
    events = [
        {
            "type": "bought",
            "player": seat,
            "corporation": CORPS[ci].sym,
            "source": source,
            "price": cost,
        }
    ]
    if not st.floated[ci] and st.ipo[ci] <= 100 - CORPS[ci].float_percent:
        st.floated[ci] = True
        st.corp_cash[ci] += 10 * st.par[ci]
        events.append({"type": "floated", "corporation": CORPS[ci].sym})
    return events


def _par(st: E1894State, seat: int, ci: int, par_price: int) -> list[Event]:
    st.cash[seat] -= 2 * par_price
    st.ipo[ci] -= 20
    st.holdings[ci][seat] += 20
    st.president[ci] = seat
    st.par[ci] = par_price
    row, col = MARKET.par_cells[par_price]
    place(st, ci, row, col)
    update_president(st, ci)
    st.sr_buys += 1
    st.sr_buy_corp = ci
    st.sr_acted = True
    if CORPS[ci].is_late:
        st.pending_home = ci
    return [{"type": "par", "player": seat, "corporation": CORPS[ci].sym, "price": par_price}]


def _choose_home(st: E1894State, action: ChooseHome) -> list[Event]:
    corp = CORPS[st.pending_home].sym
    if action.hex not in st.board_home_candidates(corp):
        raise IllegalAction(
            "bad_home",
            f"§Trains and phases: {action.hex} is not a possible home for {corp} (it needs no "
            "reservation and a city with room; hexes without track first)",
        )
    reserve_late_home(st.board, corp, action.hex)
    st.home[st.pending_home] = action.hex
    st.pending_home = -1
    seat = active_seat(st)
    if not has_options(st, seat):
        _end_turn(st)
    return [{"type": "home", "corporation": corp, "hex": action.hex}]


def _end_turn(st: E1894State) -> None:
    """End the current player's turn: a pass if he did nothing this turn."""
    if _close_turn(st, active_seat(st), st.sr_acted):
        _skip_idle(st)


def _skip_idle(st: E1894State) -> None:
    """Players with nothing to do pass automatically."""
    while st.round == "stock":
        seat = active_seat(st)
        if has_options(st, seat):
            return
        if not _close_turn(st, seat, acted=False):
            return


def _close_turn(st: E1894State, seat: int, acted: bool) -> bool:
    """Close ``seat``'s turn. A player who ``acted`` leaves the passes (and the order of
    passing); one who did not passes, and joins the order of passing (the next round's order)
    if not in it yet. When every player has passed in a row the round ends (:func:`_finish`)
    and False is returned; otherwise the next player's turn starts and True is returned."""
    if acted:
        if seat in st.sr_pass_order:
            st.sr_pass_order.remove(seat)
        st.sr_passed[seat] = False
    else:
        if seat not in st.sr_pass_order:
            st.sr_pass_order.append(seat)
        st.sr_passed[seat] = True
    if all(st.sr_passed):
        _finish(st)
        return False
    st.sr_turn = (st.sr_turn + 1) % st.num_players
    _new_turn(st)
    return True


def _finish(st: E1894State) -> None:
    """End of the stock round: sold-out rises, new order, then the operating rounds."""
    for ci in operating_order(st):
        if st.ipo[ci] or st.pool[ci]:
            continue
        gray = in_gray(st, ci)
        move_up(st, ci)
        if gray:
            move_up(st, ci)
        pres = st.president[ci]
        if pres >= 0 and st.holdings[ci][pres] + st.redeemed[ci] >= 80:
            move_up(st, ci)
    st.order = list(st.sr_pass_order)


def is_over(st: E1894State) -> bool:
    """Every player has passed in a row: the round is over (:func:`_finish` has run) and the
    operating rounds follow (:mod:`.flow`)."""
    return all(st.sr_passed)
