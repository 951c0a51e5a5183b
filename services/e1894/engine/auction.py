"""The private auction (waterfall) and the par of the major shareholdings.

Spec: the 1894 rules summary, "Setup and auction"; behaviour checked against the recorded
games (``tests/fixtures/e1894``):

* The 8 privates are sold cheapest first. On a normal turn a player buys the cheapest at its
  price, bids on another private (at least its face value + 5, or the highest bid on it + 5;
  bids are multiples of 5 and all of a player's bids together are limited by his cash), or
  passes.
* When the cheapest private is sold, the next one becomes the cheapest: with one bid it goes
  to that bidder at his bid; with several, the bidders auction it (the lowest bidder raises or
  drops out) and the last one left pays his bid. Auction moves do not use up normal turns:
  afterwards the normal turn order resumes where it stood.
* All passed (errata A1, reference behaviour): a player passes on his normal turn and
  stays passed until he bids or buys again (a move in a private's auction counts too).
  When every player has passed, then while LRC (the cheapest private, first in the row) is
  unsold its price drops by ``options.auction_pass_discount`` (5) and at 0 the player whose
  turn it is gets it free; once LRC is sold every player-owned private pays its revenue to
  its owner and no price drops (the next private must be bought at its face value). Then
  nobody is passed any more.
* Buying NMinorS gives a 10% Nord share at once. Buying a major shareholding (xMS, BMS) gives
  the president's certificate: the buyer at once chooses the par (100, 95, 80 or 67) and the
  corporation, already floated, receives ten times the par.
* When all are sold the player order is rotated to start with the player whose normal turn it
  would be; the first stock round follows.
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

from .actions import Bid, Par, Pass
from .data import CORP_INDEX, MARKET, MIN_BID_INCREMENT, PAR_PRICES_ALL, PRIVATE_INDEX, PRIVATES
from .market import place
from .privates import pay_revenue

if TYPE_CHECKING:
    from .state import E1894State


def cheapest_price(st: E1894State) -> int:
    """Price of the cheapest private now: face value less the all-pass discount."""
    return PRIVATES[st.auc_companies[0]].value - st.auc_discount


def committed(st: E1894State, seat: int, except_pi: int = -1) -> int:
    """Francs ``seat`` has tied up in bids on privates other than ``except_pi``."""
    total = 0
    for pi, bids in st.auc_bids.items():
        if pi == except_pi:
            continue
        for s, p in bids:
            if s == seat:
                total += p
    return total


def min_bid(st: E1894State, pi: int) -> int:
    """Lowest bid on private ``pi``: its face value + 5, or the highest bid + 5."""
    bids = st.auc_bids.get(pi)
    if bids:
        return max(p for _, p in bids) + MIN_BID_INCREMENT
    return PRIVATES[pi].value + MIN_BID_INCREMENT


def lowest_bidder(st: E1894State, pi: int) -> int:
    """The seat with the lowest bid on ``pi`` (it acts in that private's auction)."""
    return min(st.auc_bids[pi], key=lambda b: b[1])[0]


def active_seat(st: E1894State) -> int:
    """The seat to act: the buyer choosing a par, the lowest bidder of a running auction, or the
    player whose normal turn it is.
    """
    if st.pending_par:
        return st.pending_par[0][0]
    if st.auc_auctioning >= 0:
        return lowest_bidder(st, st.auc_auctioning)
    return st.order[st.auc_turn]


def legal(st: E1894State, seat: int) -> list[LegalAction]:
    """Every auction move of ``seat``; the bids on one private are one :class:`ActionRange`
    (from the lowest bid up to the player's cash not tied up in other bids, step 5)."""
    if st.pending_par:
        corp = st.corp_sym(st.pending_par[0][1])
        return [Par(corp, p) for p in PAR_PRICES_ALL]
    out: list[LegalAction] = []
    if st.auc_auctioning >= 0:
        pi = st.auc_auctioning
        out.extend(_bids(st, seat, pi))
        out.append(Pass())
        return out
    cheapest = st.auc_companies[0]
    price = cheapest_price(st)
    if st.cash[seat] - committed(st, seat) >= price:
        out.append(Bid(PRIVATES[cheapest].sym, price))
    for pi in st.auc_companies[1:]:
        out.extend(_bids(st, seat, pi))
    out.append(Pass())
    return out


def playout(st: E1894State, seat: int, legal: list[LegalAction]) -> list[LegalAction]:
    """The auction moves a random play-out picks from (not a rule): on a normal turn no bid
    that leaves ``seat`` less free cash than the cheapest private's price (a bid range's max
    is lowered to the highest such bid; a range with none left is dropped). Without it a
    uniform random player ties up every franc of private revenue in ever higher bids and,
    since nobody can then buy the cheapest private, the auction never ends (errata A1)."""
    if st.pending_par or st.auc_auctioning >= 0:
        return legal
    cheapest = st.auc_companies[0]
    need = cheapest_price(st)
    out: list[LegalAction] = []
    for entry in legal:
        if isinstance(entry, ActionRange) and isinstance(entry.action, Bid):
            pi = PRIVATE_INDEX[entry.action.company]
            if pi != cheapest:
                top = st.cash[seat] - committed(st, seat, pi) - need
                narrowed = ActionRange.of(
                    entry.action, entry.field, entry.min, min(entry.max, top), entry.step
                )
                if narrowed is not None:
                    out.append(narrowed)
                continue
        out.append(entry)
    return out


def _bids(st: E1894State, seat: int, pi: int) -> list[LegalAction]:
    lo = -(-min_bid(st, pi) // MIN_BID_INCREMENT) * MIN_BID_INCREMENT  # a multiple of 5
    hi = st.cash[seat] - committed(st, seat, pi)
    bids = ActionRange.of(Bid(PRIVATES[pi].sym, lo), "price", lo, hi, MIN_BID_INCREMENT)
    return [] if bids is None else [bids]


def apply(st: E1894State, seat: int, action: Action) -> list[Event]:
    """Check and apply an auction move (raises :class:`IllegalAction` before any change)."""
    if st.pending_par:
        if not isinstance(action, Par):
            raise IllegalAction(
                "par_pending", "§Setup and auction: the buyer of a major shareholding must par it"
            )
        return _par(st, seat, action)
    if isinstance(action, Bid):
        return _bid(st, seat, action)
    if isinstance(action, Pass):
        return _pass(st, seat)
    raise IllegalAction(
        "not_in_auction", f"§Setup and auction: {action.TYPE} is not possible in the auction"
    )


def _par(st: E1894State, seat: int, action: Par) -> list[Event]:
    ci = st.pending_par[0][1]
    if CORP_INDEX.get(action.corporation) != ci:
        raise IllegalAction(
            "wrong_corporation",
            f"§Setup and auction: the par to set is {st.corp_sym(ci)}'s",
        )
    if action.price not in PAR_PRICES_ALL:
        raise IllegalAction(
            "bad_par",
            f"§Setup and auction: the par of a major shareholding is one of {PAR_PRICES_ALL}",
        )
    st.pending_par.pop(0)
    st.ipo[ci] -= 20
    st.holdings[ci][seat] += 20
    st.president[ci] = seat
    st.par[ci] = action.price
    row, col = MARKET.par_cells[action.price]
    place(st, ci, row, col)
    st.floated[ci] = True
    st.corp_cash[ci] += 10 * action.price
    events = [{"type": "par", "corporation": action.corporation, "price": action.price}]
    _maybe_end(st)
    return events


def _bid(st: E1894State, seat: int, action: Bid) -> list[Event]:
    pi = PRIVATE_INDEX.get(action.company)
    if pi is None:
        raise MalformedAction("unknown_company", f"no private named {action.company!r}")
    if pi not in st.auc_companies:
        raise IllegalAction("not_for_sale", f"§Setup and auction: {action.company} is not for sale")
    price = action.price
    if price % MIN_BID_INCREMENT:
        raise IllegalAction("bid_not_multiple_of_5", "§Setup and auction: bids are multiples of 5")
    if st.auc_auctioning >= 0:
        if pi != st.auc_auctioning:
            raise IllegalAction(
                "auction_in_progress",
                f"§Setup and auction: {PRIVATES[st.auc_auctioning].sym} is being auctioned",
            )
        _check_bid(st, seat, pi, price)
        _place_bid(st, seat, pi, price)
        return [{"type": "bid", "company": action.company, "price": price}]
    if pi == st.auc_companies[0]:
        cost = cheapest_price(st)
        if price != cost:
            raise IllegalAction(
                "wrong_price",
                f"§Setup and auction: the cheapest private, {action.company}, costs {cost}",
            )
        if st.cash[seat] - committed(st, seat) < cost:
            raise IllegalAction(
                "insufficient_cash", "§Setup and auction: bids and buys are limited by cash"
            )
        events = _acquire(st, seat, pi, cost)
        _unpass(st, seat)
        st.auc_turn = (st.auc_turn + 1) % st.num_players
        events += _cascade(st)
        _maybe_end(st)
        return events
    _check_bid(st, seat, pi, price)
    _place_bid(st, seat, pi, price)
    st.auc_turn = (st.auc_turn + 1) % st.num_players
    return [{"type": "bid", "company": action.company, "price": price}]


def _check_bid(st: E1894State, seat: int, pi: int, price: int) -> None:
    lo = min_bid(st, pi)
    if price < lo:
        raise IllegalAction(
            "bid_too_low",
            f"§Setup and auction: the lowest bid on {PRIVATES[pi].sym} is {lo}",
            price=price,
            min_bid=lo,
        )
    free = st.cash[seat] - committed(st, seat, pi)
    if price > free:
        raise IllegalAction(
            "insufficient_cash",
            "§Setup and auction: a player's bids together may not exceed his cash "
            f"({free} F not tied up in other bids)",
            price=price,
            cash=st.cash[seat],
            available=free,
        )


def _place_bid(st: E1894State, seat: int, pi: int, price: int) -> None:
    bids = [b for b in st.auc_bids.get(pi, []) if b[0] != seat]
    bids.append((seat, price))
    st.auc_bids[pi] = bids
    _unpass(st, seat)


def _unpass(st: E1894State, seat: int) -> None:
    """``seat`` bid or bought: he is no longer passed (``st.auc_passes`` is a bit set of the
    seats that passed since their last bid or buy)."""
    st.auc_passes &= ~(1 << seat)


def all_passed(st: E1894State) -> list[Event]:
    """Every player has passed (errata A1): while LRC, the first private of the row, is
    unsold its price drops by ``options.auction_pass_discount`` (at 0 the player to move
    takes it free); once it is sold every player-owned private pays its owner its revenue
    and no price drops. Nobody is passed afterwards."""
    st.auc_passes = 0
    first = st.auc_companies[0]
    if first != PRIVATE_INDEX["LRC"]:
        return pay_revenue(st)
    st.auc_discount += st.options.auction_pass_discount
    if cheapest_price(st) > 0:
        return [{"type": "price_drop", "company": PRIVATES[first].sym, "price": cheapest_price(st)}]
    taker = st.order[st.auc_turn]
    events = _acquire(st, taker, first, 0)
    st.auc_turn = (st.auc_turn + 1) % st.num_players
    return events + _cascade(st)


def _pass(st: E1894State, seat: int) -> list[Event]:
    if st.auc_auctioning >= 0:
        pi = st.auc_auctioning
        st.auc_bids[pi] = [b for b in st.auc_bids[pi] if b[0] != seat]
        events: list[Event] = [{"type": "pass", "company": PRIVATES[pi].sym}]
        if len(st.auc_bids[pi]) == 1:
            st.auc_auctioning = -1
            events += _cascade(st)
        _maybe_end(st)
        return events
    events = [{"type": "pass"}]
    st.auc_passes |= 1 << seat
    everybody = st.auc_passes == (1 << st.num_players) - 1
    st.auc_turn = (st.auc_turn + 1) % st.num_players
    if everybody:
        events += all_passed(st)
    _maybe_end(st)
    return events


def _acquire(st: E1894State, seat: int, pi: int, price: int) -> list[Event]:
    """``seat`` gets private ``pi`` for ``price``; runs its purchase effects."""
    st.auc_companies.remove(pi)
    st.auc_bids.pop(pi, None)
    st.auc_discount = 0
    st.cash[seat] -= price
    st.private_owner[pi] = seat
    info = PRIVATES[pi]
    events: list[Event] = [
        {"type": "bought_private", "company": info.sym, "player": seat, "price": price}
    ]
    if info.sym == "NMinorS":
        nord = CORP_INDEX["Nord"]
        st.ipo[nord] -= 10
        st.holdings[nord][seat] += 10
    if info.major_of:
        st.pending_par.append((seat, CORP_INDEX[info.major_of]))
    return events


def _cascade(st: E1894State) -> list[Event]:
    """Sell or auction the new cheapest privates that already carry bids."""
    events: list[Event] = []
    while st.auc_companies:
        pi = st.auc_companies[0]
        bids = st.auc_bids.get(pi)
        if not bids:
            break
        if len(bids) == 1:
            seat, price = bids[0]
            events += _acquire(st, seat, pi, price)
            continue
        st.auc_auctioning = pi
        break
    return events


def is_over(st: E1894State) -> bool:
    """Every private is sold and every major shareholding has its par: the first stock round
    follows (:mod:`.flow`)."""
    return not (st.auc_companies or st.pending_par or st.auc_auctioning >= 0)


def _maybe_end(st: E1894State) -> None:
    """At the end of the auction the player order starts with the player after the last one
    to act in it."""
    if not is_over(st):
        return
    k = st.auc_turn
    st.order = st.order[k:] + st.order[:k]
