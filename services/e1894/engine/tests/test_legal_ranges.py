"""``legal_actions`` lists every price ``apply`` accepts (engine contract: an
:class:`~services.kernel.engine.ActionRange` per choice of price): trains bought from another
corporation (spec "Trains and phases": any price from 1, in an emergency up to the face value
with the president's money), privates bought by a corporation (half to double the face value,
within its cash) and bids in the auction (spec "Setup and auction": from the lowest bid to
the cash not tied up in other bids, in multiples of 5)."""

from __future__ import annotations

from services.kernel.engine import ActionRange, is_listed

from ..actions import Bid, BuyCompany, BuyTrain, Pass
from ..data import CORP_INDEX
from .flow_helpers import FINAL, before, new, refused, seat_of

C = CORP_INDEX
SEED = 92791301  # Est drawn; LRC AR SAC SQG LS NMinorS EMS BMS in the auction


def _range_of(legal, cls, **fields) -> ActionRange:
    (entry,) = [
        e
        for e in legal
        if isinstance(e, ActionRange)
        and isinstance(e.action, cls)
        and all(getattr(e.action, k) == v for k, v in fields.items())
    ]
    return entry


def test_another_corporations_train_for_any_price_from_1_to_the_buyers_cash():
    st = before(FINAL, 156)
    plm = C["PLM"]
    legal = st.legal_actions(1)
    prices = _range_of(legal, BuyTrain, train="2-3")
    assert (prices.field, prices.min, prices.max, prices.step) == ("price", 1, 760, 1)
    assert st.corp_cash[plm] == 760
    # the depot's train keeps its one price; no sampled prices are left beside the ranges
    assert BuyTrain("3-3", 120, None) in legal
    assert not [e for e in legal if isinstance(e, BuyTrain) and e.train == "2-3"]
    top = st.clone()
    top.apply(1, prices.at(760))
    assert top.corp_cash[plm] == 0
    refused(st, 1, BuyTrain("2-3", 761), "insufficient_cash")
    refused(st, 1, BuyTrain("2-3", 0), "bad_price")
    assert not is_listed(legal, BuyTrain("2-3", 761)) and is_listed(legal, BuyTrain("2-3", 380))


def test_in_an_emergency_the_range_reaches_the_face_value_with_the_presidents_money():
    st = before(FINAL, 841)
    lf, pres = C["LF"], seat_of(FINAL, 14359)
    assert st.corp_cash[lf] == 119 and st.cash[pres] == 518
    legal = st.legal_actions(pres)
    six = _range_of(legal, BuyTrain, train="6-1")  # face 600 < 119 + 518
    seven = _range_of(legal, BuyTrain, train="7-1")  # face 750 > 637
    assert (six.min, six.max) == (1, 600) and (seven.min, seven.max) == (1, 637)
    probe = st.clone()
    probe.apply(pres, six.at(600))
    assert probe.corp_cash[lf] == 0 and probe.cash[pres] == 518 - (600 - 119)
    refused(st, pres, BuyTrain("6-1", 601), "insufficient_cash")
    refused(st, pres, BuyTrain("7-1", 638), "insufficient_cash")


def test_a_private_for_half_to_double_its_value_within_the_corporations_cash():
    st = before(FINAL, 87)
    nord = C["Nord"]
    assert st.corp_cash[nord] == 180
    legal = st.legal_actions(1)
    ar = _range_of(legal, BuyCompany, company="AR")
    assert (ar.min, ar.max, ar.step) == (13, 50, 1)
    capped = _range_of(legal, BuyCompany, company="NMinorS")  # up to 280 by the rules
    assert (capped.min, capped.max) == (70, 180)
    for price in (13, 50):
        probe = st.clone()
        probe.apply(1, ar.at(price))
        assert probe.corp_cash[nord] == 180 - price
    refused(st, 1, BuyCompany("AR", 12), "bad_price")
    refused(st, 1, BuyCompany("AR", 51), "bad_price")
    refused(st, 1, BuyCompany("NMinorS", 181), "insufficient_cash")


def test_bids_from_the_lowest_to_the_free_cash_in_fives():
    st = new(4, SEED)
    legal = st.legal_actions(0)
    assert Bid("LRC", 20) in legal  # the cheapest private: one price
    ar = _range_of(legal, Bid, company="AR")
    assert (ar.min, ar.max, ar.step) == (30, 480, 5) and len(ar) == 91
    st.apply(0, Bid("BMS", 465))
    for s in (1, 2, 3):
        st.apply(s, Pass())
    legal = st.legal_actions(0)
    bms = _range_of(legal, Bid, company="BMS")  # his own bid is not counted against a raise
    assert (bms.min, bms.max) == (470, 480)
    assert not [e for e in legal if isinstance(e, ActionRange) and e.action.company != "BMS"]
    refused(st, 0, Bid("BMS", 485), "insufficient_cash")
    refused(st, 0, Bid("BMS", 472), "bid_not_multiple_of_5")
    st.apply(0, bms.at(480))
