"""The table page: the board, the clocks, the caller's legal moves and the latest moves,
its live part (htmx) and its live updates (Server-Sent Events), and the move form."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Annotated, Any

import grpc
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, StreamingResponse

from roundhouse.v1 import lobby_pb2
from services.platform.bounds import INT32_MAX, INT32_MIN
from services.web import boards
from services.web.backend import (
    CALL_TIMEOUT_S,
    Backends,
    call,
    rpc,
)
from services.web.errors import ApiError
from services.web.feeds import Feeds
from services.web.models import (
    moves_out,
    standings_out,
    table_out,
    view_out,
)
from services.web.pages.base import (
    api_of,
    error_page,
    form_int,
    page,
    refusal,
    write_form,
)
from services.web.session import (
    session_auth,
)

router = APIRouter(include_in_schema=False)

LOG_MOVES = 40
"""How many of the latest moves the table page lists (the replay shows them all)."""
SSE_KEEPALIVE_S = 10.0
"""An idle live-update stream sends a comment this often (seconds)."""
LOG_WAIT_S = 5.0
"""How long a page waits for the shared feed to catch up with its view (seconds)."""


def feed_of(api: Backends, table_id: str):
    """The table's shared move feed (:mod:`services.web.feeds`)."""
    if api.feeds is None:
        api.feeds = Feeds(api.lobby)
    return api.feeds.get(table_id)


async def _log(api: Backends, table_id: str, after: int, upto: int) -> list[dict]:
    """The moves ``after`` < version <= ``upto`` with their labels (the shared feed; what
    it has after :data:`LOG_WAIT_S` if the lobby is slow)."""
    if upto <= after:
        return []
    feed = feed_of(api, table_id)
    await feed.wait_for(upto, LOG_WAIT_S)
    return feed.moves[after:upto]


def seat_names(table: dict[str, Any]) -> list[str]:
    """Each seat's name as the pages show it: the account (hosted bots are accounts named
    after their policy, so three greedy bots share a name: those get their seat number)."""
    names = [
        s.get("guest") or s["account"] or s["policy"] or f"seat {s['seat']}" for s in table["seats"]
    ]
    return [f"{n} ({i})" if names.count(n) > 1 else n for i, n in enumerate(names)]


async def table_context(api: Backends, auth: str, table_id: str) -> dict[str, Any]:
    """Everything the table page shows: ``table`` (as the API's), ``view`` (the caller's
    seat's or the spectators'; None before the start), ``board`` (SVG), ``clocks`` (per
    seat: remaining_ms, running, deadline_ms, flagged), ``moves`` (the caller's legal moves
    now), ``log`` (the latest :data:`LOG_MOVES` moves), ``standings`` (finished games).

    Raises:
        ApiError: the lobby's refusal (404 ``table_not_found``, ...).
    """
    raw = await api.table(table_id)
    table = table_out(raw)
    context: dict[str, Any] = {"table": table, "names": seat_names(table), "view": None}
    if table["status"] not in ("running", "finished"):
        return context
    seat = await api.seat_of(table_id, auth)
    request = lobby_pb2.SeatRequest(table_id=table_id)
    if seat is not None:
        request.seat = seat
    answer = await call(api.lobby.GetSeatView, request, auth)
    view = view_out(answer, seat)
    context["view"] = view
    context["clocks"] = {
        c.seat: {
            "remaining_ms": c.remaining_ms,
            "running": c.running,
            "deadline_ms": c.deadline_ms,
            "flagged": c.flagged,
        }
        for c in answer.clocks
    }
    log_task = asyncio.create_task(
        _log(api, table_id, max(0, view["version"] - LOG_MOVES), view["version"])
    )
    moves: list[dict[str, Any]] = []
    if seat is not None and seat in view["active_seats"] and not view["finished"]:
        legal = await call(
            api.lobby.ListMoves, lobby_pb2.SeatRequest(table_id=table_id, seat=seat), auth
        )
        moves = moves_out(legal)["moves"]
        for m in moves:
            m["action_json"] = json.dumps(m["action"], separators=(",", ":"), sort_keys=True)
    context["moves"] = moves
    context["board"] = boards.render(table["title"], view["view"], context["names"])
    context["log"] = list(reversed(await log_task))
    if view["finished"]:
        with contextlib.suppress(ApiError):  # the lobby may not have recorded it yet
            result = await rpc(
                api.lobby.GetTableResult(
                    lobby_pb2.GetTableRequest(table_id=table_id), timeout=CALL_TIMEOUT_S
                )
            )
            context["standings"] = standings_out(result)["standings"]
    return context


async def render_table(request: Request, table_id: str, fragment: bool = False, **extra: Any):
    api, auth = api_of(request), session_auth(request)
    try:
        context = await table_context(api, auth, table_id)
    except ApiError as err:
        return await error_page(request, err)
    name = "table_live.html" if fragment else "table.html"
    return await page(request, name, **context, **extra)


@router.get("/tables/{table_id}", response_class=HTMLResponse)
async def table_page(request: Request, table_id: str):
    return await render_table(request, table_id)


@router.get("/tables/{table_id}/live", response_class=HTMLResponse)
async def table_live(request: Request, table_id: str):
    """The live part of the table page (htmx swaps it in after each move)."""
    return await render_table(request, table_id, fragment=True)


@router.post("/tables/{table_id}/move", response_class=HTMLResponse)
async def move(request: Request, table_id: str):
    """One of the listed moves: ``action`` (its JSON as listed), ``expected_version``, and
    for a ranged move ``field`` and ``value``. Answers the refreshed live part; a refusal
    shows the server's reason (nothing changed); a stale page just refreshes."""
    form = await write_form(request)
    api, auth = api_of(request), session_auth(request)
    notice = error = None
    try:
        try:
            action = json.loads(form.get("action", ""))
        except json.JSONDecodeError:
            raise ApiError(
                grpc.StatusCode.INVALID_ARGUMENT, "bad_json", "action: not JSON"
            ) from None
        if not isinstance(action, dict):
            raise ApiError(grpc.StatusCode.INVALID_ARGUMENT, "bad_json", "action: an object")
        field = form.get("field", "")
        if field:
            action[field] = form_int(form, "value")
        seat = await api.my_seat(table_id, auth)
        await call(
            api.lobby.SubmitMove,
            lobby_pb2.SubmitMoveRequest(
                table_id=table_id,
                seat=seat,
                action_json=json.dumps(action, separators=(",", ":")),
                expected_version=form_int(form, "expected_version"),
                idempotency_key=form.get("key", "")[:64],
            ),
            auth,
        )
    except ApiError as err:
        if err.code == "stale_version":
            notice = "Someone moved first: the table is shown as it is now."
        else:
            error = refusal(err)
    return await render_table(request, table_id, fragment=True, notice=notice, error=error)


async def _sse(api: Backends, table_id: str, after: int):
    """``text/event-stream`` of a table: ``event: move`` with ``{"version", "seat",
    "label", "finished"}`` per move after ``after``; a comment every
    :data:`SSE_KEEPALIVE_S` idle seconds; ``event: end`` after the last move."""
    yield b"retry: 2000\n\n"
    async for m in feed_of(api, table_id).updates(after, SSE_KEEPALIVE_S):
        if m is None:
            yield b": keep-alive\n\n"
            continue
        item = {k: m[k] for k in ("version", "seat", "label", "finished")}
        yield f"event: move\ndata: {json.dumps(item)}\n\n".encode()
    yield b"event: end\ndata: {}\n\n"


@router.get("/tables/{table_id}/events")
async def table_events(
    request: Request,
    table_id: str,
    after: Annotated[int, Query(ge=INT32_MIN, le=INT32_MAX)] = 0,
):
    """Live updates of a table page (Server-Sent Events; see :func:`_sse`)."""
    api = api_of(request)
    await api.table(table_id)  # 404 before the stream starts
    return StreamingResponse(
        _sse(api, table_id, max(0, after)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
