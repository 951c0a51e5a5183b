"""The engine contract's ranged legal actions (:class:`ActionRange` and its helpers):
shapes, inclusive bounds, steps, membership, JSON form and the two random draws."""

from __future__ import annotations

import collections
import dataclasses
from typing import ClassVar

import pytest

from roundhouse.v1 import game_pb2
from services.kernel.engine import (
    Action,
    ActionCodec,
    ActionRange,
    MalformedAction,
    choose_per_entry,
    choose_uniform,
    concrete_actions,
    is_listed,
    legal_count,
    legal_from_json,
)
from services.kernel.rng import SeededRandom
from services.rules import protomap


@dataclasses.dataclass(frozen=True, slots=True)
class Bid(Action):
    TYPE: ClassVar[str] = "bid"
    company: str
    price: int


@dataclasses.dataclass(frozen=True, slots=True)
class Pass(Action):
    TYPE: ClassVar[str] = "pass"


CODEC = ActionCodec([Bid, Pass])


def test_of_rounds_the_top_down_onto_the_steps_and_is_none_when_empty():
    r = ActionRange.of(Bid("AR", 0), "price", 30, 52, step=5)
    assert (r.action, r.min, r.max, r.step) == (Bid("AR", 30), 30, 50, 5)
    assert list(r.values()) == [30, 35, 40, 45, 50] and len(r) == 5
    assert ActionRange.of(Bid("AR", 0), "price", 30, 30).max == 30
    assert ActionRange.of(Bid("AR", 0), "price", 30, 29) is None


@pytest.mark.parametrize(
    "action,field,lo,hi,step",
    [
        (Bid("AR", 30), "company", 30, 40, 1),  # not an int field
        (Bid("AR", 30), "nothing", 30, 40, 1),
        (Bid("AR", 31), "price", 30, 40, 1),  # the action is not at min
        (Bid("AR", 30), "price", 30, 29, 1),
        (Bid("AR", 30), "price", 30, 40, 0),
        (Bid("AR", 30), "price", 30, 42, 5),  # max off the steps
    ],
)
def test_inconsistent_ranges_are_refused(action, field, lo, hi, step):
    with pytest.raises(ValueError):
        ActionRange(action, field, lo, hi, step)


def test_membership_is_exact_on_bounds_steps_and_other_fields():
    r = ActionRange.of(Bid("AR", 0), "price", 30, 50, step=5)
    assert r.contains(Bid("AR", 30)) and r.contains(Bid("AR", 50)) and r.contains(Bid("AR", 45))
    for other in (Bid("AR", 25), Bid("AR", 55), Bid("AR", 31), Bid("SAC", 30), Pass()):
        assert not r.contains(other)
    assert r.at(40) == Bid("AR", 40)
    for bad in (25, 55, 33):
        with pytest.raises(ValueError):
            r.at(bad)
    assert list(r.actions()) == [Bid("AR", p) for p in (30, 35, 40, 45, 50)]
    assert str(r) == "bid company=AR price=30..50/5"


def test_helpers_enumerate_count_and_test_listing():
    legal = [Pass(), ActionRange.of(Bid("AR", 0), "price", 1, 3)]
    assert legal_count(legal) == 4
    assert list(concrete_actions(legal)) == [Pass(), Bid("AR", 1), Bid("AR", 2), Bid("AR", 3)]
    assert is_listed(legal, Bid("AR", 3)) and is_listed(legal, Pass())
    assert not is_listed(legal, Bid("AR", 4)) and not is_listed(legal, Bid("AR", 0))


def test_json_form_round_trips_and_bad_forms_are_malformed():
    r = ActionRange.of(Bid("AR", 0), "price", 30, 50, step=5)
    obj = r.to_json()
    assert obj == {
        "action": {"type": "bid", "company": "AR", "price": 30},
        "field": "price",
        "min": 30,
        "max": 50,
        "step": 5,
    }
    assert legal_from_json(CODEC, obj) == r
    assert legal_from_json(CODEC, {"type": "pass"}) == Pass()
    for bad in (
        {**obj, "max": 52},  # off the steps
        {**obj, "min": 35},  # the action is not at min
        {**obj, "field": "company"},
        {**obj, "step": "5"},
        {**obj, "extra": 1},
        {key: v for key, v in obj.items() if key != "field"},
    ):
        with pytest.raises(MalformedAction):
            legal_from_json(CODEC, bad)


def test_without_ranges_both_draws_are_rng_choice():
    legal = [Pass(), Bid("AR", 20), Bid("AR", 25)]
    for seed in range(20):
        expected = SeededRandom(seed).choice(legal)
        assert choose_uniform(legal, SeededRandom(seed)) == expected
        assert choose_per_entry(legal, SeededRandom(seed)) == expected
    for choose in (choose_uniform, choose_per_entry):
        with pytest.raises(ValueError):
            choose([], SeededRandom(1))


def test_choose_uniform_weighs_a_range_by_its_size_and_per_entry_does_not():
    legal = [Pass(), ActionRange.of(Bid("AR", 0), "price", 1, 3)]
    rng = SeededRandom(7)
    uniform = collections.Counter(choose_uniform(legal, rng) for _ in range(8000))
    assert set(uniform) == set(concrete_actions(legal))
    assert all(1700 < c < 2300 for c in uniform.values()), uniform  # 2000 each
    per_entry = collections.Counter(choose_per_entry(legal, rng) for _ in range(8000))
    assert 3600 < per_entry[Pass()] < 4400, per_entry  # half of the draws


def test_protomap_carries_ranges_beside_the_actions():
    buy = {"type": "buy_train", "train": "2-3", "price": 1, "exchange": None}
    entries = [
        {"type": "pass"},
        {"action": buy, "field": "price", "min": 1, "max": 760, "step": 1},
    ]
    msg = protomap.legal_to_proto("e1894", entries, version=12)
    assert msg.version == 12 and len(msg.actions) == len(msg.actions_json) == len(msg.ranges) == 2
    assert msg.ranges[0].field == "" and (msg.ranges[1].field, msg.ranges[1].max) == ("price", 760)
    assert protomap.action_from_proto(msg.actions[1], "e1894") == {  # unset optional: absent
        k: v for k, v in buy.items() if v is not None
    }
    wire = game_pb2.ListLegalActionsResponse.FromString(msg.SerializeToString())
    assert protomap.legal_from_proto(wire) == entries
    del wire.ranges[:]  # an answer of plain actions only (an older server)
    assert protomap.legal_from_proto(wire) == [{"type": "pass"}, buy]
    wire.ranges.add()
    with pytest.raises(MalformedAction):
        protomap.legal_from_proto(wire)
