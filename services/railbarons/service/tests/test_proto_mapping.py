"""The typed protobuf messages of ``proto/roundhouse/v1/railbarons.proto`` map one to one
onto the engine's canonical JSON (``services.rules.protomap``): every legal action and every
view of whole games round-trip, and unknown fields are refused."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from roundhouse.v1 import railbarons_pb2
from services.kernel.rng import SeededRandom
from services.railbarons.engine.tests.helpers import steered_policy
from services.rules import protomap
from services.rules.titles import get_game

TITLE = "railbarons"
GAME = get_game(TITLE)


def _drop_none(value):
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def _check_fields(value, descriptor, where="View"):
    """Every key of a view dict is a field of the message and vice versa (recursively)."""
    assert set(value) == set(descriptor.fields_by_name), where
    for key, sub in value.items():
        field = descriptor.fields_by_name[key]
        if field.message_type is None or sub is None:
            continue
        if field.message_type.GetOptions().map_entry:
            vfield = field.message_type.fields_by_name["value"]
            if vfield.message_type is not None:
                for k, item in sub.items():
                    _check_fields(item, vfield.message_type, f"{where}.{key}[{k}]")
        elif isinstance(sub, list):
            for i, item in enumerate(sub):
                _check_fields(item, field.message_type, f"{where}.{key}[{i}]")
        else:
            _check_fields(sub, field.message_type, f"{where}.{key}")


def _games():
    for n, seed in ((2, 5), (4, 6), (6, 7)):
        rng = SeededRandom(seed)
        yield n, seed, lambda st, seat, rng=rng: rng.choice(st.legal_actions(seat))
    yield 4, 0, steered_policy(0)  # reaches Chicago: Wabash auction, Chicago dividend


@pytest.mark.parametrize("case", list(range(4)))
def test_actions_and_views_round_trip(case):
    """Every legal action and every view (each seat and the spectator) of a whole game
    converts to the typed messages and back unchanged."""
    n, seed, policy = list(_games())[case]
    st = GAME.new_state(n, seed)
    step = 0
    while True:
        seats = [None, *range(n)] if step % 3 == 0 or st.is_terminal() else [None]
        for viewer in seats:
            view = st.view(viewer)
            msg = protomap.view_to_proto(TITLE, view)
            assert protomap.view_from_proto(msg) == _drop_none(view)
            _check_fields(view, railbarons_pb2.View.DESCRIPTOR)
        if st.is_terminal():
            break
        seat = st.active_seats()[0]
        for action in st.legal_actions(seat):
            msg = protomap.action_to_proto(TITLE, action.to_json())
            back = protomap.action_from_proto(msg, TITLE)
            assert GAME.parse_action(back) == action
        st.apply(seat, policy(st, seat))
        step += 1


def test_action_messages_match_the_action_classes():
    """The oneof fields are the action TYPEs; each message's fields are the action's."""
    import dataclasses

    from services.railbarons.engine.actions import ACTION_CLASSES

    oneof = railbarons_pb2.Action.DESCRIPTOR.oneofs_by_name["kind"]
    assert {f.name for f in oneof.fields} == {cls.TYPE for cls in ACTION_CLASSES}
    for cls in ACTION_CLASSES:
        field = railbarons_pb2.Action.DESCRIPTOR.fields_by_name[cls.TYPE]
        names = {f.name for f in dataclasses.fields(cls)}
        assert set(field.message_type.fields_by_name) == names, cls.TYPE


def test_unknown_fields_fail():
    """A view or an action with a field the proto does not declare is refused."""
    st = GAME.new_state(3, 1)
    view = st.view(0)
    with pytest.raises(json_format.ParseError):
        protomap.view_to_proto(TITLE, {**view, "secret": 1})
    bad_company = {**view["companies"]["PRR"], "colour": "red"}
    with pytest.raises(json_format.ParseError):
        protomap.view_to_proto(
            TITLE, {**view, "companies": {**view["companies"], "PRR": bad_company}}
        )
    with pytest.raises(json_format.ParseError):
        protomap.action_to_proto(TITLE, {"type": "bid", "amount": 3, "extra": 1})
