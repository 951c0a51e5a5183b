"""Mapping between an engine's canonical JSON (actions and views) and the
typed protobuf messages of ``proto/roundhouse/v1/<title>.proto``.

Each title's proto is written so that its JSON form *is* the engine's JSON:

* ``roundhouse.v1.<title>.Action`` has ``oneof kind`` with one field per action
  type, named exactly like the action's ``TYPE`` and holding a message whose
  fields are named exactly like the action's fields;
* ``roundhouse.v1.<title>.View`` has fields named exactly like the keys of
  ``State.view(seat)``.

So the mapping is generic: :func:`google.protobuf.json_format.ParseDict` and
``MessageToDict``. Small integers are ``int32`` (``int64`` would become JSON
strings).

Legal actions (``ListLegalActionsResponse``): an engine entry is an action's
JSON or an :class:`~services.kernel.engine.ActionRange`'s JSON
(``{"action": {...}, "field": "price", "min": 1, "max": 630, "step": 1}``); on
the wire it is ``actions[i]`` / ``actions_json[i]`` (a range's action with the
field at ``min``) and ``ranges[i]`` (a ``ParameterRange``, empty for a plain
action). :func:`legal_to_proto` and :func:`legal_from_proto` convert both ways.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct

from roundhouse.v1 import game_pb2
from services.kernel.engine import MalformedAction, canonical_json

TYPED_ACTIONS_KEPT = 65_536
"""Typed actions :func:`legal_to_proto` keeps, by title and canonical JSON (a few hundred
bytes each)."""


def action_to_proto(title: str, action_json: dict[str, Any]) -> game_pb2.Action:
    """``{"type": "bid", "amount": 7}`` -> ``Action(railbarons=...(bid=Bid(amount=7)))``."""
    body = {k: v for k, v in action_json.items() if k != "type"}
    msg = game_pb2.Action()
    json_format.ParseDict({title: {action_json["type"]: body}}, msg)
    return msg


def action_from_proto(msg: game_pb2.Action, title: str) -> dict[str, Any]:
    """The canonical JSON form of a typed action of ``title``.

    Raises:
        MalformedAction: no action set, or an action of another title.
    """
    which = msg.WhichOneof("title")
    if which is None:
        raise MalformedAction("missing_action", "the request carries no action")
    if which != title:
        raise MalformedAction("wrong_title", f"this server plays {title}, not {which}")
    inner = getattr(msg, which)
    kind = inner.WhichOneof("kind")
    if kind is None:
        raise MalformedAction("missing_action", f"the {title} action has no kind set")
    body = json_format.MessageToDict(
        getattr(inner, kind),
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
    )
    return {"type": kind, **body}


def legal_to_proto(
    title: str, entries: list[dict[str, Any]], version: int
) -> game_pb2.ListLegalActionsResponse:
    """The answer to ``ListLegalActions`` for the JSON forms of ``State.legal_actions``
    entries (``Action.to_json()`` or ``ActionRange.to_json()``), in their order."""
    actions, texts, ranges = [], [], []
    for entry in entries:
        if "action" in entry and "type" not in entry:
            action = entry["action"]
            ranges.append(
                game_pb2.ParameterRange(
                    field=entry["field"], min=entry["min"], max=entry["max"], step=entry["step"]
                )
            )
        else:
            action = entry
            ranges.append(game_pb2.ParameterRange())
        text = canonical_json(action)
        actions.append(game_pb2.Action.FromString(_typed_action(title, text)))
        texts.append(text)
    return game_pb2.ListLegalActionsResponse(
        version=version, actions=actions, actions_json=texts, ranges=ranges
    )


@functools.lru_cache(maxsize=TYPED_ACTIONS_KEPT)
def _typed_action(title: str, text: str) -> bytes:
    """The typed form of an action's canonical JSON, serialized (a pure function of its
    arguments, kept: the same moves come up again and again, and ``ParseDict`` is slow)."""
    return action_to_proto(title, json.loads(text)).SerializeToString()


def legal_from_proto(msg: game_pb2.ListLegalActionsResponse) -> list[dict[str, Any]]:
    """The engine's JSON forms of the entries of a ``ListLegalActions`` answer (from
    ``actions_json`` and ``ranges``; an answer without ``ranges`` has plain actions only).

    Raises:
        MalformedAction: ``ranges`` is neither empty nor as long as ``actions_json``.
    """
    texts = list(msg.actions_json)
    if msg.ranges and len(msg.ranges) != len(texts):
        raise MalformedAction("bad_ranges", "ranges and actions_json differ in length")
    out: list[dict[str, Any]] = []
    for i, text in enumerate(texts):
        action = json.loads(text)
        r = msg.ranges[i] if msg.ranges else None
        if r is None or not r.field:
            out.append(action)
        else:
            span = {"field": r.field, "min": r.min, "max": r.max, "step": r.step}
            out.append({"action": action, **span})
    return out


def view_to_proto(title: str, view: dict[str, Any]) -> game_pb2.View:
    """A view dict as the title's typed ``View`` message (every key must be declared)."""
    msg = game_pb2.View()
    json_format.ParseDict({title: view}, msg)
    return msg


def view_from_proto(msg: game_pb2.View) -> dict[str, Any]:
    """A typed view back as a dict (fields at their default values included)."""
    which = msg.WhichOneof("title")
    return json_format.MessageToDict(
        getattr(msg, which),
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
    )


def struct(obj: dict[str, Any]) -> Struct:
    """A JSON object as ``google.protobuf.Struct`` (events)."""
    s = Struct()
    s.update(obj)
    return s
