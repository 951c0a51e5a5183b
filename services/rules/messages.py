"""The GameRules answers built from states and log entries: views, updates, legal
moves, the stored moves of an entry and the idempotency fingerprint of a move.

The live game's and the archived one's (``services/archive``) share them."""

from __future__ import annotations

import base64
import hashlib
import json

from roundhouse.v1 import game_pb2
from services.kernel.engine import (
    Action,
    State,
    canonical_json,
)
from services.match.resignation import (
    ResignableState,
    engine_state,
    is_seat_entry,
)
from services.platform.gamelog import LogEntry
from services.rules import protomap
from services.rules.results import clocks_proto, result_proto, takeovers_proto
from services.rules.titles import get_game

MAX_IDEMPOTENCY_KEY = 200
"""Longest idempotency key accepted (characters)."""


def view_response(
    title: str, info: game_pb2.GameInfo, state: ResignableState, seat: int | None, now_ms: int
) -> game_pb2.GetViewResponse:
    """``GetView``'s answer for ``state`` seen by ``seat`` (None: spectators), clocks
    as of ``now_ms``; the live game's and the archived one's (``services/archive``)."""
    return view_answer(view_of_state(title, state, seat), info, state, now_ms)


def view_of_state(title: str, state: ResignableState, seat: int | None) -> game_pb2.GetViewResponse:
    """The part of ``GetView``'s answer that ``state`` alone decides (no ``info``, no
    clocks): the same for as long as the state is, so the live game keeps it per seat
    (states are never changed in place: a move clones)."""
    game = get_game(title)
    view = state.view(seat)
    response = game_pb2.GetViewResponse(
        version=state.version,
        active_seats=list(state.active_seats()),
        finished=state.is_terminal(),
        view=protomap.view_to_proto(title, view),
        view_json=canonical_json(view),
        resigned_seats=list(state.resigned),
        paused=state.paused,
        takeovers=takeovers_proto([t.to_json() for t in state.takeovers]),
        seat_summaries=game.summarize_view(view, state.num_players),
    )
    if state.is_terminal():
        response.result.CopyFrom(result_proto(state.result_json()))
    return response


def view_answer(
    base: game_pb2.GetViewResponse, info: game_pb2.GameInfo, state: ResignableState, now_ms: int
) -> game_pb2.GetViewResponse:
    """A copy of ``base`` (:func:`view_of_state` of ``state``) with ``info`` and the clocks
    as of ``now_ms``: ``GetView``'s answer."""
    response = game_pb2.GetViewResponse()
    response.CopyFrom(base)
    response.info.CopyFrom(info)
    if state.clocks is not None:
        response.clocks.extend(clocks_proto(state.clocks.to_json(), now_ms, state.clocks))
    return response


def update_proto(title: str, entry: LogEntry) -> game_pb2.GameUpdate:
    """A stream entry as the ``GameUpdate`` message (a resignation has no typed
    ``action``, only ``action_json`` ``{"type":"resign"}``)."""
    action = json.loads(entry.action)
    update = game_pb2.GameUpdate(
        version=entry.version,
        seat=entry.seat,
        action=None if is_seat_entry(action) else protomap.action_to_proto(title, action),
        action_json=entry.action,
        events=[protomap.struct(e) for e in json.loads(entry.events)],
        active_seats=list(entry.active),
        finished=entry.finished,
        at_ms=entry.at_ms,
        label=entry.label,
    )
    if entry.clock:
        update.clocks.extend(clocks_proto(json.loads(entry.clock), entry.at_ms))
    if entry.result:
        update.result.CopyFrom(result_proto(json.loads(entry.result)))
    return update


def legal_response(
    title: str, state: State, seat: int, game=None
) -> game_pb2.ListLegalActionsResponse:
    """``ListLegalActions``'s answer for ``seat`` on ``state``: every legal entry, typed and as
    JSON, with its range and its label (``Game.describe_all`` on the engine's own state: a
    :class:`ResignableState` is unwrapped first, the engines never see it)."""
    game = game or get_game(title)
    legal = state.legal_actions(seat)
    response = protomap.legal_to_proto(title, [a.to_json() for a in legal], state.version)
    response.labels.extend(game.describe_all(engine_state(state), legal))
    return response


def stored_moves(title: str, state: ResignableState, meta: dict, game=None) -> dict[str, str]:
    """The legal moves stored with an entry (``services.platform.gamelog``, ``P:game:{T}:G:moves``):
    ``version``, ``active`` and, for each active seat its account plays (not a hosted bot's
    seat, not taken over by one: bots ask the rules service themselves), the base64 of its
    :func:`legal_response`. Empty for a finished game (nothing stored)."""
    if state.is_terminal():
        return {}
    active = list(state.active_seats())
    fields = {"version": str(state.version), "active": json.dumps(active)}
    hosted = meta.get("bots", {})
    for seat in active:
        if str(seat) in hosted or state.taken_over(seat):
            continue
        answer = legal_response(title, state, seat, game).SerializeToString()
        fields[str(seat)] = base64.b64encode(answer).decode()
    return fields


def fingerprint(seat: int, expected_version: int, action: Action) -> str:
    """What an idempotency key stands for: (seat, expected version, action)."""
    text = f"{seat}:{expected_version}:{canonical_json(action.to_json())}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def answer_proto(answer: str) -> game_pb2.SubmitActionResponse:
    a = json.loads(answer)
    return game_pb2.SubmitActionResponse(
        version=a["version"],
        events=[protomap.struct(e) for e in a["events"]],
        active_seats=a["active"],
        finished=a["finished"],
    )
