"""The API's JSON shapes (pydantic), and the conversions from the gRPC
messages. Request bodies refuse unknown fields and values of the wrong type
(``extra="forbid"``, ``strict=True``): ``"3"`` is not a number.

Every integer a client sends is bounded by its protobuf field's type (:data:`Int32`,
:data:`Int64`, :data:`UInt64`; 400 ``out_of_range``), every number is finite (:data:`Double`),
and no string anywhere in a body may hold a lone surrogate (400 ``bad_unicode``): protobuf
cannot carry either, and the gateway answered 500 (issue 33)."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from roundhouse.v1 import accounts_pb2, game_pb2, lobby_pb2
from services.platform.bounds import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, UINT64_MAX

Int32 = Annotated[int, Field(ge=INT32_MIN, le=INT32_MAX)]
"""An integer an ``int32`` protobuf field holds."""
Int64 = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX)]
UInt64 = Annotated[int, Field(ge=0, le=UINT64_MAX)]
Double = Annotated[float, Field(allow_inf_nan=False)]
"""A finite number (``1e400`` parses as infinity)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
FIELD_NAME_MAX = 64
"""Longest member name quoted in the ``field`` of a refusal."""


def lone_surrogate(value: Any) -> str | None:
    """Where in a parsed JSON value a string (or a member name) holds a lone surrogate
    (``"\\ud800"`` escapes decode to one; UTF-8 cannot encode it): ``options.a``, ``tiebreaks.0``;
    None if nowhere. The path never quotes the bad text itself. Iterative: any depth."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return where or "body"
        elif isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return where or "body"
                stack.append((f"{where}.{str(key)[:FIELD_NAME_MAX]}".lstrip("."), inner))
        elif isinstance(item, list):
            stack.extend((f"{where}.{i}".lstrip("."), inner) for i, inner in enumerate(item))
    return None


class Body(BaseModel):
    """A request body: unknown fields, wrong types and lone surrogates are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _text_only(cls, data: Any) -> Any:
        where = lone_surrogate(data)
        if where is not None:
            raise PydanticCustomError(
                "bad_unicode",
                "{field}: a lone surrogate (half of a UTF-16 pair) is not text",
                {"field": where},
            )
        return data


# ---------------------------------------------------------------- requests


class NewAccount(Body):
    username: str = Field(description="2-30 characters of A-Z a-z 0-9 _ -, unique in any case")
    password: str = Field(description="8-128 characters")


class NewToken(Body):
    username: str
    password: str
    scopes: list[str] = Field(default_factory=list, description="e.g. play, tables:write")
    expires_in_seconds: Int64 = Field(0, description="0 = never expires")
    label: str = ""


class NewBot(Body):
    username: str
    password: str = Field("", description='"" = no password sign-in (tokens from its owner)')
    hosted_policy: str = Field("", description='"" = it plays itself with its own program')


class BotPolicy(Body):
    hosted_policy: str = Field(description='a hosted policy (random, greedy, ...); "" = unbind')


class NewBotToken(Body):
    scopes: list[str] = Field(default_factory=lambda: ["bot:play"])
    expires_in_seconds: Int64 = 0
    label: str = ""


class NewTable(Body):
    title: str = Field(description="railbarons, transsib or e1894")
    num_players: Int32
    options: dict[str, Any] = Field(default_factory=dict, description="title options")
    seed: UInt64 | None = Field(None, description="tables of hosted bots only")
    time_control: dict[str, Any] | None = Field(
        None,
        description='the clock: {"kind": "live", "base_s", "increment_s", "grace_s"} or '
        '{"kind": "correspondence", "per_move_s", "max_bank_s"} or {"kind": "none"} (seconds; '
        "services/match/controls.py); absent = no clock",
    )
    timeout_policy: Literal["", "takeover", "forfeit", "reclaim"] = Field(
        "", description='when time runs out or a player resigns; "" = forfeit'
    )
    takeover_policy: str = Field(
        "", max_length=40, description='the bot playing a seat taken over; "" = greedy'
    )
    reclaim_moves: Int32 = Field(0, ge=0, description="reclaim window in versions; 0 = 20")


class BotSeat(Body):
    """Exactly one of ``policy`` (a hosted policy's system account) and
    ``account`` (the username of one of your bot accounts; one without a
    hosted policy plays itself). ``bot`` is the same as ``account``."""

    policy: str | None = None
    account: str | None = None
    bot: str | None = None


class Move(Body):
    action: dict[str, Any] = Field(description="the action's canonical JSON, as listed")
    expected_version: Int32 = Field(description="the version you last saw")
    idempotency_key: str = Field("", description="same key again = the first answer")
    seat: Int32 | None = Field(None, description="default: your seat at the table")


# ---------------------------------------------------------------- answers


class AccountOut(BaseModel):
    account_id: str
    username: str
    kind: Literal["human", "bot", "system", "unspecified"]
    created_at: str = Field(description="RFC 3339")
    bot_owner: str = ""
    hosted_policy: str = ""
    is_admin: bool = False


class Me(AccountOut):
    scopes: list[str] = Field(description="the scopes of the token used")
    token_id: str = Field("", description="the id of the token used (DELETE /api/tokens/{id})")


class BotsOut(BaseModel):
    bots: list[AccountOut] = Field(description="the caller's bot accounts")


class TokenInfo(BaseModel):
    """A token as listed: never its secret."""

    token_id: str
    username: str = Field(description="the account it belongs to")
    label: str
    scopes: list[str]
    created_at: str | None = Field(None, description="RFC 3339")
    expires_at: str | None = Field(None, description="RFC 3339; null = never")
    revoked_at: str | None = Field(None, description="RFC 3339; null = not revoked")


class TokensOut(BaseModel):
    tokens: list[TokenInfo]


class TokenOut(BaseModel):
    token: str = Field(description="the secret rh_...: shown once")
    scopes: list[str]
    token_id: str
    expires_at: str | None = None


class SeatOut(BaseModel):
    seat: int
    kind: Literal["empty", "player", "bot"]
    account: str = Field(description="the seat's account's username (\"\" while empty)")
    account_id: str
    bot_account: bool
    policy: str = Field(description='the hosted policy playing it; "" = its account plays')
    resigned: bool
    taken_over_at_version: int = Field(0, description="a bot plays it since this version; 0 = no")
    guest: str = Field("", description="the recorded player (imported games; not an account)")


class ResultOut(BaseModel):
    scores: list[int]
    ranks: list[int]
    end_reason: str


class TableOut(BaseModel):
    table_id: str
    title: str
    num_players: int
    options: dict[str, Any]
    seats: list[SeatOut]
    status: Literal["open", "starting", "running", "finished", "aborted", "unspecified"]
    game_id: str
    owner: str
    owner_id: str
    created_at_ms: int
    result: ResultOut | None = None
    time_control: dict[str, Any] | None = Field(None, description="the clock (null = none)")
    timeout_policy: str = ""
    paused: bool = Field(False, description="the organiser paused the clocks (running tables)")
    tournament_id: str = Field("", description='the tournament of the table ("" = casual)')


class TablesOut(BaseModel):
    tables: list[TableOut]
    next_page_token: str = Field(description='"" = the last page')


class ViewOut(BaseModel):
    version: int
    seat: int | None = Field(description="the seat seen from; null = the spectators' view")
    active_seats: list[int]
    finished: bool
    resigned_seats: list[int]
    view: dict[str, Any]
    seat_summaries: list[str] = Field(description="one short text per seat, in seat order")
    result: ResultOut | None = None


class RangeOut(BaseModel):
    field: str
    min: int
    max: int
    step: int


class MoveOut(BaseModel):
    label: str = Field(description="the move in words, unique among the moves listed")
    action: dict[str, Any] = Field(description="for a ranged move: its field at range.min")
    range: RangeOut | None = Field(None, description="any value min, min+step, ..., max")


class MovesOut(BaseModel):
    version: int
    moves: list[MoveOut]


class MoveResult(BaseModel):
    version: int = Field(description="the version after the move")
    active_seats: list[int]
    finished: bool
    events: list[dict[str, Any]]


class StandingOut(BaseModel):
    seat: int
    name: str
    score: int
    rank: int


class TableResultOut(BaseModel):
    table: TableOut
    standings: list[StandingOut]
    end_reason: str
    seed: str = Field(description="the game's seed (decimal), for audits")


# ---------------------------------------------------------------- conversions

_KIND = {
    accounts_pb2.ACCOUNT_KIND_HUMAN: "human",
    accounts_pb2.ACCOUNT_KIND_BOT: "bot",
    accounts_pb2.ACCOUNT_KIND_SYSTEM: "system",
}
_STATUS = {
    lobby_pb2.TABLE_STATUS_OPEN: "open",
    lobby_pb2.TABLE_STATUS_STARTING: "starting",
    lobby_pb2.TABLE_STATUS_RUNNING: "running",
    lobby_pb2.TABLE_STATUS_FINISHED: "finished",
    lobby_pb2.TABLE_STATUS_ABORTED: "aborted",
}
STATUS_NAMES = {v: k for k, v in _STATUS.items()}
_SEAT = {
    lobby_pb2.SEAT_KIND_EMPTY: "empty",
    lobby_pb2.SEAT_KIND_PLAYER: "player",
    lobby_pb2.SEAT_KIND_BOT: "bot",
}


def account_out(a: accounts_pb2.Account) -> dict[str, Any]:
    return {
        "account_id": a.account_id,
        "username": a.username,
        "kind": _KIND.get(a.kind, "unspecified"),
        "created_at": a.created_at.ToJsonString(),
        "bot_owner": a.bot_owner,
        "hosted_policy": a.hosted_policy,
        "is_admin": a.is_admin,
    }


def token_out(r: accounts_pb2.CreateTokenResponse) -> dict[str, Any]:
    return {
        "token": r.token,
        "scopes": list(r.info.scopes),
        "token_id": r.info.token_id,
        "expires_at": r.info.expires_at.ToJsonString() if r.info.HasField("expires_at") else None,
    }


def _time(message, field: str) -> str | None:
    return getattr(message, field).ToJsonString() if message.HasField(field) else None


def token_info(t: accounts_pb2.Token) -> dict[str, Any]:
    return {
        "token_id": t.token_id,
        "username": t.username,
        "label": t.label,
        "scopes": list(t.scopes),
        "created_at": _time(t, "created_at"),
        "expires_at": _time(t, "expires_at"),
        "revoked_at": _time(t, "revoked_at"),
    }


def result_out(r: game_pb2.GameResult) -> dict[str, Any]:
    return {"scores": list(r.scores), "ranks": list(r.ranks), "end_reason": r.end_reason}


def table_out(t: lobby_pb2.Table) -> dict[str, Any]:
    return {
        "table_id": t.table_id,
        "title": t.title,
        "num_players": t.num_players,
        "options": json.loads(t.options_json) if t.options_json else {},
        "seats": [
            {
                "seat": s.index,
                "kind": _SEAT.get(s.kind, "empty"),
                "account": s.name,
                "account_id": s.account_id,
                "bot_account": s.bot_account,
                "policy": s.policy,
                "resigned": s.resigned,
                "taken_over_at_version": s.taken_over_at_version,
                "guest": s.guest,
            }
            for s in t.seats
        ],
        "status": _STATUS.get(t.status, "unspecified"),
        "game_id": t.game_id,
        "owner": t.owner,
        "owner_id": t.owner_id,
        "created_at_ms": t.created_at_ms,
        "result": result_out(t.result) if t.HasField("result") else None,
        "time_control": _time_control_out(t),
        "timeout_policy": t.timeout_policy,
        "paused": t.paused,
        "tournament_id": t.tournament_id,
    }


_CONTROL_FIELDS = {
    "live": ("base_s", "increment_s", "grace_s"),
    "correspondence": ("per_move_s", "max_bank_s"),
}


def _time_control_out(t: lobby_pb2.Table) -> dict[str, Any] | None:
    kind = t.time_control.kind
    if kind not in _CONTROL_FIELDS:
        return None
    return {"kind": kind, **{f: getattr(t.time_control, f) for f in _CONTROL_FIELDS[kind]}}


def view_out(v: game_pb2.GetViewResponse, seat: int | None) -> dict[str, Any]:
    return {
        "version": v.version,
        "seat": seat,
        "active_seats": list(v.active_seats),
        "finished": v.finished,
        "resigned_seats": list(v.resigned_seats),
        "view": json.loads(v.view_json) if v.view_json else {},
        "seat_summaries": list(v.seat_summaries),
        "result": result_out(v.result) if v.HasField("result") else None,
    }


def moves_out(legal: game_pb2.ListLegalActionsResponse) -> dict[str, Any]:
    """The legal moves, each with its label (``labels`` of the rules
    service's answer, as given) and, where it has one, its range."""
    moves = []
    for i, text in enumerate(legal.actions_json):
        move: dict[str, Any] = {
            "label": legal.labels[i] if i < len(legal.labels) else "",
            "action": json.loads(text),
        }
        r = legal.ranges[i] if i < len(legal.ranges) else None
        if r is not None and r.field:
            move["range"] = {"field": r.field, "min": r.min, "max": r.max, "step": r.step}
        moves.append(move)
    return {"version": legal.version, "moves": moves}


def event_out(e: struct_pb2.Struct) -> dict[str, Any]:
    """A game event (a protobuf ``Struct``, whose numbers are all doubles) as
    the engine wrote it: whole numbers as JSON integers (``"seat": 0``, not
    ``0.0``), others as they are."""
    return _whole_numbers(MessageToDict(e))


def _whole_numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(v) for v in value]
    return value


def submit_out(r: game_pb2.SubmitActionResponse) -> dict[str, Any]:
    return {
        "version": r.version,
        "active_seats": list(r.active_seats),
        "finished": r.finished,
        "events": [event_out(e) for e in r.events],
    }


def update_line(u: game_pb2.GameUpdate) -> dict[str, Any]:
    """One move of a table stream."""
    line: dict[str, Any] = {
        "type": "move",
        "version": u.version,
        "seat": u.seat,
        "label": u.label,
        "action": json.loads(u.action_json) if u.action_json else {},
        "events": [event_out(e) for e in u.events],
        "active_seats": list(u.active_seats),
        "finished": u.finished,
    }
    if u.HasField("result"):
        line["result"] = result_out(u.result)
    return line


def event_line(e: lobby_pb2.AccountEvent) -> dict[str, Any]:
    """One account event of the event stream (a ``yourTurn`` of a stream opened with
    ``?moves=true`` may carry ``moves``, as ``GET .../moves`` lists them)."""
    line = {
        "type": e.type,
        "id": e.event_id,
        "table_id": e.table_id,
        "game_id": e.game_id,
        "title": e.title,
        "seat": e.seat,
        "version": e.version,
        "at_ms": e.at_ms,
        "data": json.loads(e.data_json) if e.data_json else {},
    }
    if e.HasField("moves"):
        line["moves"] = moves_out(e.moves)["moves"]
    return line


def standings_out(r: lobby_pb2.TableResult) -> dict[str, Any]:
    return {
        "table": table_out(r.table),
        "standings": [
            {"seat": s.seat, "name": s.name, "score": s.score, "rank": s.rank} for s in r.standings
        ],
        "end_reason": r.end_reason,
        "seed": r.seed,
    }
