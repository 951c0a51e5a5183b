"""``proto/roundhouse/v1/e1894.proto`` maps one to one onto the engine's canonical JSON
(``services.rules.protomap``): every legal action (ranges included, through a serialised
``ListLegalActionsResponse``) and every view of whole 3- and 4-player games round-trip;
unknown fields are refused; the oneof fields are the action types."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from google.protobuf import json_format

from roundhouse.v1 import e1894_pb2, game_pb2
from services.e1894.engine import GAME
from services.e1894.engine.actions import ACTION_CLASSES
from services.kernel.engine import ActionRange, choose_per_entry, legal_from_json
from services.kernel.playout import playout_actions
from services.kernel.rng import SeededRandom
from services.rules import protomap

TITLE = "e1894"


def _fields_match(value, descriptor, where="View"):
    """Every key of a view dict is a field of the message and vice versa, recursively."""
    assert set(value) == set(descriptor.fields_by_name), where
    for key, sub in value.items():
        field = descriptor.fields_by_name[key]
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            vfield = field.message_type.fields_by_name["value"]
            if vfield.message_type is not None:
                for k, item in sub.items():
                    _fields_match(item, vfield.message_type, f"{where}.{key}[{k}]")
        elif isinstance(sub, list):
            for i, item in enumerate(sub):
                _fields_match(item, field.message_type, f"{where}.{key}[{i}]")
        else:
            _fields_match(sub, field.message_type, f"{where}.{key}")


@pytest.mark.parametrize("players,seed", [(3, 11), (4, 12)])
def test_actions_and_views_round_trip(players, seed):
    """Every legal action and every view (each seat and the spectator, every few moves) of a
    whole random game converts to the typed messages and back unchanged."""
    st = GAME.new_state(players, seed)
    rng = SeededRandom(seed)
    step = 0
    while True:
        if step % 7 == 0 or st.is_terminal():
            for viewer in [None, *range(players)]:
                view = st.view(viewer)
                msg = protomap.view_to_proto(TITLE, view)
                # an unset optional field (the spectator's ``viewer``) is absent from the proto
                assert protomap.view_from_proto(msg) == {
                    k: v for k, v in view.items() if v is not None
                }
                _fields_match(view, e1894_pb2.View.DESCRIPTOR)
        if st.is_terminal():
            break
        seat = st.active_seats()[0]
        legal = st.legal_actions(seat)
        for action in legal:
            plain = action.action if isinstance(action, ActionRange) else action
            msg = protomap.action_to_proto(TITLE, plain.to_json())
            assert GAME.parse_action(protomap.action_from_proto(msg, TITLE)) == plain
        answer = protomap.legal_to_proto(TITLE, [a.to_json() for a in legal], st.version)
        wire = game_pb2.ListLegalActionsResponse.FromString(answer.SerializeToString())
        back = [legal_from_json(GAME.codec, e) for e in protomap.legal_from_proto(wire)]
        assert back == legal
        st.apply(seat, choose_per_entry(playout_actions(st, seat), rng))
        step += 1


def test_unknown_view_fields_are_refused():
    view = GAME.new_state(4, 1).view(None)
    view["no_such_field"] = 1
    with pytest.raises(json_format.ParseError):
        protomap.view_to_proto(TITLE, view)


def test_action_messages_match_the_action_classes():
    """The oneof fields are exactly the action TYPEs, each message's fields the action's
    fields, and optional (``X | None``) fields are proto3 ``optional``."""
    oneof = e1894_pb2.Action.DESCRIPTOR.oneofs_by_name["kind"]
    assert {f.name for f in oneof.fields} == {c.TYPE for c in ACTION_CLASSES}
    for cls in ACTION_CLASSES:
        desc = e1894_pb2.Action.DESCRIPTOR.fields_by_name[cls.TYPE].message_type
        names = [f.name for f in dataclasses.fields(cls)]
        assert set(desc.fields_by_name) == set(names), cls.TYPE
        hints = typing.get_type_hints(cls)
        for name in names:
            optional = type(None) in typing.get_args(hints[name])
            assert desc.fields_by_name[name].has_presence == optional, (cls.TYPE, name)
