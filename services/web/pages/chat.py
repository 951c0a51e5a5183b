"""The table page's chat box (issue 32, item 3): a server-rendered part (``GET
/tables/{id}/chat``, swapped in by htmx), its send and mute forms, and its live updates
(``GET /tables/{id}/chat/events``, Server-Sent Events: ``event: chat`` when a message the
signed-in reader may read arrives; ``static/chat.js`` then swaps the part in again). Every
text is escaped by the templates (Jinja autoescape); no inline script (the site's CSP)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, StreamingResponse

from roundhouse.v1 import chat_pb2
from services.lobby.chat import PLAYERS, SPECTATORS
from services.web.backend import call
from services.web.errors import ApiError
from services.web.pages.base import api_of, page, refusal, write_form
from services.web.session import session_auth

router = APIRouter(include_in_schema=False)

SHOWN = 100
"""The latest messages the box lists."""
SSE_WAIT_MS = 10_000
"""One wait of the live updates' read; an idle stream sends a comment after each."""


async def chat_context(request: Request, table_id: str) -> dict[str, Any]:
    """``table_id``, ``messages`` (what the reader may read, as the API gives them),
    ``channels``, ``channel`` (where the reader writes: ``players`` when seated),
    ``muted`` (usernames), ``last_id``; empty for a signed-out reader."""
    api, auth = api_of(request), session_auth(request)
    context: dict[str, Any] = {"table_id": table_id, "messages": [], "last_id": ""}
    if not auth:
        return context
    answer = await call(api.lobby.GetChat, chat_pb2.GetChatRequest(table_id=table_id), auth)
    messages = list(answer.messages)
    while answer.last_id:  # an answer holds at most 200 messages read: on to the latest
        more = await call(
            api.lobby.GetChat,
            chat_pb2.GetChatRequest(table_id=table_id, after_id=answer.last_id),
            auth,
        )
        if more.last_id == answer.last_id:
            break
        answer = more
        messages = (messages + list(more.messages))[-SHOWN:]
    channels = list(answer.channels)
    context.update(
        messages=messages[-SHOWN:],
        channels=channels,
        channel=PLAYERS if PLAYERS in channels else SPECTATORS,
        last_id=answer.last_id,
        muted=list(answer.muted),
    )
    return context


async def render_chat(request: Request, table_id: str, **extra: Any):
    try:
        context = await chat_context(request, table_id)
    except ApiError as err:
        context = {"table_id": table_id, "messages": [], "last_id": "", "error": refusal(err)}
    return await page(request, "table_chat.html", **context, **extra)


@router.get("/tables/{table_id}/chat", response_class=HTMLResponse)
async def chat_part(request: Request, table_id: str):
    return await render_chat(request, table_id)


@router.post("/tables/{table_id}/chat", response_class=HTMLResponse)
async def chat_send(request: Request, table_id: str):
    """The send form: ``channel``, ``text``; answers the refreshed part (a refusal shown)."""
    form = await write_form(request)
    error = None
    try:
        await call(
            api_of(request).lobby.SendChat,
            chat_pb2.SendChatRequest(
                table_id=table_id, channel=form.get("channel", ""), text=form.get("text", "")
            ),
            session_auth(request),
        )
    except ApiError as err:
        error = refusal(err)
    return await render_chat(request, table_id, chat_error=error)


@router.post("/tables/{table_id}/chat/mute", response_class=HTMLResponse)
async def chat_mute(request: Request, table_id: str):
    """The mute buttons: ``username``, ``unmute`` (``1``); answers the refreshed part."""
    form = await write_form(request)
    error = None
    try:
        await call(
            api_of(request).lobby.Mute,
            chat_pb2.MuteRequest(
                table_id=table_id,
                username=form.get("username", ""),
                unmute=form.get("unmute", "") == "1",
            ),
            session_auth(request),
        )
    except ApiError as err:
        error = refusal(err)
    return await render_chat(request, table_id, chat_error=error)


async def _sse(request: Request, table_id: str, after: str):
    yield b"retry: 2000\n\n"
    api, auth = api_of(request), session_auth(request)
    while True:
        answer = await call(
            api.lobby.GetChat,
            chat_pb2.GetChatRequest(table_id=table_id, after_id=after, wait_ms=SSE_WAIT_MS),
            auth,
        )
        after = answer.last_id
        if answer.messages:
            yield f"event: chat\ndata: {after}\n\n".encode()
        else:
            yield b": keep-alive\n\n"


@router.get("/tables/{table_id}/chat/events")
async def chat_events(
    request: Request,
    table_id: str,
    after: Annotated[str, Query(max_length=48)] = "",
):
    """Live updates of the chat box (Server-Sent Events; see the module docstring)."""
    api, auth = api_of(request), session_auth(request)
    await call(  # the refusal (signed out, bad id, unknown table) before the stream starts
        api.lobby.GetChat, chat_pb2.GetChatRequest(table_id=table_id, after_id=after), auth
    )
    return StreamingResponse(
        _sse(request, table_id, after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
