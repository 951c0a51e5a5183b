"""Bad input: every illegal action is refused with the rule's reason and changes nothing
(each case named in the issue), and things that do not exist are malformed."""

from __future__ import annotations

import pytest

from services.kernel.engine import MalformedAction

from .. import GAME
from ..actions import Bid, BuyShares, BuyTrain, LayTile, Par, PlaceToken, SellShares
from ..data import CORP_INDEX
from .flow_helpers import FINAL, before, new, refused
from .test_stock_round import later_sr, sr1


def test_buy_over_the_certificate_limit():
    """§Shares: the certificate limit."""
    st = later_sr(sr1())
    st.holdings[CORP_INDEX["PLM"]][0] = 60
    st.holdings[CORP_INDEX["Nord"]][0] = 50
    st.president[CORP_INDEX["PLM"]] = 0
    for sym, p in (("PLM", 80), ("Nord", 67)):
        ci = CORP_INDEX[sym]
        st.par[ci] = p
        st.row[ci], st.col[ci] = {80: (4, 3), 67: (7, 5)}[p]
    reason = refused(st, 0, BuyShares("Est", "treasury"), "certificate_limit")
    assert "certificate limit" in reason


def test_buy_over_the_holding_limit():
    """§Shares: at most 60% of a corporation outside the gray zone."""
    st = later_sr(sr1())
    est = CORP_INDEX["Est"]
    st.holdings[est] = [60, 0, 30, 0]
    st.ipo[est] = 10
    assert "60%" in refused(st, 0, BuyShares("Est", "treasury"), "holding_limit")


def test_buy_after_selling_that_corporation_this_round():
    """§Shares: no buying back in the round of the sale."""
    st = later_sr(sr1())
    st.apply(0, SellShares("Belge", 1))
    refused(st, 0, BuyShares("Belge", "pool"), "sold_this_round")


def test_par_at_a_price_that_is_not_allowed():
    """§Setup: SR pars are 95/80/67 only."""
    st = sr1()
    refused(st, 0, Par("CFOR", 100), "bad_par")
    refused(st, 0, Par("CFOR", 70), "bad_par")


def test_train_over_the_limit():
    """§Trains: no purchase over the train limit (trade-ins excepted)."""
    st = before(FINAL, 156)
    st.trains[CORP_INDEX["PLM"]] = ["2-3", "2-4", "3-2", "3-1"]
    st.trains[CORP_INDEX["Nord"]] = []
    st.trains[CORP_INDEX["Est"]] = []
    st.trains[CORP_INDEX["Belge"]] = []
    refused(st, 1, BuyTrain("3-3", 120), "train_limit")


def test_bid_that_is_not_a_multiple_of_5():
    """§Setup: bids are multiples of 5."""
    refused(new(), 0, Bid("SAC", 57), "bid_not_multiple_of_5")


def test_token_where_none_may_go():
    """§Map / §London: no token in London, none in an unreachable city, none in a full one."""
    st = before(FINAL, 783)  # AG's token step
    seat = st.active_seats()[0]
    refused(st, seat, PlaceToken("A10", 0), "no_token_in_london")
    assert "no free slot" in refused(st, seat, PlaceToken("I10", 0), "city_full")  # Est's home
    assert "cannot reach" in refused(st, seat, PlaceToken("E2", 0), "unreachable")
    refused(st, seat, PlaceToken("A12", 0), "ls_only")


def test_tile_where_none_may_go():
    """§Map: the reason of the track rules is given."""
    st = before(FINAL, 121)
    assert "can take no tile" in refused(st, 0, LayTile("I2", "57", 0), "hex_not_upgradable")


def test_things_that_do_not_exist_are_malformed():
    st = new()
    with pytest.raises(MalformedAction):
        st.apply(0, Bid("XYZ", 20))
    st2 = later_sr(sr1())
    with pytest.raises(MalformedAction):
        st2.apply(0, BuyShares("ACME", "pool"))
    with pytest.raises(MalformedAction):
        st2.apply(0, BuyShares("Est", "ipo"))
    with pytest.raises(MalformedAction):
        GAME.parse_action({"type": "bid", "company": "LRC"})
