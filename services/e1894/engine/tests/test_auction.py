"""Waterfall auction of the privates and the par of the major shareholdings
(spec "Setup and auction"; order of play checked against the recorded games)."""

from __future__ import annotations

from services.kernel.engine import ActionRange, concrete_actions, is_listed

from ..actions import Bid, BuyShares, Par, Pass
from ..data import CORP_INDEX, PRIVATE_INDEX, PRIVATES
from .flow_helpers import new, refused

SEED = 92791301  # Est drawn; LRC AR SAC SQG LS NMinorS EMS BMS in the auction


def owner(st, sym):
    return st.private_owner[PRIVATE_INDEX[sym]]


def test_buying_the_cheapest_at_its_price():
    """§Setup and auction: the cheapest private is bought at its face value; the turn passes."""
    st = new(4, SEED)
    st.apply(0, Bid("LRC", 20))
    assert owner(st, "LRC") == 0 and st.cash[0] == 460
    assert st.active_seats() == (1,)
    refused(st, 1, Bid("AR", 30), "wrong_price")  # AR is now the cheapest: 25 exactly


def test_bids_are_multiples_of_5_and_at_least_5_more():
    """§Setup and auction: minimum raise 5, bids in multiples of 5."""
    st = new(4, SEED)
    refused(st, 0, Bid("AR", 32), "bid_not_multiple_of_5")
    refused(st, 0, Bid("AR", 25), "bid_too_low")
    st.apply(0, Bid("AR", 30))
    refused(st, 1, Bid("AR", 30), "bid_too_low")
    st.apply(1, Bid("AR", 35))
    assert st.auc_bids[PRIVATE_INDEX["AR"]] == [(0, 30), (1, 35)]


def test_bids_together_are_limited_by_cash():
    """§Setup and auction: a player's bids tie up his cash."""
    st = new(4, SEED)
    st.apply(0, Bid("BMS", 465))
    for s in (1, 2, 3):
        st.apply(s, Pass())
    refused(st, 0, Bid("SAC", 55), "insufficient_cash")
    refused(st, 0, Bid("LRC", 20))


def test_single_bid_wins_when_its_private_becomes_cheapest():
    """§Setup and auction: with one bid the private goes to the bidder at his bid."""
    st = new(4, SEED)
    st.apply(0, Bid("AR", 30))
    st.apply(1, Bid("LRC", 20))
    assert owner(st, "LRC") == 1 and owner(st, "AR") == 0 and st.cash[0] == 450
    assert st.active_seats() == (2,)


def test_several_bidders_auction_and_the_turn_order_resumes():
    """§Setup and auction: the bidders auction it (the lowest bidder raises or drops out);
    afterwards the normal turn continues after the player whose buy started it."""
    st = new(4, SEED)
    st.apply(0, Bid("SQG", 75))
    st.apply(1, Bid("SQG", 80))
    st.apply(2, Bid("LRC", 20))
    st.apply(3, Bid("AR", 25))
    st.apply(0, Bid("SAC", 50))  # SQG is cheapest now, with two bids
    assert st.active_seats() == (0,)  # the lowest bidder
    refused(st, 0, Bid("LS", 95), "auction_in_progress")
    st.apply(0, Bid("SQG", 85))
    assert st.active_seats() == (1,)
    st.apply(1, Pass())
    assert owner(st, "SQG") == 0 and st.cash[0] == 480 - 50 - 85
    assert st.active_seats() == (1,)  # normal turn after seat 0's buy of SAC


def test_everybody_passing_lowers_the_cheapest_price():
    """§Setup and auction (option auction_pass_discount, Czech summary): when all pass the
    cheapest private loses 5; at 0 the player to move gets it free."""
    st = new(4, SEED)
    for _ in range(4):
        st.apply(st.active_seats()[0], Pass())
    assert st.legal_actions(0)[0] == Bid("LRC", 15)
    for _ in range(12):
        st.apply(st.active_seats()[0], Pass())
    assert owner(st, "LRC") == 0 and st.cash[0] == 480
    st2 = new(4, SEED, auction_pass_discount=0)
    for _ in range(8):
        st2.apply(st2.active_seats()[0], Pass())
    assert st2.legal_actions(0)[0] == Bid("LRC", 20)


def _sell_out(st, pars=(100, 95)):
    seats = iter([0, 1, 2, 3, 0, 1, 2])
    for sym, price in (
        ("LRC", 20),
        ("AR", 25),
        ("SAC", 50),
        ("SQG", 70),
        ("LS", 90),
        ("NMinorS", 140),
    ):
        st.apply(next(seats), Bid(sym, price))
    st.apply(2, Bid("EMS", 180))
    return st


def test_major_shareholding_par_and_float():
    """§Setup and auction: the buyer of a major shareholding gets the president's certificate
    and at once chooses the par (100/95/80/67); the corporation receives 10 x par."""
    st = _sell_out(new(4, SEED))
    assert st.active_seats() == (2,)
    assert {type(a) for a in st.legal_actions(2)} == {Par}
    refused(st, 2, Par("Est", 110), "bad_par")
    refused(st, 2, Par("Belge", 100), "wrong_corporation")
    refused(st, 2, Pass(), "par_pending")
    st.apply(2, Par("Est", 100))
    est = CORP_INDEX["Est"]
    assert st.president[est] == 2 and st.holdings[est][2] == 30
    assert st.floated[est] and st.corp_cash[est] == 1000 and st.par[est] == 100


def test_nord_minor_shareholding_gives_a_nord_share():
    """§Setup and auction: NMinorS gives a 10% Nord share without the presidency."""
    st = _sell_out(new(4, SEED))
    nord = CORP_INDEX["Nord"]
    assert st.holdings[nord][1] == 10 and st.ipo[nord] == 90 and st.president[nord] == -1


def test_end_of_auction_rotates_the_order():
    """§Setup and auction: after the auction the order starts with the player whose normal
    turn is next; the first stock round follows (no selling in it)."""
    st = _sell_out(new(4, SEED))
    st.apply(2, Par("Est", 100))
    st.apply(3, Bid("BMS", 200))
    st.apply(3, Par("Belge", 67))
    assert st.round == "stock" and st.sr_number == 1
    assert st.order == [0, 1, 2, 3]
    assert st.active_seats() == (0,)
    assert BuyShares("Est", "treasury") in st.legal_actions(0)


def test_all_passing_after_lrc_is_sold_pays_revenue_and_lowers_no_price():
    """Errata A1: once LRC is sold, a round of passes pays every player-owned private's
    revenue to its owner and lowers no price: AR must then be bought at its face value."""
    st = new(4, SEED)
    st.apply(0, Bid("LRC", 20))
    cash = list(st.cash)
    for seat in (1, 2, 3, 0):
        st.apply(seat, Pass())
    lrc = next(p for p in PRIVATES if p.sym == "LRC")
    assert st.cash == [cash[0] + lrc.revenue, *cash[1:]]
    assert st.auc_discount == 0 and st.auc_passes == 0
    refused(st, 1, Bid("AR", 20), "wrong_price")
    assert Bid("AR", 25) in st.legal_actions(1)


def test_a_player_stays_passed_until_he_bids_again():
    """Errata A1: a pass lasts until the player bids or buys; the drop comes when every
    player has passed, not after n passes in a row."""
    st = new(4, SEED)
    st.apply(0, Pass())
    st.apply(1, Bid("AR", 30))
    for seat in (2, 3, 0):
        st.apply(seat, Pass())
    assert st.auc_discount == 0  # seat 1 bid after passing nothing: not passed
    st.apply(1, Pass())  # now all four have passed since their last bid
    assert st.auc_discount == 5 and st.legal_actions(2)[0] == Bid("LRC", 15)


def test_random_play_outs_leave_money_for_the_cheapest_private():
    """Errata A1 has no price drop after LRC: a random play-out (not a rule) bids only what
    leaves it the cheapest private's price, so uniform random auctions end."""
    st = new(4, SEED)
    st.apply(0, Bid("LRC", 20))
    st.apply(1, Bid("BMS", 430))
    for seat in (2, 3, 0):
        st.apply(seat, Pass())
    legal = st.legal_actions(1)
    hint = st.playout_actions(1)
    # 20 left, AR costs 25
    assert is_listed(legal, Bid("BMS", 460)) and not is_listed(hint, Bid("BMS", 460))
    assert is_listed(hint, Bid("BMS", 455)) and Bid("AR", 25) in hint and Pass() in hint
    assert all(is_listed(legal, a) for a in concrete_actions(hint))
    # the bid range keeps its minimum and step; only its max is lowered
    (bids,) = [e for e in hint if isinstance(e, ActionRange)]
    assert (bids.action, bids.min, bids.max, bids.step) == (Bid("BMS", 435), 435, 455, 5)


def test_random_play_outs_drop_a_bid_range_with_no_bid_left_that_keeps_the_cheapest():
    """Not a rule: when every legal bid on a private would leave the bidder less than the
    cheapest private's price, the play-out actions leave that bid range out altogether."""
    st = new(4, SEED)
    st.apply(0, Bid("LRC", 20))
    st.apply(1, Bid("BMS", 455))
    for seat in (2, 3, 0):
        st.apply(seat, Pass())
    legal = st.legal_actions(1)
    assert is_listed(legal, Bid("BMS", 460)) and is_listed(legal, Bid("BMS", 480))
    assert st.playout_actions(1) == [Bid("AR", 25), Pass()]  # 480 - 460 < 25


def test_random_play_outs_do_not_go_bankrupt_while_they_have_another_move():
    """Not a rule: a voluntary ``bankrupt`` (legal in any step of a poor corporation's turn,
    as the reference allows) is left out of the play-out actions while another move exists."""
    from ..actions import Bankrupt
    from .flow_helpers import FINAL, before

    st = before(FINAL, 841)
    seat = st.active_seats()[0]
    st.cash[seat] = 0
    st.corp_cash[CORP_INDEX["LF"]] = 0
    st.step = "dividend"  # synthetic: LF poor in its dividend step
    legal = st.legal_actions(seat)
    assert Bankrupt() in legal and len(legal) > 1
    hint = st.playout_actions(seat)
    assert Bankrupt() not in hint and set(hint) == set(legal) - {Bankrupt()}


def test_a_refused_bid_carries_its_numbers():
    """``bid_too_low`` and ``insufficient_cash`` name their numbers as details beside the
    message (the rules service puts them in the ErrorInfo metadata)."""
    import pytest

    from services.e1894.engine.game import GAME
    from services.kernel.engine import ActionRange, IllegalAction

    state = GAME.new_state(3, 1)
    seat = state.active_seats()[0]
    (ar,) = [
        a
        for a in state.legal_actions(seat)
        if isinstance(a, ActionRange) and a.action.to_json()["company"] == "AR"
    ]
    cash = state.cash[seat]
    too_much = (cash // 5 + 1) * 5
    for price, code, numbers in (
        (ar.min - 5, "bid_too_low", {"price": ar.min - 5, "min_bid": ar.min}),
        (too_much, "insufficient_cash", {"price": too_much, "cash": cash}),
    ):
        action = GAME.parse_action({"type": "bid", "company": "AR", "price": price})
        with pytest.raises(IllegalAction) as caught:
            state.clone().apply(seat, action)
        assert caught.value.code == code
        assert {k: caught.value.details[k] for k in numbers} == numbers
