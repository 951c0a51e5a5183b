"""Dividends and the General Dividend phase (spec §10)."""

from __future__ import annotations

from services.railbarons.engine import data, dividends, phases
from services.railbarons.engine.tests.helpers import Decline as DeclineAction
from services.railbarons.engine.tests.helpers import (
    decline_turn,
    lay_track,
    new,
    opening,
    path,
    standard_opening,
    turn,
)

CI = data.COMPANY_INDEX


def _to_dividend(st):
    """Decline turns until the turn that puts the second dial in red; returns its events."""
    for _ in range(3):
        decline_turn(st, "auction")
    for _ in range(3):
        decline_turn(st, "develop")
    seat = turn(st, "develop")
    return st.apply(seat, DeclineAction())


def test_per_share_is_rounded_up_by_default():
    """§10.1 [S] (dividend_rounding): ceil(income / shares sold); 'down' truncates."""
    assert dividends.per_share(13, 2) == 7
    assert dividends.per_share(13, 2, round_up=False) == 6
    assert dividends.per_share(12, 3) == 4
    assert dividends.per_share(7, 1) == 7


def test_general_dividend_pays_every_holder_from_the_bank():
    """§10.1: every company with a share sold pays ceil(income / sold) per share to its
    holders; treasuries receive nothing."""
    st = standard_opening(4)  # PRR 0, B&O 1, C&O 2, NYC 3, one share each
    cash = list(st.cash)
    treasuries = list(st.treasury)
    events = _to_dividend(st)
    assert [st.cash[s] - cash[s] for s in range(4)] == [7, 6, 5, 8]
    assert st.treasury == treasuries
    paid = [e for e in events if e["type"] == "dividend"]
    assert [(e["company"], e["per_share"], e["kind"]) for e in paid] == [
        ("PRR", 7, "general"),
        ("BO", 6, "general"),
        ("CO", 5, "general"),
        ("NYC", 8, "general"),
    ]


def _nyc_13_with_two_holders(**options) -> list[int]:
    """§10.1 worked example: after the standard opening NYC has income 13 and 2 shares sold
    (seats 0 and 3 hold one each); the cash each seat gains in the next General Dividend."""
    st = standard_opening(4, **options)
    nyc = CI["NYC"]
    st.income[nyc] = 13
    st.held[0 * 5 + nyc] = 1
    st.sold[nyc] = 2
    cash = list(st.cash)
    _to_dividend(st)
    return [now - before for now, before in zip(st.cash, cash, strict=True)]


def test_shares_split_the_income():
    """§10.1: NYC income 13, 2 shares sold, each holder of one gets 7 (worked example)."""
    gains = _nyc_13_with_two_holders()
    assert gains[3] == 7
    assert gains[0] == 7 + 7  # PRR 7 + NYC 7
    assert _nyc_13_with_two_holders(dividend_rounding="down")[3] == 6


def test_unsold_companies_pay_nothing():
    """§10.1: only companies with at least one share sold pay (C&O stayed unsold)."""
    st = opening(new(3), [(0, 7), (1, 6), None, (2, 8)])
    assert st.sold[CI["CO"]] == 0
    cash = list(st.cash)
    events = _to_dividend(st)
    assert "CO" not in [e["company"] for e in events if e["type"] == "dividend"]
    assert sum(st.cash) - sum(cash) == 7 + 6 + 8


def test_phase_resets_dials_and_advances_detroit():
    """§10.2-§10.3: all dials back to start; Detroit one step up and companies in Detroit
    gain the step."""
    st = standard_opening(4)
    lay_track(st, "NYC", path("NYC", "E0"))
    income = st.income[CI["NYC"]]
    events = _to_dividend(st)
    assert st.dials == [0, 0, 0]
    assert st.ind[0] == 2
    assert st.income[CI["NYC"]] == income + 1
    det = [e for e in events if e["type"] == "industrial_advanced"]
    assert det == [
        {
            "type": "industrial_advanced",
            "hex": "E0",
            "city": "detroit",
            "value": 2,
            "companies": ["NYC"],
        }
    ]
    assert st.rounds == 1 and st.phase == phases.DIAL


def test_detroit_step_option():
    """§8 [S] (detroit_step)."""
    st = standard_opening(4, detroit_step=2)
    _to_dividend(st)
    assert st.ind[0] == 3
