"""Tables, seats, views and moves: ``/api/tables...`` (``roundhouse.v1.Lobby``).

The gateway finds the caller's seat itself (the seat held by the token's
account), so a client never sends one; the lobby checks it again."""

from __future__ import annotations

import json
from typing import Annotated

import grpc
from fastapi import APIRouter, Path, Query

from roundhouse.v1 import lobby_pb2
from services.match.controls import InvalidClock, parse_clock_settings
from services.platform.bounds import INT32_MAX, INT32_MIN
from services.web.backend import call
from services.web.deps import Api, Auth
from services.web.errors import ERROR_RESPONSES, ApiError
from services.web.models import (
    STATUS_NAMES,
    BotSeat,
    Move,
    MoveResult,
    MovesOut,
    NewTable,
    TableOut,
    TableResultOut,
    TablesOut,
    ViewOut,
    moves_out,
    standings_out,
    submit_out,
    table_out,
    view_out,
)

router = APIRouter(prefix="/api/tables", tags=["tables"], responses=ERROR_RESPONSES)

SeatPath = Annotated[int, Path(ge=INT32_MIN, le=INT32_MAX, description="the seat, from 0")]


@router.get("", response_model=TablesOut)
async def list_tables(
    api: Api,
    auth: Auth,
    status: Annotated[
        str, Query(description="comma-separated: open, starting, running, finished, aborted")
    ] = "",
    title: str = "",
    open: Annotated[bool, Query(description="only open tables with an empty seat")] = False,
    player: Annotated[str, Query(description="only tables where this username sits")] = "",
    page_size: Annotated[int, Query(ge=INT32_MIN, le=INT32_MAX, description="1-200; 0 = 50")] = 0,
    page_token: str = "",
):
    """Tables newest first (anonymous)."""
    statuses = [s.strip() for s in status.split(",") if s.strip()]
    unknown = [s for s in statuses if s not in STATUS_NAMES]
    if unknown:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_status",
            f"unknown status; known: {', '.join(STATUS_NAMES)}",
        )
    answer = await call(
        api.lobby.ListTables,
        lobby_pb2.ListTablesRequest(
            title=title,
            status=[STATUS_NAMES[s] for s in statuses],
            open_seat=open,
            player=player,
            page_size=page_size,
            page_token=page_token,
        ),
        auth,
    )
    tables = [table_out(t) for t in answer.tables]
    return {"tables": tables, "next_page_token": answer.next_page_token}


@router.post("", response_model=TableOut, status_code=201)
async def create_table(body: NewTable, api: Api, auth: Auth):
    """A new table owned by the caller (scope ``tables:write``)."""
    request = lobby_pb2.CreateTableRequest(
        title=body.title,
        num_players=body.num_players,
        options_json=json.dumps(body.options) if body.options else "",
    )
    if body.seed is not None:
        request.seed = body.seed
    _clock_fields(body, request)
    table = await call(api.lobby.CreateTable, request, auth)
    return table_out(table)


def _clock_fields(body: NewTable, request: lobby_pb2.CreateTableRequest) -> None:
    """The body's clock, validated by the shared model (``services/match/controls.py``:
    400 ``bad_time_control``, ``bad_timeout_policy``, ...), into the lobby's request (which
    checks it again, with the takeover bot)."""
    if body.time_control is None and not (
        body.timeout_policy or body.takeover_policy or body.reclaim_moves
    ):
        return  # a takeover bot or reclaim count alone is checked too, never silently dropped
    asked: dict = {"time_control": body.time_control}
    if body.timeout_policy:
        asked["timeout_policy"] = body.timeout_policy
    if body.takeover_policy:
        asked["takeover_policy"] = body.takeover_policy
    if body.reclaim_moves:
        asked["reclaim_moves"] = body.reclaim_moves
    try:
        clock = parse_clock_settings(asked)
    except InvalidClock as exc:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT, exc.code, exc.reason, field=exc.field
        ) from None
    if clock.timed:
        request.time_control.CopyFrom(lobby_pb2.TimeControl(**clock.time_control.model_dump()))
    request.timeout_policy = body.timeout_policy
    request.takeover_policy = body.takeover_policy
    request.reclaim_moves = body.reclaim_moves


@router.get("/{table_id}", response_model=TableOut)
async def get_table(table_id: str, api: Api, auth: Auth):
    """One table (anonymous)."""
    return table_out(
        await call(api.lobby.GetTable, lobby_pb2.GetTableRequest(table_id=table_id), auth)
    )


@router.post("/{table_id}/seats/{seat}/join", response_model=TableOut)
async def join_seat(table_id: str, seat: SeatPath, api: Api, auth: Auth):
    """Take an empty seat of an open table (scope ``play``; bots ``bot:play``)."""
    return table_out(
        await call(
            api.lobby.JoinSeat, lobby_pb2.JoinSeatRequest(table_id=table_id, seat=seat), auth
        )
    )


@router.post("/{table_id}/seats/{seat}/leave", response_model=TableOut)
async def leave_seat(table_id: str, seat: SeatPath, api: Api, auth: Auth):
    """Give up one's seat before the start."""
    return table_out(
        await call(api.lobby.LeaveSeat, lobby_pb2.SeatRequest(table_id=table_id, seat=seat), auth)
    )


@router.post("/{table_id}/seats/{seat}/bot", response_model=TableOut)
async def add_bot(table_id: str, seat: SeatPath, body: BotSeat, api: Api, auth: Auth):
    """The owner seats a bot: ``{"policy": "greedy"}`` or ``{"account": "my-bot"}``."""
    given = [x for x in (body.policy, body.account, body.bot) if x is not None]
    if len(given) != 1:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_field",
            "give exactly one of policy and account",
            field="policy",
        )
    request = lobby_pb2.AddBotRequest(table_id=table_id, seat=seat)
    if body.policy is not None:
        request.policy = body.policy
    else:
        request.bot = given[0]
    return table_out(await call(api.lobby.AddBot, request, auth))


@router.post("/{table_id}/start", response_model=TableOut)
async def start_table(table_id: str, api: Api, auth: Auth):
    """The owner starts the game (every seat filled)."""
    return table_out(
        await call(api.lobby.StartTable, lobby_pb2.StartTableRequest(table_id=table_id), auth)
    )


@router.post("/{table_id}/abort", response_model=TableOut)
async def abort_table(table_id: str, api: Api, auth: Auth):
    """The owner closes an open table for good."""
    return table_out(
        await call(api.lobby.AbortTable, lobby_pb2.StartTableRequest(table_id=table_id), auth)
    )


@router.post("/{table_id}/pause", response_model=TableOut)
async def pause_table(table_id: str, api: Api, auth: Auth):
    """The organiser (the owner or an admin) stops every clock of a running timed table
    (403 ``not_organiser``; 400 ``already_paused``, ``no_clock``, ``not_running``)."""
    return table_out(
        await call(api.lobby.PauseTable, lobby_pb2.StartTableRequest(table_id=table_id), auth)
    )


@router.post("/{table_id}/resume", response_model=TableOut)
async def resume_table(table_id: str, api: Api, auth: Auth):
    """The organiser starts the clocks of a paused table again (400 ``not_paused``)."""
    return table_out(
        await call(api.lobby.ResumeTable, lobby_pb2.StartTableRequest(table_id=table_id), auth)
    )


@router.get("/{table_id}/view", response_model=ViewOut)
async def get_view(table_id: str, api: Api, auth: Auth):
    """The caller's seat's view, or the spectators' view (no token, or no seat here)."""
    seat = await api.seat_of(table_id, auth)
    request = lobby_pb2.SeatRequest(table_id=table_id)
    if seat is not None:
        request.seat = seat
    view = await call(api.lobby.GetSeatView, request, auth)
    return view_out(view, seat)


@router.get("/{table_id}/moves", response_model=MovesOut, response_model_exclude_none=True)
async def list_moves(
    table_id: str,
    api: Api,
    auth: Auth,
    seat: Annotated[
        int | None,
        Query(
            ge=INT32_MIN,
            le=INT32_MAX,
            description="default: your seat (an account holding "
            "several, an imported game's, names one)",
        ),
    ] = None,
):
    """The caller's legal moves now, each with its label (empty when it is not
    the caller's turn)."""
    if seat is None:
        seat = await api.my_seat(table_id, auth)
    legal = await call(
        api.lobby.ListMoves, lobby_pb2.SeatRequest(table_id=table_id, seat=seat), auth
    )
    return moves_out(legal)


@router.post("/{table_id}/moves", response_model=MoveResult)
async def submit_move(table_id: str, body: Move, api: Api, auth: Auth):
    """Make a move: ``{"action": {...}, "expected_version": N, "idempotency_key": "..."}``."""
    seat = body.seat if body.seat is not None else await api.my_seat(table_id, auth)
    answer = await call(
        api.lobby.SubmitMove,
        lobby_pb2.SubmitMoveRequest(
            table_id=table_id,
            seat=seat,
            action_json=json.dumps(body.action, separators=(",", ":")),
            expected_version=body.expected_version,
            idempotency_key=body.idempotency_key,
        ),
        auth,
    )
    return submit_out(answer)


@router.post("/{table_id}/resign", response_model=TableOut)
async def resign(table_id: str, api: Api, auth: Auth):
    """Give up the caller's seat during play."""
    seat = await api.my_seat(table_id, auth)
    return table_out(
        await call(api.lobby.Resign, lobby_pb2.SeatRequest(table_id=table_id, seat=seat), auth)
    )


@router.post("/{table_id}/reclaim", response_model=TableOut)
async def reclaim_seat(table_id: str, api: Api, auth: Auth):
    """Take back the caller's seat from the bot that plays it after a timeout, within the
    table's ``reclaim_moves`` (``Lobby.ReclaimSeat``; 400 ``reclaim_window_closed``, 403
    ``not_seated``)."""
    seat = await api.my_seat(table_id, auth)
    return table_out(
        await call(api.lobby.ReclaimSeat, lobby_pb2.SeatRequest(table_id=table_id, seat=seat), auth)
    )


@router.get("/{table_id}/result", response_model=TableResultOut)
async def table_result(table_id: str, api: Api, auth: Auth):
    """Standings and the seed of a finished game (anonymous)."""
    return standings_out(
        await call(api.lobby.GetTableResult, lobby_pb2.GetTableRequest(table_id=table_id), auth)
    )
