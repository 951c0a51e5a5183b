"""Auctions: the opening auction (spec §4), the auction action (§6)."""

from __future__ import annotations

from services.railbarons.engine import auction, data, phases
from services.railbarons.engine.actions import PASS
from services.railbarons.engine.tests.helpers import (
    Bid,
    ChooseDial,
    Pass,
    StartAuction,
    new,
    opening,
    refuse,
    standard_opening,
    turn,
)

CI = data.COMPANY_INDEX


def test_opening_order_and_minimum_bids():
    """§4: PRR, B&O, C&O, NYC in that order with minimum bids 7, 6, 5, 8."""
    st = new(4)
    seen = []
    for _ in range(4):
        seen.append((data.COMPANY_IDS[st.a_company], auction.min_bid(st, st.a_company)))
        legal = st.legal_actions(st.active)
        assert legal[0] == PASS and legal[1] == Bid(seen[-1][1])
        opening(st, [(st.active, seen[-1][1])])
    assert seen == [("PRR", 7), ("BO", 6), ("CO", 5), ("NYC", 8)]


def test_buyer_opens_the_next_opening_auction_and_prr_buyer_starts():
    """§4: the buyer of the previous share opens the next auction; the PRR buyer takes the
    first turn."""
    st = new(4)
    opening(st, [(2, 9)])
    assert st.a_starter == 2 and st.active == 2  # B&O auction opened by the PRR buyer
    opening(st, [(3, 6)])
    assert st.a_starter == 3
    opening(st, [(1, 5), (0, 8)])
    assert st.phase == phases.DIAL
    assert st.active_seats() == (2,) and st.turn == 2


def test_clockwise_starter_option():
    """§4 [S] (initial_auction_next_starter = clockwise): the seat after the previous
    starter opens the next opening auction."""
    st = new(4, initial_auction_next_starter="clockwise")
    opening(st, [(2, 9)])
    assert st.a_starter == 1


def test_unsold_opening_share_same_starter():
    """§4 [U] (initial_auction_no_bid = stays_unsold): nobody bids, the share stays unsold
    and the same player opens the next auction; the first buyer starts if PRR is unsold."""
    st = new(3)
    opening(st, [None])
    assert st.sold[CI["PRR"]] == 0
    assert st.a_starter == 0 and data.COMPANY_IDS[st.a_company] == "BO"
    opening(st, [(1, 6), (2, 5), (0, 8)])
    assert st.phase == phases.DIAL and st.turn == 1


def test_starter_must_bid_option():
    """§4 [U] (initial_auction_no_bid = starter_must_bid): the starter cannot pass."""
    st = new(3, initial_auction_no_bid="starter_must_bid")
    assert PASS not in st.legal_actions(0)
    refuse(st, 0, Pass(), "must_open", "§6.3")
    st.apply(0, Bid(7))
    assert PASS in st.legal_actions(1)


def test_winner_pays_the_company_treasury():
    """§6.6: the winner pays his bid into the company's treasury, never the bank."""
    st = new(4)
    opening(st, [(1, 12)])
    assert st.cash[1] == 30 - 12
    assert st.treasury[CI["PRR"]] == 12
    assert st.shares_of(1, CI["PRR"]) == 1 and st.sold[CI["PRR"]] == 1


def test_bidding_goes_clockwise_and_a_pass_is_final():
    """§6.4: clockwise from the auctioneer; a player who passed is never asked again; the
    last remaining bidder wins."""
    st = new(4)
    order = []
    order.append(st.active)
    st.apply(0, Bid(7))
    order.append(st.active)
    st.apply(1, Pass())
    order.append(st.active)
    st.apply(2, Bid(8))
    order.append(st.active)
    st.apply(3, Bid(9))
    order.append(st.active)
    st.apply(0, Pass())
    order.append(st.active)  # seat 1 passed: skipped
    assert order == [0, 1, 2, 3, 0, 2]
    st.apply(2, Pass())
    assert st.shares_of(3, CI["PRR"]) == 1 and st.cash[3] == 30 - 9
    assert data.COMPANY_IDS[st.a_company] == "BO" and st.a_starter == 3


def test_auctioneer_may_pass_and_a_later_bidder_wins():
    """§6.3 [C] (auctioneer_must_open = False): the auctioneer may pass; bidding goes on."""
    st = new(3)
    st.apply(0, Pass())
    st.apply(1, Pass())
    st.apply(2, Bid(7))
    assert st.shares_of(2, CI["PRR"]) == 1


def test_auctioneer_must_open_option():
    """§6.3 [C] (auctioneer_must_open = True): the auctioneer must open when he can pay."""
    st = new(3, auctioneer_must_open=True)
    refuse(st, 0, Pass(), "must_open", "§6.3")
    st.apply(0, Bid(7))


def test_bid_limits_are_minimum_and_cash():
    """§6.2/§6.5: the first bid is at least the minimum, raises exceed the high bid, and no
    bid exceeds the bidder's cash; legal bids are exactly that range."""
    st = new(4)
    legal = st.legal_actions(0)
    assert [a.amount for a in legal[1:]] == list(range(7, 31))
    refuse(st, 0, Bid(6), "bid_below_minimum", "§6.2")
    refuse(st, 0, Bid(31), "bid_above_cash", "§6.5")
    st.apply(0, Bid(10))
    refuse(st, 1, Bid(10), "bid_below_minimum", "§6.4")
    assert [a.amount for a in st.legal_actions(1)[1:]] == list(range(11, 31))


def test_bid_increment_option():
    """§6.4 [U] (bid_increment): raises must exceed the high bid by the increment."""
    st = new(4, bid_increment=5)
    st.apply(0, Bid(7))
    refuse(st, 1, Bid(11), "bid_below_minimum", "§6.4")
    st.apply(1, Bid(12))


def test_broke_player_can_only_pass():
    """§6.5: a player who cannot pay the next bid can only pass."""
    st = new(6)  # $20 each
    st.apply(0, Bid(20))
    assert st.legal_actions(1) == [PASS]


def test_minimum_bid_rule_after_sales():
    """§6.2: minimum bid = ceil(income / (shares sold + 1))."""
    st = standard_opening(4)
    assert auction.min_bid(st, CI["PRR"]) == 4  # ceil(7 / 2)
    assert auction.min_bid(st, CI["CO"]) == 3  # ceil(5 / 2)
    st.income[CI["PRR"]] = 10
    assert auction.min_bid(st, CI["PRR"]) == 5


def test_auction_action_sells_a_share():
    """§6: the Auction dial lets the turn player put up a share, opening the bidding."""
    st = standard_opening(4)
    seat = turn(st, "auction")
    assert seat == 0 and st.phase == phases.AUCTION
    legal = st.legal_actions(0)
    assert [getattr(a, "company", None) for a in legal] == [None, "PRR", "BO", "CO", "NYC"]
    st.apply(0, StartAuction("NYC"))
    assert st.phase == phases.BIDDING and st.a_kind == phases.KIND_NORMAL and st.active == 0
    st.apply(0, Bid(4))  # ceil(8 / 2)
    for s in (1, 2, 3):
        st.apply(s, Pass())
    assert st.shares_of(0, CI["NYC"]) == 1 and st.treasury[CI["NYC"]] == 8 + 4
    assert st.phase == phases.DIAL and st.active == 1  # next player's turn
    assert st.dials == [1, 0, 0]


def test_unsold_auction_spends_the_dial():
    """§6.7 [U]: nobody bids -> the share stays unsold, the dial use is spent; with
    unsold_auction_spends_dial = False the needle goes back."""
    for spend, dial in ((True, 1), (False, 0)):
        st = standard_opening(3, unsold_auction_spends_dial=spend)
        turn(st, "auction")
        st.apply(0, StartAuction("CO"))
        for s in (0, 1, 2):
            st.apply(s, Pass())
        assert st.sold[CI["CO"]] == 1
        assert st.dials[0] == dial


def test_sold_out_and_closed_companies_cannot_be_auctioned():
    """§6.1: only open companies with unsold shares; the Wabash opens later (§9)."""
    st = standard_opening(4)
    st.sold[CI["PRR"]] = 3
    turn(st, "auction")
    assert StartAuction("PRR") not in st.legal_actions(0)
    assert StartAuction("WAB") not in st.legal_actions(0)
    refuse(st, 0, StartAuction("PRR"), "sold_out", "§6.1")
    refuse(st, 0, StartAuction("WAB"), "company_not_open", "§9")


def test_bids_only_during_an_auction():
    """§5/§6: a bid outside an auction is refused as the wrong step."""
    st = standard_opening(4)
    refuse(st, 0, Bid(5), "wrong_step", "§5")
    refuse(st, 0, Pass(), "wrong_step", "§6")
    st.apply(0, ChooseDial("auction"))
    refuse(st, 0, Bid(5), "wrong_step", "§6")


def test_nobody_buys_an_opening_share_the_banker_starts_and_stays_first_player():
    """§4 [U] (initial_auction_no_bid = stays_unsold): if no opening share sells at all,
    the banker takes the first turn; he is recorded as the first player, so the turn
    pointer of the finished game is a seat (never -1)."""
    st = opening(new(3, first_auctioneer=2), [None, None, None, None])
    assert st.phase == phases.DIAL and st.active == 2 and st.turn == 2
    assert st.first_player == 2 and st.view(None)["first_player"] == 2
    while not st.is_terminal():
        seat = st.active
        legal = st.legal_actions(seat)
        st.apply(seat, legal[-1] if st.phase == phases.DIAL else legal[0])
    assert st.turn == 2 and st.view(None)["turn"] == 2
    assert st.result().ranks == (1, 1, 1)  # nobody earned anything: all share the win
