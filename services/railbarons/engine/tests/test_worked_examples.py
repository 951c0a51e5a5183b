"""The ``worked_examples`` of ``railbarons_data.json`` as tests (spec §4, §6, §7, §10,
§11). Every example in the data file must have a check here."""

from __future__ import annotations

import pytest

from services.railbarons.engine import auction, data, dividends
from services.railbarons.engine.options import RailbaronsOptions, compile_rules
from services.railbarons.engine.tests.helpers import (
    ChooseDial,
    Decline,
    new,
    opening,
)

CI = data.COMPANY_INDEX
EXAMPLES = {e["name"]: e for e in data.DATA["worked_examples"]}


def _initial_minimum_bids(example):
    """§4: minimum opening bids 7/6/5/8."""
    st = new(4)
    got = {}
    for _ in range(4):
        cid = data.COMPANY_IDS[st.a_company]
        got[cid] = auction.min_bid(st, st.a_company)
        opening(st, [(st.active, got[cid])])
    assert got == example["expect"]


def _minimum_bid(company: str, income: int, sold: int, expected: int):
    """§6.2: the check of a minimum bid example: ``company`` with ``income`` and ``sold``
    shares sold has the minimum bid ``expected`` = ceil(income / (sold + 1)), the result the
    example states."""

    def check(example):
        st = new(4)
        st.income[CI[company]] = income
        st.sold[CI[company]] = sold
        assert auction.min_bid(st, CI[company]) == expected
        assert example["expect"].endswith(f"= {expected}")

    return check


def _dividend(example):
    """§10.1: NYC income 13, 2 shares sold, holder of one gets 7 (6 rounding down)."""
    assert dividends.per_share(13, 2) == 7
    assert dividends.per_share(13, 2, round_up=False) == 6
    assert example["expect"].startswith("7")


def _shared_plain_cost(example):
    """§7: a plain of base cost 1 with one other company costs 2 by default."""
    rules = compile_rules(RailbaronsOptions())
    q5 = data.HEX_INDEX["Q5"]
    assert data.BASE_COST[q5] == 1
    assert rules.cost[q5 * 6 + 1] == 2
    assert example["expect"].startswith("2")


def _three_player_opening(example):
    """§4: 3 players x $40, all four opening shares sold for $20."""
    st = new(3)
    opening(st, [(0, 20), (1, 20), (2, 20), (2, 20)])
    assert st.cash == [20, 20, 0]
    assert st.treasury[:4] == [20, 20, 20, 20]
    assert example["expect"] == "cash 20/20/0; treasuries PRR 20, B&O 20, C&O 20, NYC 20"


def _max_game_length(example):
    """§11: Detroit +1 per dividend: 8 after the 7th, the game ends after the 8th."""
    st = new(3)
    opening(st, [(0, 7), (1, 6), (2, 5), (0, 8)])
    while not st.is_terminal():
        seat = st.active
        dial = [a.dial for a in st.legal_actions(seat)][0]
        st.apply(seat, ChooseDial(dial))
        st.apply(seat, Decline())
        if st.rounds == 7 and not st.is_terminal():
            assert st.ind[0] == 8 and st.end_reason == "detroit"
    assert st.rounds == 8 and st.ind[0] == 8
    assert "8th dividend" in example["expect"]


CHECKS = {
    "initial minimum bids": _initial_minimum_bids,
    "minimum bid": _minimum_bid("PRR", 10, 1, 5),  # ceil(10/2) = 5
    "minimum bid 2": _minimum_bid("CO", 13, 3, 4),  # ceil(13/4) = 4
    "dividend": _dividend,
    "shared plain cost": _shared_plain_cost,
    "3-player opening (kanga.nu set piece #2)": _three_player_opening,
    "max game length": _max_game_length,
}


def test_every_worked_example_has_a_check():
    """Every worked example of the data file is checked below."""
    assert set(EXAMPLES) == set(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_worked_example(name):
    """The named worked example of ``railbarons_data.json``."""
    CHECKS[name](EXAMPLES[name])
