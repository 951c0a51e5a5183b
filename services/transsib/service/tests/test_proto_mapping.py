"""The transsib proto matches the engine's JSON: every legal action round-trips through
``roundhouse.v1.transsib.Action`` and every view (each seat and the spectator) converts
to ``roundhouse.v1.transsib.View``; unknown fields are refused."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from services.kernel.rng import SeededRandom
from services.rules import protomap
from services.transsib.engine import GAME

GAMES = [
    (2, 1, {}),
    (3, 2, {}),
    (4, 3, {}),
    (4, 4, {"upcoming_engineers_visible": False, "end_bonus_selection": "draw_top"}),
]


@pytest.mark.parametrize("n,seed,options", GAMES)
def test_every_legal_action_and_view_maps_to_proto(n, seed, options):
    state = GAME.new_state(n, seed, options)
    rng = SeededRandom(seed)
    kinds = set()
    step = 0
    while not state.is_terminal():
        seat = state.active_seats()[0]
        legal = state.legal_actions(seat)
        for action in legal:
            msg = protomap.action_to_proto("transsib", action.to_json())
            back = protomap.action_from_proto(msg, "transsib")
            assert GAME.parse_action(back) == action
            kinds.add(action.TYPE)
        if step % 4 == 0 or state.stack:
            for viewer in [None, *range(n)]:
                view = state.view(viewer)
                msg = protomap.view_to_proto("transsib", view)
                back = protomap.view_from_proto(msg)
                assert back["round"] == view["round"]
                assert back["players"][0]["score"] == view["players"][0]["score"]
        state.apply(seat, rng.choice(legal))
        step += 1
    for viewer in [None, *range(n)]:
        protomap.view_to_proto("transsib", state.view(viewer))
    assert {"place", "pass", "track", "loco", "factory"} <= kinds


def test_unknown_view_fields_fail():
    view = GAME.new_state(3, 1).view(0)
    view["no_such_field"] = 1
    with pytest.raises(json_format.ParseError):
        protomap.view_to_proto("transsib", view)
    nested = GAME.new_state(3, 1).view(None)
    nested["players"][0]["secret"] = 1
    with pytest.raises(json_format.ParseError):
        protomap.view_to_proto("transsib", nested)


def test_unknown_action_fields_fail():
    with pytest.raises(json_format.ParseError):
        protomap.action_to_proto("transsib", {"type": "place", "space": "A-COIN", "bogus": 1})
    with pytest.raises(json_format.ParseError):
        protomap.action_to_proto("transsib", {"type": "teleport"})


def test_every_action_type_has_a_proto_field():
    from roundhouse.v1 import transsib_pb2

    fields = {f.name for f in transsib_pb2.Action.DESCRIPTOR.oneofs_by_name["kind"].fields}
    assert fields == set(GAME.codec.types)
