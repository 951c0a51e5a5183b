"""Trains, phases, rusting and events (spec "Trains and phases"), checked on the recorded
game ``1894_game_end_final_phase``."""

from __future__ import annotations

from ..actions import BuyTrain
from ..data import PHASES, PRIVATE_INDEX, TRAINS
from ..trains import depot_train_id, initial_depot, trade_in_discount, train_limit
from .flow_helpers import FINAL, at, before, new


def test_depot_contents_and_ids():
    """§Trains: 7x2, 5x3, 4x4, 5x5+1, 2x6, 3x7, unlimited D, sold in order; ids name-k."""
    left, nxt = initial_depot()
    assert left == [7, 5, 4, 5, 2, 3, -1] and nxt == [0] * 7
    st = new()
    assert depot_train_id(st) == "2-0"
    st.depot_left[:6] = [0] * 6
    assert depot_train_id(st) == "D-0"


def test_trade_in_discounts():
    """§Trains: 3 takes a 2 for 40, 4 a 3 for 60, 5+1 a 4 for 150, 6 a 5+1 for 200, 7 a 6 for
    300, D a 5+1/6/7 for 200/300/350; no other pairs."""
    idx = {t.name: t.index for t in TRAINS}
    assert trade_in_discount(idx["3"], "2-0") == 40
    assert trade_in_discount(idx["4"], "3-1") == 60
    assert trade_in_discount(idx["5+1"], "4-0") == 150
    assert trade_in_discount(idx["6"], "5+1-2") == 200
    assert trade_in_discount(idx["7"], "6-0") == 300
    assert [trade_in_discount(idx["D"], t) for t in ("5+1-0", "6-0", "7-0")] == [200, 300, 350]
    assert trade_in_discount(idx["4"], "2-0") == 0


def test_train_limits_by_phase():
    """§Trains: limits 4 in Yellow and Green, 3 in Blue to Gray, 2 in Purple; ORs per set
    1, 2, 2, 3, 3, 3, 3."""
    st = new()
    limits = []
    for p in range(len(PHASES)):
        st.phase = p
        limits.append(train_limit(st))
    assert limits == [4, 4, 3, 3, 3, 3, 2]
    assert [p.operating_rounds for p in PHASES] == [1, 2, 2, 3, 3, 3, 3]


def test_first_3_starts_green():
    """§Trains: the first 3 starts the Green phase (2 ORs per set, companies for sale)."""
    st = before(FINAL, 86)
    assert PHASES[st.phase].name == "Yellow"
    st.apply(1, BuyTrain("3-0", 120))
    assert PHASES[st.phase].name == "Green"


def test_first_4_rusts_the_2s():
    """§Trains: the first 4 starts Blue and rusts every 2."""
    st = before(FINAL, 198)
    assert any(t.startswith("2-") for ts in st.trains for t in ts)
    st.apply(st.active_seats()[0], BuyTrain("4-0", 240, "3-4"))
    assert PHASES[st.phase].name == "Blue"
    assert not any(t.startswith("2-") for ts in st.trains for t in ts)


def test_first_5_plus_1_brings_the_late_corporations():
    """§Trains: the first 5+1 starts Brown, rusts the 3s, makes LF and LB available."""
    st = before(FINAL, 356)
    assert not st.late_available
    st.apply(st.active_seats()[0], BuyTrain("5+1-0", 250, "4-1"))
    assert st.late_available and PHASES[st.phase].name == "Brown"
    assert not any(t.startswith("3-") for ts in st.trains for t in ts)


def test_first_6_closes_every_private_but_sqg():
    """§Trains: the first 6 closes all privates except SQG."""
    st = at(FINAL, 554)
    assert PHASES[st.phase].name == "Red"
    open_ = [p for p, o in zip(PRIVATE_INDEX, st.private_owner, strict=True) if o >= 0]
    assert open_ == ["SQG"]


def test_first_d_triggers_the_last_set_and_closes_sqg():
    """§Trains: the first D starts Purple: rusts the 5+1s, "last OR set" is triggered, SQG
    closes."""
    st = before(FINAL, 760)
    assert not st.last_set_triggered
    st.apply(st.active_seats()[0], BuyTrain("D-0", 800))
    assert st.last_set_triggered and PHASES[st.phase].name == "Purple"
    assert st.private_owner[PRIVATE_INDEX["SQG"]] == -2
    assert not any(t.startswith("5+1-") for ts in st.trains for t in ts)


def test_trade_in_next_colour_only_option():
    """Option ``trade_in_next_colour_only`` (designer's rules §7.3.7): a train is upgraded
    only to the next colour, so the D takes a 7 only; by default (the reference engine) it
    takes a 5+1, a 6 or a 7."""
    d = next(i for i, t in enumerate(TRAINS) if t.name == "D")
    assert [trade_in_discount(d, t) for t in ("5+1-0", "6-0", "7-0")] == [200, 300, 350]
    assert [trade_in_discount(d, t, True) for t in ("5+1-0", "6-0", "7-0")] == [0, 0, 350]
    three = next(i for i, t in enumerate(TRAINS) if t.name == "3")
    assert trade_in_discount(three, "2-0", True) == 40
