"""The lobby's records as its public messages, and back (``lobby.proto``)."""

from __future__ import annotations

from roundhouse.v1 import lobby_pb2
from services.lobby.hot_tables import LiveSeat, LiveTable
from services.lobby.models import ABORTED, BOT, EMPTY, FINISHED, OPEN, PLAYER, RUNNING, STARTING
from services.lobby.store import TableRecord
from services.rules.results import result_proto

STATUS = {
    OPEN: lobby_pb2.TABLE_STATUS_OPEN,
    STARTING: lobby_pb2.TABLE_STATUS_STARTING,
    RUNNING: lobby_pb2.TABLE_STATUS_RUNNING,
    FINISHED: lobby_pb2.TABLE_STATUS_FINISHED,
    ABORTED: lobby_pb2.TABLE_STATUS_ABORTED,
}
STATUS_OF = {v: k for k, v in STATUS.items()}
KIND = {
    EMPTY: lobby_pb2.SEAT_KIND_EMPTY,
    PLAYER: lobby_pb2.SEAT_KIND_PLAYER,
    BOT: lobby_pb2.SEAT_KIND_BOT,
}


def table_proto(t: TableRecord) -> lobby_pb2.Table:
    """A table record as the public ``Table`` message (no seed)."""
    msg = lobby_pb2.Table(
        table_id=t.table_id,
        title=t.title,
        num_players=t.num_players,
        options_json=t.options_json,
        seats=[
            lobby_pb2.Seat(
                index=i,
                kind=KIND[s.kind],
                name=s.username,
                policy=s.policy,
                account_id=s.account_id,
                bot_account=s.bot_account,
                resigned=s.resigned,
                taken_over_at_version=s.taken_over_at or 0,
                guest=s.guest,
            )
            for i, s in enumerate(t.seats)
        ],
        status=STATUS[t.status],
        game_id=t.game_id,
        owner=t.owner,
        owner_id=t.owner_id,
        created_at_ms=int(t.created_at.timestamp() * 1000),
    )
    if t.result:
        msg.result.CopyFrom(result_proto(t.result))
    if t.clock:
        control = dict(t.clock.get("time_control", {}))
        msg.time_control.CopyFrom(lobby_pb2.TimeControl(**control))
        msg.timeout_policy = t.clock.get("timeout_policy", "")
        msg.takeover_policy = t.clock.get("takeover_policy", "")
        msg.reclaim_moves = t.clock.get("reclaim_moves", 0)
    msg.tournament_id = t.tournament_id
    msg.paused = t.paused and t.status == RUNNING
    return msg


_CONTROL_FIELDS = {
    "live": ("base_s", "increment_s", "grace_s"),
    "correspondence": ("per_move_s", "max_bank_s"),
    "none": (),
}


def time_control_dict(tc: lobby_pb2.TimeControl) -> dict:
    """A ``TimeControl`` message as the clocks' JSON shape (``{}`` for kind ``""`` or
    ``none``): its kind's own fields, plus any other kind's field that is not 0 (so the
    clocks' model refuses it as foreign)."""
    if tc.kind in ("", "none"):
        return {}
    own = _CONTROL_FIELDS.get(tc.kind, ())
    control: dict = {"kind": tc.kind}
    for field in ("base_s", "increment_s", "grace_s", "per_move_s", "max_bank_s"):
        value = getattr(tc, field)
        if field in own or value:
            control[field] = value
    return control


def clock_request(request: lobby_pb2.CreateTableRequest) -> dict:
    """``CreateTable``'s clock fields as the JSON of
    :func:`services.match.controls.parse_clock_settings` (validated there):
    the time control's own fields, plus any other kind's field that is not 0
    (so it is refused as foreign)."""
    out: dict = {"casual": not request.tournament_id}
    if request.HasField("time_control") and request.time_control.kind not in ("", "none"):
        out["time_control"] = time_control_dict(request.time_control)
    if request.timeout_policy:
        out["timeout_policy"] = request.timeout_policy
    if request.takeover_policy:
        out["takeover_policy"] = request.takeover_policy
    if request.reclaim_moves:
        out["reclaim_moves"] = request.reclaim_moves
    return out


def standings_proto(table: TableRecord) -> lobby_pb2.TableResult:
    """The final standings of a finished table, best first."""
    r = table.result or {"scores": [], "ranks": [], "end_reason": ""}
    standings = sorted(
        (
            lobby_pb2.Standing(
                seat=i,
                name=table.seats[i].guest or table.seats[i].username,
                score=int(s),
                rank=r["ranks"][i],
            )
            for i, s in enumerate(r["scores"])
        ),
        key=lambda st: (st.rank, st.seat),
    )
    return lobby_pb2.TableResult(
        table=table_proto(table), standings=standings, end_reason=r["end_reason"]
    )


def live_table(t: TableRecord) -> LiveTable:
    """The hot-index copy of a started table (``services/lobby/hot_tables.py``)."""
    return LiveTable(
        table_id=t.table_id,
        game_id=t.game_id,
        title=t.title,
        status=t.status,
        seats=[LiveSeat(s.account_id, s.policy, s.resigned) for s in t.seats],
        clock=t.clock,
    )
