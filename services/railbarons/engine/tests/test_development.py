"""Development of hexes and industrial cities (spec §8)."""

from __future__ import annotations

from services.railbarons.engine import data, development, phases
from services.railbarons.engine.actions import DECLINE
from services.railbarons.engine.tests.helpers import (
    Build,
    Develop,
    lay_track,
    path,
    refuse,
    standard_opening,
    turn,
)

CI = data.COMPANY_INDEX
HI = data.HEX_INDEX
PRR, NYC = CI["PRR"], CI["NYC"]


def _developing(n=4, **options):
    st = standard_opening(n, **options)  # seat 0 PRR, 1 B&O, 2 C&O, 3 NYC
    turn(st, "develop")
    return st


def test_nothing_to_develop_at_the_start():
    """§8: targets need a locomotive; start hexes are not developable."""
    st = _developing()
    assert st.legal_actions(0) == [DECLINE]
    refuse(st, 0, Develop("R5"), "not_developable", "§8")


def test_city_development_raises_income_now_and_for_later_arrivals():
    """§8: a house on a city raises its income by the bonus; every company there gains it
    now; companies arriving later gain the developed value."""
    st = _developing()
    lay_track(st, "NYC", ["R2", "Q3"])  # Q3: city, income 1, bonus +1
    assert st.income[NYC] == 8 + 1
    assert Develop("Q3") in st.legal_actions(0)
    events = st.apply(0, Develop("Q3"))  # no share needed (§8 [U])
    assert events[0]["type"] == "developed" and events[0]["income_gain"] == 1
    assert st.income[NYC] == 10 and st.houses == 19
    assert st.developed >> HI["Q3"] & 1
    assert st.phase == phases.DIAL and st.active == 1
    lay_track(st, "PRR", ["R4", "Q4"])
    st.treasury[PRR] = 50
    st.held[1 * 5 + PRR] = 1  # seat 1 takes a PRR share to expand it
    turn(st, "expand")
    st.apply(1, Build("PRR", "Q3"))
    assert st.income[PRR] == 7 + 2  # 1 printed + 1 development
    assert st.treasury[PRR] == 50 - 2 * 2  # shared city: base 2 x (1 + 1)


def test_shared_city_all_companies_gain():
    """§8: every company already in the city gains the bonus."""
    st = _developing()
    lay_track(st, "NYC", ["R2", "Q3"])
    lay_track(st, "PRR", ["R4", "Q4", "Q3"])
    st.apply(0, Develop("Q3"))
    assert st.income[NYC] == 8 + 2 and st.income[PRR] == 7 + 2


def test_mountain_development():
    """§8: a mountain's income rises by its bonus (+2; N4 only +1)."""
    st = _developing()
    lay_track(st, "PRR", path("PRR", "L4"))
    income = st.income[PRR]
    st.apply(0, Develop("L4"))
    assert st.income[PRR] == income + 2


def test_forest_development_pays_the_company():
    """§8 [S] (forest_development_cash): the company in the forest gets $2 from the bank;
    its income is unchanged."""
    st = _developing()
    lay_track(st, "NYC", ["R3"])
    treasury, income = st.treasury[NYC], st.income[NYC]
    events = st.apply(0, Develop("R3"))
    assert st.treasury[NYC] == treasury + 2 and st.income[NYC] == income
    assert events[0]["treasury_gain"] == 2 and events[0]["companies"] == ["NYC"]
    st2 = _developing(forest_development_cash=5)
    lay_track(st2, "NYC", ["R3"])
    st2.apply(0, Develop("R3"))
    assert st2.treasury[NYC] == 8 + 5


def test_each_hex_only_once():
    """§8: an ordinary hex can be developed only once."""
    st = _developing()
    lay_track(st, "NYC", ["R2", "Q3"])
    st.apply(0, Develop("Q3"))
    turn(st, "develop")
    assert Develop("Q3") not in st.legal_actions(1)
    refuse(st, 1, Develop("Q3"), "already_developed", "§8")


def test_needs_a_locomotive():
    """§8: the target must contain at least one locomotive (of any company)."""
    st = _developing()
    refuse(st, 0, Develop("B5"), "no_locomotive_in_hex", "§8")
    refuse(st, 0, Develop("K4"), "no_locomotive_in_hex", "§8")


def test_detroit_cannot_be_developed():
    """§8: Detroit advances automatically; players cannot develop it."""
    st = _developing()
    lay_track(st, "PRR", path("PRR", "E0"))
    assert Develop("E0") not in st.legal_actions(0)
    refuse(st, 0, Develop("E0"), "detroit_automatic", "§8")


def test_plains_and_chicago_are_not_developable():
    """§8: only cities with a development symbol, mountains, forests and two industrial
    cities; Chicago has no development symbol in the data."""
    st = _developing()
    lay_track(st, "PRR", path("PRR", "A2"))
    refuse(st, 0, Develop("Q5"), "not_developable", "§8")
    refuse(st, 0, Develop("A2"), "not_developable", "§8")


def test_wheeling_and_pittsburgh_tracks():
    """§8 [S]: Wheeling +1 up to 6, Pittsburgh +2 up to 8, repeatable; companies there gain
    the difference; no house is used (industrial_development_uses_house [U])."""
    st = _developing()
    lay_track(st, "PRR", path("PRR", "I6"))
    lay_track(st, "BO", path("BO", "K4"))
    bo = CI["BO"]
    prr_income, bo_income = st.income[PRR], st.income[bo]
    for value in (4, 5, 6):
        st.apply(st.active, Develop("I6"))
        assert st.ind[1] == value
        turn(st, "develop")
    assert st.income[PRR] == prr_income + 3
    s = st.active
    assert Develop("I6") not in st.legal_actions(s)
    refuse(st, s, Develop("I6"), "industrial_at_max", "§8")
    probe = st.clone()
    probe.apply(s, Develop("K4"))
    assert probe.ind[2] == 6 and probe.income[bo] == bo_income + 2
    assert probe.houses == 20
    st.ind[2] = 8
    assert Develop("K4") not in st.legal_actions(s)
    refuse(st, s, Develop("K4"), "industrial_at_max", "§8")


def test_industrial_steps_options():
    """§8 [S] (wheeling_step/max, pittsburgh_step/max)."""
    st = _developing(pittsburgh_step=1, pittsburgh_max=5)
    lay_track(st, "BO", path("BO", "K4"))
    st.apply(0, Develop("K4"))
    assert st.ind[2] == 5
    turn(st, "develop")
    assert Develop("K4") not in st.legal_actions(1)


def test_industrial_development_uses_house_option():
    """§8 [U] (industrial_development_uses_house = True): a track step takes a house."""
    st = _developing(industrial_development_uses_house=True)
    lay_track(st, "PRR", path("PRR", "I6"))
    st.apply(0, Develop("I6"))
    assert st.houses == 19


def test_house_supply():
    """§8: an ordinary development needs a house from the general supply."""
    st = _developing()
    lay_track(st, "NYC", ["R2", "Q3"])
    lay_track(st, "PRR", path("PRR", "I6"))
    st.houses = 0
    assert Develop("Q3") not in st.legal_actions(0)
    assert Develop("I6") in st.legal_actions(0)
    refuse(st, 0, Develop("Q3"), "no_houses", "§8")


def test_develop_requires_share_option():
    """§8 [U] (develop_requires_share = True): the developer must hold a share of a company
    in the hex."""
    st = _developing(develop_requires_share=True)
    lay_track(st, "NYC", ["R2", "Q3"])
    assert Develop("Q3") not in st.legal_actions(0)
    refuse(st, 0, Develop("Q3"), "no_share", "§8")
    st.held[0 * 5 + NYC] = 1
    assert Develop("Q3") in st.legal_actions(0)


def test_development_cost_option():
    """§8 [S] (development_cost): developing is free by default; the option charges the
    player."""
    st = _developing(development_cost=3)
    lay_track(st, "NYC", ["R2", "Q3"])
    cash = st.cash[0]
    st.apply(0, Develop("Q3"))
    assert st.cash[0] == cash - 3
    st2 = _developing(development_cost=3)
    lay_track(st2, "NYC", ["R2", "Q3"])
    st2.cash[0] = 2
    assert st2.legal_actions(0) == [DECLINE]
    refuse(st2, 0, Develop("Q3"), "insufficient_cash", "§8")


def test_candidates_are_exact():
    """§8: the legal developments are exactly the occupied, undeveloped developable hexes
    and the industrial cities below their maximum."""
    st = _developing()
    lay_track(st, "PRR", path("PRR", "K4"))
    mask = development.candidates(st, 0)
    expected = {
        data.HEX_IDS[h]
        for h in data.iter_bits(st.net[PRR])
        if data.ORDINARY_DEVELOPABLE_MASK >> h & 1
    } | {"K4"}
    assert {data.HEX_IDS[h] for h in data.iter_bits(mask)} == expected
