"""Expansion: placing locomotives (spec §7)."""

from __future__ import annotations

import pytest

from services.railbarons.engine import data, expansion, phases
from services.railbarons.engine.actions import DECLINE, DONE
from services.railbarons.engine.options import RailbaronsOptions, compile_rules
from services.railbarons.engine.tests.helpers import (
    Build,
    Decline,
    Done,
    lay_track,
    path,
    refuse,
    standard_opening,
    turn,
)

CI = data.COMPANY_INDEX
HI = data.HEX_INDEX
PRR = CI["PRR"]


def _expanding(n=4, **options):
    st = standard_opening(n, **options)  # seat 0 holds PRR (treasury 7), seat 1 B&O ...
    turn(st, "expand")
    return st


def test_legal_builds_are_the_hexes_next_to_the_network():
    """§7: each locomotive goes next to a hex already holding one of the company's; the
    player may expand only companies he holds a share of."""
    st = _expanding()
    legal = st.legal_actions(0)
    assert legal[0] == DECLINE
    assert {(a.company, a.hex) for a in legal[1:]} == {
        ("PRR", h) for h in ("Q5", "Q6", "R4", "R6", "S5")
    }


def test_a_build_pays_from_the_treasury_and_uses_a_locomotive():
    """§7: the company's treasury pays the printed cost; one locomotive leaves the charter."""
    st = _expanding()
    events = st.apply(0, Build("PRR", "Q5"))
    assert events[0] == {
        "type": "built",
        "seat": 0,
        "company": "PRR",
        "hex": "Q5",
        "cost": 1,
        "income_gain": 0,
    }
    assert st.treasury[PRR] == 6 and st.locos[PRR] == 18
    assert st.net[PRR] >> HI["Q5"] & 1


def test_a_chain_of_up_to_three_then_the_turn_ends():
    """§7: 1 to 3 locomotives per action, a chain growing from the network; after the
    third the turn ends by itself."""
    st = _expanding()
    st.apply(0, Build("PRR", "Q5"))
    legal = st.legal_actions(0)
    assert legal[0] == DONE
    assert Build("PRR", "P5") in legal  # next to the new locomotive only
    st.apply(0, Build("PRR", "P5"))
    st.apply(0, Build("PRR", "O5"))  # plain costing 2
    assert st.treasury[PRR] == 7 - 1 - 1 - 2
    assert st.phase == phases.DIAL and st.active == 1


def test_done_after_one_or_two():
    """§7: the player may stop after one or two locomotives; 'done' needs one placed and
    'decline' is only possible before the first."""
    st = _expanding()
    refuse(st, 0, Done(), "nothing_built", "§7")
    st.apply(0, Build("PRR", "Q5"))
    refuse(st, 0, Decline(), "already_building", "§7")
    st.apply(0, Done())
    assert st.phase == phases.DIAL and st.active == 1


def test_one_company_per_action():
    """§7: one expansion action builds for one company."""
    st = standard_opening(2)  # seat 0 holds PRR and C&O, seat 1 B&O and NYC
    turn(st, "expand")
    companies = {a.company for a in st.legal_actions(0)[1:]}
    assert companies == {"PRR", "CO"}
    st.apply(0, Build("PRR", "Q5"))
    assert {a.company for a in st.legal_actions(0)[1:]} == {"PRR"}
    refuse(st, 0, Build("CO", "P8"), "other_company", "§7")


def test_no_share_no_expansion():
    """§7: the player must own at least one share of the company."""
    st = _expanding()
    refuse(st, 0, Build("BO", "P6"), "no_share", "§7")


def test_not_adjacent():
    """§7: a locomotive must be adjacent to the company's network."""
    st = _expanding()
    refuse(st, 0, Build("PRR", "P5"), "not_adjacent", "§7")
    refuse(st, 0, Build("PRR", "A3"), "not_adjacent", "§7")


def test_one_locomotive_per_company_per_hex():
    """§7 [U, implied]: a company has at most one locomotive per hex."""
    st = _expanding()
    refuse(st, 0, Build("PRR", "R5"), "already_there", "§7")


def test_forest_and_mountain_hold_one_company():
    """§7: forests and mountains hold one company's locomotive only."""
    st = _expanding()
    lay_track(st, "NYC", ["R3"])  # forest next to New York
    lay_track(st, "PRR", ["R4"])
    assert Build("PRR", "R3") not in st.legal_actions(0)
    refuse(st, 0, Build("PRR", "R3"), "exclusive_terrain", "§7")
    assert Build("PRR", "Q4") in st.legal_actions(0)  # an empty forest is fine


def test_start_hexes_are_reserved():
    """§7 [S] (start_hexes_exclusive): other companies may not enter a start hex; with the
    option off they may (at the hex's printed cost and income)."""
    st = _expanding()
    lay_track(st, "PRR", ["S5", "S4"])
    assert Build("PRR", "S3") not in st.legal_actions(0)
    refuse(st, 0, Build("PRR", "S3"), "start_hex_reserved", "§7")
    st2 = _expanding(start_hexes_exclusive=False)
    lay_track(st2, "PRR", ["S5", "S4"])
    assert Build("PRR", "S3") in st2.legal_actions(0)
    st2.apply(0, Build("PRR", "S3"))
    assert st2.count[HI["S3"]] == 2


def test_fort_wayne_is_closed_before_the_wabash_opens():
    """§7 [S] / §15.6: Fort Wayne is the Wabash's start hex even before it opens."""
    st = _expanding()
    assert not st.rules.allowed[PRR] >> HI["D3"] & 1
    assert st.rules.allowed[CI["WAB"]] >> HI["D3"] & 1


def test_treasury_must_pay_in_full():
    """§7: no partial builds and no player money: the treasury pays the whole cost."""
    st = _expanding()
    st.treasury[PRR] = 0
    assert st.legal_actions(0) == [DECLINE]
    err = refuse(st, 0, Build("PRR", "Q5"), "insufficient_treasury", "§7")
    assert "$1" in err.reason
    st.treasury[PRR] = 1
    lay_track(st, "PRR", ["Q5"])
    assert Build("PRR", "Q4") not in st.legal_actions(0)  # forest costs 2
    assert Build("PRR", "P5") in st.legal_actions(0)


def test_no_locomotives_left():
    """§7/§2: a company without locomotives on its charter cannot expand."""
    st = _expanding()
    st.locos[PRR] = 0
    assert st.legal_actions(0) == [DECLINE]
    refuse(st, 0, Build("PRR", "Q5"), "no_locomotives", "§7")


@pytest.mark.parametrize(
    "formula,one_other,two_others",
    [
        ("multiply", 2, 3),
        ("add_one_per_company", 2, 3),
        ("count_multiplier", 1, 2),
        ("doubling", 2, 4),
    ],
)
def test_shared_hex_cost_formula(formula, one_other, two_others):
    """§7 [C] (build_cost_formula): entering a shared plain of base cost 1."""
    rules = compile_rules(RailbaronsOptions(build_cost_formula=formula))
    q6 = HI["Q6"]
    assert rules.cost[q6 * 6 + 0] == 1
    assert rules.cost[q6 * 6 + 1] == one_other
    assert rules.cost[q6 * 6 + 2] == two_others


def test_shared_hex_cost_in_play():
    """§7 [C] default: cost = base x (1 + companies already there); B&O sits in Q6."""
    st = _expanding()
    lay_track(st, "BO", ["Q6"])
    events = st.apply(0, Build("PRR", "Q6"))
    assert events[0]["cost"] == 2 and st.treasury[PRR] == 5
    assert st.count[HI["Q6"]] == 2


def test_income_gain_on_entering():
    """§7: the company's income rises by the entered hex's income: city 1, mountain 1,
    industrial city its track value (Pittsburgh 4), plains and forests 0."""
    st = _expanding()
    st.treasury[PRR] = 100
    lay_track(st, "PRR", ["R4", "Q4"])  # plain, forest: +0
    assert st.income[PRR] == 7
    st.apply(0, Build("PRR", "Q3"))  # city income 1
    assert st.income[PRR] == 8
    assert expansion.hex_income(st, HI["K4"]) == 4
    assert expansion.hex_income(st, HI["L4"]) == 1  # mountain
    assert expansion.hex_income(st, data.CHICAGO) == 7


@pytest.mark.parametrize(
    "target,cost,gain",
    [
        ("O5", 2, 0),  # plain of cost 2
        ("Q4", 2, 0),  # forest
        ("J2", 1, 0),  # the forest of cost 1 (⚠ in the spec)
        ("L4", 3, 1),  # mountain
        ("K6", 4, 1),  # mountain of cost 4
        ("Q3", 2, 1),  # city
        ("I2", 1, 2),  # city of income 2 (Cleveland?)
        ("K4", 4, 4),  # Pittsburgh: its track value
        ("E0", 3, 1),  # Detroit: its track value
        ("A2", 3, 7),  # Chicago
    ],
)
def test_terrain_costs_and_incomes_in_play(target, cost, gain):
    """§7 terrain overview and §12 hex table: entering an empty hex costs its printed cost
    (paid by the treasury) and adds its income; values as printed in the spec's table."""
    st = standard_opening(4)
    chain = path("PRR", target)
    lay_track(st, "PRR", chain[:-1])
    st.treasury[PRR] = 50
    income = st.income[PRR]
    turn(st, "expand")
    events = st.apply(0, Build("PRR", target))
    assert events[0]["cost"] == cost and events[0]["income_gain"] == gain
    assert st.treasury[PRR] == 50 - cost and st.income[PRR] == income + gain


def test_mountains_hold_one_company():
    """§7: a mountain with another company's locomotive cannot be entered (like forests)."""
    st = standard_opening(4)
    lay_track(st, "BO", path("BO", "L4"))
    lay_track(st, "PRR", path("PRR", "K4", avoid=("L4",)))
    st.treasury[PRR] = 50
    turn(st, "expand")
    assert Build("PRR", "L4") not in st.legal_actions(0)
    refuse(st, 0, Build("PRR", "L4"), "exclusive_terrain", "§7")
    assert Build("PRR", "K5") in st.legal_actions(0)  # an empty forest next to it


def test_fort_wayne_refused_in_play():
    """§7 [S] / §15.6 (start_hexes_exclusive): a company next to Fort Wayne cannot enter
    it, before or after the Wabash opens."""
    st = standard_opening(4)
    lay_track(st, "PRR", path("PRR", "C3", avoid=("D3",)))
    st.treasury[PRR] = 50
    turn(st, "expand")
    assert Build("PRR", "D3") not in st.legal_actions(0)
    refuse(st, 0, Build("PRR", "D3"), "start_hex_reserved", "§7")
