"""NDJSON streams: ``GET /api/tables/{id}/stream`` and ``GET /api/stream/events``.

One JSON object per line (``application/x-ndjson``). A stream idle for
``gateway_keepalive_s`` (10 s) sends an empty line, so a client can tell a
quiet stream from a dead one. A table stream ends when the game ends; the
event stream runs until the client hangs up. An error after the stream
began is sent as a last line ``{"type": "error", "code", "message",
"details"}``. Each stream holds one of its token's stream slots
(:mod:`services.web.streams_limit`): past the limit 429 ``too_many_streams``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Annotated, Any

import grpc
from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from roundhouse.v1 import lobby_pb2
from services.lobby.events import BadEventId, check_event_id
from services.platform.bounds import INT32_MAX, INT32_MIN
from services.platform.logging import get_logger
from services.web.backend import call, metadata_of, token_key
from services.web.chat import WithChat
from services.web.deps import Api, Auth
from services.web.errors import ERROR_RESPONSES, ApiError
from services.web.models import event_line, table_out, update_line, view_out
from services.web.streams_limit import StreamSlots

log = get_logger("gateway")
router = APIRouter(prefix="/api", tags=["streams"], responses=ERROR_RESPONSES)

NDJSON = "application/x-ndjson"
_DONE = object()


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


async def ndjson(
    first: Iterable[dict[str, Any]],
    call: Any,
    to_line: Callable[[Any], dict[str, Any]],
    keepalive_s: float,
    slots: StreamSlots,
    who: str,
    slot: str,
) -> AsyncIterator[bytes]:
    """The lines of a stream: ``first``, then ``to_line`` of each message of
    the gRPC stream ``call``, with keep-alive empty lines; frees the slot and
    cancels the call when the stream ends or the client leaves."""
    queue: asyncio.Queue = asyncio.Queue(maxsize=64)

    async def pump() -> None:
        try:
            async for message in call:
                await queue.put(to_line(message))
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.CANCELLED:
                return
            error = ApiError.from_grpc(err)
            await queue.put({"type": "error", **error.body()})
        await queue.put(_DONE)

    task = asyncio.create_task(pump())
    refreshed = time.monotonic()
    try:
        for line in first:
            yield _line(line)
        while True:
            if queue.empty():  # wait for a line, at most keepalive_s (a timer, not a task)
                try:
                    async with asyncio.timeout(keepalive_s):
                        item = await queue.get()
                except TimeoutError:
                    item = None
            else:
                item = queue.get_nowait()
            if item is _DONE:
                return
            yield b"\n" if item is None else _line(item)
            if time.monotonic() - refreshed >= keepalive_s:
                refreshed = time.monotonic()
                try:
                    await slots.refresh(who, slot)
                except Exception:  # noqa: BLE001 - Redis away: the slot just ages out
                    log.warning("stream slot not refreshed", exc_info=True)
    finally:
        call.cancel()
        task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.shield(slots.release(who, slot))


def _who(request: Request, auth: str) -> str:
    if auth:
        return token_key(auth)
    return f"addr:{request.client.host if request.client else 'unknown'}"


STREAM_RESPONSE = {200: {"content": {NDJSON: {}}, "description": "NDJSON lines"}}


@router.get(
    "/tables/{table_id}/stream", response_class=StreamingResponse, responses=STREAM_RESPONSE
)
async def table_stream(
    table_id: str,
    request: Request,
    api: Api,
    auth: Auth,
    from_version: Annotated[
        int | None,
        Query(
            ge=INT32_MIN,
            le=INT32_MAX,
            description="replay the moves after this version (default: the view's version)",
        ),
    ] = None,
):
    """The table as NDJSON: first ``{"type": "state", "version", "finished",
    "table", "view"}`` (the caller's seat's view, or the spectators'; ``view``
    is null before the start), then one ``{"type": "move", ...}`` per move after ``from_version``
    (replayed, then live), with its label; ends after the game's last move. With a token,
    the chat messages the caller reads come in between, from the first: ``{"type": "chat",
    "id", "channel", "username", "seat", "text", "at_ms"}``.
    ``from_version`` must be 0..the view's version (else 400 ``bad_version``)."""
    state = request.app.state
    who = _who(request, auth)
    slot = await state.slots.acquire(who)
    try:
        table = await api.table(table_id)
        view = None
        current = 0
        if table.status in (lobby_pb2.TABLE_STATUS_RUNNING, lobby_pb2.TABLE_STATUS_FINISHED):
            seat = await api.seat_of(table_id, auth)
            seat_request = lobby_pb2.SeatRequest(table_id=table_id)
            if seat is not None:
                seat_request.seat = seat
            answer = await call(api.lobby.GetSeatView, seat_request, auth)
            view, current = view_out(answer, seat), answer.version
        elif table.status == lobby_pb2.TABLE_STATUS_ABORTED:
            raise ApiError(
                grpc.StatusCode.FAILED_PRECONDITION, "table_aborted", "the table was aborted"
            )
        start = current if from_version is None else from_version
        if not 0 <= start <= current:
            bound = {"min_version": 0} if start < 0 else {"max_version": current}
            raise ApiError(
                grpc.StatusCode.INVALID_ARGUMENT if start < 0 else grpc.StatusCode.OUT_OF_RANGE,
                "bad_version",
                f"from_version must be 0..{current} (the game's version), got {start}",
                from_version=start,
                current_version=current,
                **bound,
            )
    except BaseException:
        await state.slots.release(who, slot)
        raise
    watch = WithChat(  # the caller's table chat beside the moves (services/web/chat.py)
        api.lobby.WatchTable(
            lobby_pb2.WatchTableRequest(table_id=table_id, from_version=start),
            metadata=metadata_of(auth),
        ),
        api,
        auth,
        table_id,
    )
    first = [
        {
            "type": "state",
            "version": current,
            "finished": bool(view and view["finished"]),
            "table": table_out(table),
            "view": view,
        }
    ]
    return StreamingResponse(
        ndjson(first, watch, _table_line, state.keepalive_s, state.slots, who, slot),
        media_type=NDJSON,
    )


def _table_line(item: Any) -> dict[str, Any]:
    """A table stream's line: a move (``update_line``) or a chat message (already a dict)."""
    return item if isinstance(item, dict) else update_line(item)


@router.get("/stream/events", response_class=StreamingResponse, responses=STREAM_RESPONSE)
async def event_stream(
    request: Request,
    api: Api,
    auth: Auth,
    after: Annotated[str, Query(description="the last event id received: resume after it")] = "",
    from_id: Annotated[str, Query(description="the same as ?after=")] = "",
    last_event_id: Annotated[str, Header(description="the same as ?after=")] = "",
    moves: Annotated[
        bool,
        Query(
            description="each yourTurn still current when sent carries the seat's legal moves "
            '("moves", as GET /api/tables/{id}/moves lists them), so no GET is needed before '
            "a move; absent when the turn has passed (a replayed event)"
        ),
    ] = False,
):
    """The caller's account events as NDJSON (``tableJoined``, ``gameStart``,
    ``yourTurn`` with its ``version``, ``gameFinish``, ``tableAborted``, and
    later more types: ignore unknown ones). Without ``after`` it opens with
    the pending events; with it, every event after that id. With ``moves=true``
    a current ``yourTurn`` carries the seat's legal moves."""
    cursor = after or from_id or last_event_id
    if not auth:
        raise ApiError(grpc.StatusCode.UNAUTHENTICATED, "token_missing", "this needs a token")
    if cursor:
        try:
            check_event_id(cursor)
        except BadEventId as exc:
            raise ApiError(grpc.StatusCode.INVALID_ARGUMENT, "bad_event_id", str(exc)) from None
    await api.account_id(auth)  # a bad token: 401 now, not inside the stream
    state = request.app.state
    who = _who(request, auth)
    slot = await state.slots.acquire(who)
    events = api.lobby.StreamEvents(
        lobby_pb2.StreamEventsRequest(after_event_id=cursor, with_moves=moves),
        metadata=metadata_of(auth),
    )
    return StreamingResponse(
        ndjson([], events, event_line, state.keepalive_s, state.slots, who, slot),
        media_type=NDJSON,
    )
