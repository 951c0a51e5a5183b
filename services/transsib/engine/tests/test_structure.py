"""The engine's shape (issue 16): pending decisions are named records with one JSON codec,
and every op of the effect language is one row of the effects table."""

from __future__ import annotations

import pytest

from services.kernel.engine import MalformedAction
from services.transsib.engine import data as D
from services.transsib.engine import effects as E
from services.transsib.engine import frames as F
from services.transsib.engine.tests.helpers import act, new_game

SAMPLES = [
    F.Seq(1, "T-BLK-2", 1, True),
    F.Track(2, 3, 0b00011, True, 1, False),
    F.IndustrySteps(0, 2, True, 1),
    F.LocoChoice(3, F.LF_BOTH, True, False, False),
    F.LocoInHand(1, 4, D.KIEV, False, False),
    F.LocoInHand(1, 9, -1, True, True),
    F.Question(2),
    F.CopySpace(0, True),
    F.EndBonus(1),
    F.Relocate(0, D.SPACE_INDEX["T-REP"]),
    F.StartBonus(3),
]


@pytest.mark.parametrize("frame", SAMPLES, ids=lambda f: f.NAME)
def test_frame_json_round_trips_with_named_fields(frame):
    obj = F.frame_json(frame)
    assert obj["kind"] == frame.NAME and obj["seat"] == frame.seat
    assert list(obj)[1:] == [F.JSON_KEY.get(n, n) for n in frame._fields]
    assert F.frame_from_json(obj) == frame


def test_frame_json_uses_rule_names():
    assert F.frame_json(F.Track(0, 2, 0b00011))["colours"] == ["black", "grey"]
    assert F.frame_json(F.LocoInHand(0, 4, D.KIEV))["from_line"] == "kiev"
    assert F.frame_json(F.Relocate(0, D.SPACE_INDEX["T-REP"]))["space"] == "T-REP"
    assert F.frame_json(F.Seq(0, "T-BLK-2", 2))["index"] == 2  # JSON name of next_op


@pytest.mark.parametrize(
    "obj",
    [
        {"kind": "nope", "seat": 0},
        {"kind": "track", "seat": 0, "steps": 1},
        {
            "kind": "track",
            "seat": 0,
            "steps": 1,
            "colours": ["pink"],
            "up_to": 0,
            "done": 0,
            "optional": 0,
        },
    ],
)
def test_bad_frame_json_is_refused(obj):
    with pytest.raises(MalformedAction) as err:
        F.frame_from_json(obj)
    assert err.value.code == "bad_view"


def test_every_op_is_one_row_of_the_effects_table():
    ops = {name: value for name, value in vars(D).items() if name.startswith("OP_")}
    assert len(E.EFFECTS) == len(ops)
    for op, row in enumerate(E.EFFECTS):
        assert D._OP_NAMES[row.name] == op


def test_refusal_and_feasibility_agree():
    """A program is refused with a reason exactly when it is not feasible (§4.4)."""
    s = new_game(4)
    act(s, 0, "place A-TEMP")  # the turquoise workers are gone for the round
    p = s.players[1]
    for key, prog in s.rules.programs.items():
        ok = E.program_ok(s, 1, p, prog)
        why = E.program_refusal(s, 1, p, prog)
        assert ok == (why is None), key
    assert E.program_refusal(s, 1, p, s.rules.programs["A-TEMP"]).startswith("§5.4")
