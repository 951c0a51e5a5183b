"""The lobby page: the open, running and finished tables, the new-table form (its fields are
the JSON API's :class:`~services.web.models.NewTable`, checked the same way) and the seat
and start forms of a table."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import grpc
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from roundhouse.v1 import lobby_pb2
from services.web import tables as tables_api
from services.web.backend import (
    Backends,
    call,
)
from services.web.errors import ApiError
from services.web.models import (
    STATUS_NAMES,
    BotSeat,
    NewTable,
    table_out,
)
from services.web.pages.base import (
    BOT_POLICIES,
    api_of,
    form_int,
    page,
    refusal,
    see_other,
    write_form,
)
from services.web.pages.table import render_table
from services.web.session import (
    session_auth,
)

router = APIRouter(include_in_schema=False)


async def _list(api: Backends, auth: str, statuses: list[str]) -> list[dict[str, Any]]:
    answer = await call(
        api.lobby.ListTables,
        lobby_pb2.ListTablesRequest(status=[STATUS_NAMES[s] for s in statuses], page_size=50),
        auth,
    )
    return [table_out(t) for t in answer.tables]


@router.get("/", response_class=HTMLResponse)
async def lobby_page(request: Request):
    return await _lobby(request)


async def _lobby(request: Request, status: int = 200, **context: Any) -> Response:
    api, auth = api_of(request), session_auth(request)
    return await page(
        request,
        "lobby.html",
        status=status,
        open_tables=await _list(api, auth, ["open"]),
        running=await _list(api, auth, ["running"]),
        finished=await _list(api, auth, ["finished"]),
        policies=BOT_POLICIES,
        **context,
    )


def _new_table(form: dict[str, str]) -> NewTable:
    """The lobby form as the API's :class:`NewTable` (its checks apply)."""
    try:
        options = json.loads(form.get("options", "").strip() or "{}")
    except json.JSONDecodeError as exc:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT, "bad_json", f"options: not JSON ({exc.msg})"
        ) from None
    if not isinstance(options, dict):
        raise ApiError(grpc.StatusCode.INVALID_ARGUMENT, "bad_json", "options: a JSON object {...}")
    kind = form.get("clock", "none")
    clock: dict[str, Any] | None = None
    if kind == "live":
        clock = {
            "kind": "live",
            "base_s": form_int(form, "base_s", 600),
            "increment_s": form_int(form, "increment_s", 5),
        }
    elif kind == "correspondence":
        clock = {"kind": "correspondence", "per_move_s": form_int(form, "per_move_s", 86400)}
    elif kind != "none":
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_time_control",
            "clock: none, live or correspondence",
            field="clock",
        )
    return NewTable(
        title=form.get("title", ""),
        num_players=form_int(form, "num_players"),
        options=options,
        time_control=clock,
        timeout_policy="takeover" if clock else "",
    )


@router.post("/tables")
async def create_table(request: Request):
    """The lobby's form: a new table (the caller owns it), the caller in seat 0 unless
    "watch only", ``bots`` seats for hosted bots of ``policy``, started once full."""
    form = await write_form(request)
    api, auth = api_of(request), session_auth(request)
    try:
        body = _new_table(form)
        bots = form_int(form, "bots")
        table = await tables_api.create_table(body, api, auth)
        table_id = table["table_id"]
        seat = 0
        if form.get("play", "") == "on":
            await tables_api.join_seat(table_id, 0, api, auth)
            seat = 1
        for i in range(seat, min(seat + bots, body.num_players)):
            policy = form.get("policy", "greedy")
            await tables_api.add_bot(table_id, i, BotSeat(policy=policy), api, auth)
        if seat + bots >= body.num_players:
            await tables_api.start_table(table_id, api, auth)
    except ApiError as err:
        return await _lobby(request, status=err.status, error=refusal(err), form=form)
    return see_other(f"/tables/{quote(table_id)}")


@router.post("/tables/{table_id}/seats/{seat}/{what}")
async def seat_action(request: Request, table_id: str, seat: tables_api.SeatPath, what: str):
    """Join a seat, leave it, or (the owner) give it to a bot: ``what`` = join, leave, bot."""
    form = await write_form(request)
    api, auth = api_of(request), session_auth(request)
    try:
        if what == "join":
            await tables_api.join_seat(table_id, seat, api, auth)
        elif what == "leave":
            await tables_api.leave_seat(table_id, seat, api, auth)
        elif what == "bot":
            policy = form.get("policy", "greedy")
            await tables_api.add_bot(table_id, seat, BotSeat(policy=policy), api, auth)
        else:
            raise ApiError(grpc.StatusCode.NOT_FOUND, "no_route", "join, leave or bot")
    except ApiError as err:
        return await render_table(request, table_id, error=refusal(err))
    return see_other(f"/tables/{quote(table_id)}")


@router.post("/tables/{table_id}/start")
async def start(request: Request, table_id: str):
    await write_form(request)
    api, auth = api_of(request), session_auth(request)
    try:
        await tables_api.start_table(table_id, api, auth)
    except ApiError as err:
        return await render_table(request, table_id, error=refusal(err))
    return see_other(f"/tables/{quote(table_id)}")
