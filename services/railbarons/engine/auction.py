"""Auctions (spec §4 opening auction, §6 auction action, §9.2 Wabash auction).

Procedure (§6): the auctioneer bids first, at least the minimum bid
``ceil(income / (shares sold + 1))`` (§6.2), or passes (unless ``auctioneer_must_open``,
§6.3 [C]); then clockwise every remaining player raises by at least ``bid_increment``
(§6.4 [U]) or passes, and a pass is final. A bid never exceeds the bidder's cash (§6.5).
When one bidder remains he pays his bid into the **company's treasury** and takes the
share (§6.6); when everybody passed without a bid the share stays unsold (§6.7 [U]).

The opening auction (§4) sells one share each of PRR, B&O, C&O, NYC (minimum bids = start
incomes 7/6/5/8) with the same procedure; its sequencing is in :mod:`.flow`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from services.kernel.engine import Action, Event, IllegalAction
from services.railbarons.engine import data, phases
from services.railbarons.engine.actions import PASS, bids

if TYPE_CHECKING:  # pragma: no cover
    from services.railbarons.engine.state import RailbaronsState

NC = data.NUM_COMPANIES
_INITIAL_LIKE = (phases.KIND_OPENING, phases.KIND_WABASH)
"""Auction kinds run like the initial auction (§4, §9.2): ``initial_auction_no_bid`` applies."""


def min_bid(st: RailbaronsState, c: int) -> int:
    """Minimum first bid for a share of company ``c`` (§6.2 [V]):
    ``ceil(income / (shares sold + 1))`` dollars; e.g. PRR with income 10 and one share
    sold: ceil(10 / 2) = 5 (worked example). In the opening auction it is the start income.
    """
    d = st.sold[c] + 1
    return -(-st.income[c] // d)


def start(st: RailbaronsState, kind: int, c: int, starter: int) -> None:
    """Open an auction of one share of company ``c``; ``starter`` bids first (§6.3)."""
    st.phase = phases.BIDDING
    st.a_kind = kind
    st.a_company = c
    st.a_starter = starter
    st.a_high = 0
    st.a_bidder = -1
    st.a_out = 0
    st.active = starter


def floor(st: RailbaronsState) -> int:
    """The smallest legal bid now: the minimum bid before the first bid, else the high bid
    plus ``bid_increment`` (§6.2, §6.4)."""
    if st.a_bidder < 0:
        return min_bid(st, st.a_company)
    return st.a_high + st.rules.increment


def must_open(st: RailbaronsState, seat: int) -> bool:
    """True when ``seat`` is the auctioneer making the opening bid and the options oblige
    him to bid (``auctioneer_must_open`` §6.3 [C]; ``initial_auction_no_bid =
    starter_must_bid`` §4 [U] for opening shares and for the Wabash share, whose auction
    §9.2 runs "like the initial auction"), and he can afford the minimum."""
    if seat != st.a_starter or st.a_bidder >= 0 or st.a_out:
        return False
    rules = st.rules
    if not (rules.must_open or (st.a_kind in _INITIAL_LIKE and rules.initial_starter_must_bid)):
        return False
    return st.cash[seat] >= min_bid(st, st.a_company)


def legal(st: RailbaronsState, seat: int) -> list[Action]:
    """``[pass, bid(lo) .. bid(cash)]`` for the bidder (``pass`` left out when he must open)."""
    lo = min_bid(st, st.a_company) if st.a_bidder < 0 else st.a_high + st.rules.increment
    out = cast("list[Action]", bids(lo, st.cash[seat]))  # a fresh list: pass goes first
    if not must_open(st, seat):
        out.insert(0, PASS)
    return out


def check_bid(st: RailbaronsState, seat: int, amount: int) -> None:
    """Raise ``bid_below_minimum`` / ``bid_above_cash`` for an illegal bid (§6.2-§6.5)."""
    lo = floor(st)
    if amount < lo:
        if st.a_bidder < 0:
            raise IllegalAction(
                "bid_below_minimum",
                f"§6.2: the minimum bid for {data.COMPANY_IDS[st.a_company]} is "
                f"ceil(income / (shares sold + 1)) = ${lo}",
                amount=amount,
                min_bid=lo,
            )
        raise IllegalAction(
            "bid_below_minimum",
            f"§6.4: a bid must raise the high bid of ${st.a_high} by at least "
            f"${st.rules.increment}",
            amount=amount,
            min_bid=lo,
            high_bid=st.a_high,
        )
    if amount > st.cash[seat]:
        raise IllegalAction(
            "bid_above_cash",
            f"§6.5: a player cannot bid more than his cash (${st.cash[seat]})",
            amount=amount,
            cash=st.cash[seat],
        )


def check_pass(st: RailbaronsState, seat: int) -> None:
    """Raise ``must_open`` when the auctioneer is obliged to open (§6.3 / §4 options)."""
    if must_open(st, seat):
        raise IllegalAction(
            "must_open",
            "§6.3/§4: under the current options the auctioneer must open the bidding "
            "at the minimum bid or more",
        )


def bid(st: RailbaronsState, seat: int, amount: int, ev: list[Event]) -> bool:
    """Record a (checked) bid; returns True when the auction is over."""
    st.a_high = amount
    st.a_bidder = seat
    ev.append({"type": "bid", "seat": seat, "amount": amount})
    return _advance(st, seat, ev)


def pass_(st: RailbaronsState, seat: int, ev: list[Event]) -> bool:
    """Record a (checked) pass, final for this auction (§6.4); True when it is over."""
    st.a_out |= 1 << seat
    ev.append({"type": "pass", "seat": seat})
    return _advance(st, seat, ev)


def _advance(st: RailbaronsState, seat: int, ev: list[Event]) -> bool:
    n = st.num_players
    out = st.a_out
    bidder = st.a_bidder
    remaining = ((1 << n) - 1) & ~out
    if remaining == 0:
        _resolve(st, -1, ev)
        return True
    if bidder >= 0 and remaining == 1 << bidder:
        _resolve(st, bidder, ev)
        return True
    s = seat
    while True:
        s += 1
        if s == n:
            s = 0
        if not (out >> s) & 1:
            break
    st.active = s
    return False


def _resolve(st: RailbaronsState, winner: int, ev: list[Event]) -> None:
    c = st.a_company
    if winner >= 0:
        price = st.a_high
        st.cash[winner] -= price
        st.treasury[c] += price
        st.held[winner * NC + c] += 1
        st.sold[c] += 1
        ev.append(
            {
                "type": "share_sold",
                "company": data.COMPANY_IDS[c],
                "seat": winner,
                "price": price,
            }
        )
    else:
        ev.append({"type": "share_unsold", "company": data.COMPANY_IDS[c]})
    st.a_bidder = winner  # the winner (or -1) stays readable until the next auction
