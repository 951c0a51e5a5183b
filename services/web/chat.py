"""Table chat over HTTP (issue 32, item 3; ``Lobby.SendChat``, ``GetChat``, ``Mute``):

* ``POST /api/tables/{id}/chat`` ``{"channel", "text"}``: send (201, the stored message);
* ``GET /api/tables/{id}/chat?channel=&after=&wait_ms=``: the messages the caller may read
  after ``after``, waiting up to ``wait_ms`` for one;
* ``POST /api/tables/{id}/chat/mute`` ``{"username", "unmute"}``: the caller's mutes here.

The channels, their audiences and the refusals (same reason codes as gRPC) are in
``services/lobby/chat.py`` and ``docs/api.md``. The table's NDJSON stream carries the chat
too, as ``{"type": "chat", ...}`` lines, for a signed-in caller (:class:`WithChat`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

import grpc
from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from roundhouse.v1 import chat_pb2
from services.lobby.chat import MAX_WAIT_MS
from services.platform.logging import get_logger
from services.web.backend import Backends, call, metadata_of
from services.web.deps import Api, Auth
from services.web.errors import ERROR_RESPONSES
from services.web.models import Body

log = get_logger("gateway")
router = APIRouter(prefix="/api/tables", tags=["chat"], responses=ERROR_RESPONSES)

STREAM_WAIT_MS = 25_000
"""One wait of the table stream's chat reader (below the gateway's call deadline)."""


class ChatIn(Body):
    channel: str = Field(description="players (seated players) or spectators (everyone else)")
    text: str = Field(description="1..chat_max_length characters (300 by default), one line")


class MuteIn(Body):
    username: str = Field(description="the account whose messages you no longer receive here")
    unmute: bool = Field(False, description="true: receive them again")


class ChatMessageOut(BaseModel):
    id: str = Field(description="the message id, increasing within the table")
    channel: str
    username: str = Field(description="the author")
    seat: int = Field(description="the author's seat; -1 in the spectators' channel")
    text: str = Field(description="as sent: escape it before showing it")
    at_ms: int = Field(description="when it was stored (Unix ms)")


class ChatOut(BaseModel):
    messages: list[ChatMessageOut] = Field(description="oldest first")
    channels: list[str] = Field(description="the channels you read at this table")
    last_id: str = Field(description="pass as ?after= to read on (the last message read)")
    muted: list[str] = Field(description="the usernames you mute at this table")


class MutesOut(BaseModel):
    muted: list[str] = Field(description="the usernames you mute at this table")


def message_out(m: chat_pb2.ChatMessage) -> dict[str, Any]:
    return {
        "id": m.id,
        "channel": m.channel,
        "username": m.username,
        "seat": m.seat,
        "text": m.text,
        "at_ms": m.at_ms,
    }


def chat_out(answer: chat_pb2.GetChatResponse) -> dict[str, Any]:
    return {
        "messages": [message_out(m) for m in answer.messages],
        "channels": list(answer.channels),
        "last_id": answer.last_id,
        "muted": list(answer.muted),
    }


@router.post("/{table_id}/chat", response_model=ChatMessageOut, status_code=201)
async def send_chat(table_id: str, body: ChatIn, api: Api, auth: Auth):
    """Send a message to one channel of the table (scope ``play`` or ``bot:play``)."""
    request = chat_pb2.SendChatRequest(table_id=table_id, channel=body.channel, text=body.text)
    return message_out(await call(api.lobby.SendChat, request, auth))


@router.get("/{table_id}/chat", response_model=ChatOut)
async def get_chat(
    table_id: str,
    api: Api,
    auth: Auth,
    channel: Annotated[str, Query(description="players, spectators, or empty for both")] = "",
    after: Annotated[str, Query(description="a message id: only the messages after it")] = "",
    wait_ms: Annotated[
        int, Query(ge=0, le=MAX_WAIT_MS, description="wait this long for a message (ms)")
    ] = 0,
):
    """The table's messages you may read (a signed-in account), without those you muted."""
    request = chat_pb2.GetChatRequest(
        table_id=table_id, channel=channel, after_id=after, wait_ms=wait_ms
    )
    return chat_out(await call(api.lobby.GetChat, request, auth))


@router.post("/{table_id}/chat/mute", response_model=MutesOut)
async def mute(table_id: str, body: MuteIn, api: Api, auth: Auth):
    """Stop (``unmute``: restart) receiving one account's messages at this table."""
    request = chat_pb2.MuteRequest(table_id=table_id, username=body.username, unmute=body.unmute)
    return {"muted": list((await call(api.lobby.Mute, request, auth)).muted)}


class WithChat:
    """A table stream's gRPC ``WatchTable`` call with the caller's chat beside it: iterating
    gives the watch's updates and, as dicts (``{"type": "chat", **message}``), the chat
    messages the caller reads, from the first; it ends when the watch ends and raises what
    the watch raises. A chat refusal (no account, say) just stops the chat part."""

    def __init__(self, watch: Any, api: Backends, auth: str, table_id: str) -> None:
        self.watch, self.api, self.auth, self.table_id = watch, api, auth, table_id
        self._tasks: list[asyncio.Task] = []

    def cancel(self) -> None:
        self.watch.cancel()
        for task in self._tasks:
            task.cancel()

    async def _chat(self, queue: asyncio.Queue) -> None:
        after = ""
        while True:
            try:
                answer = await self.api.lobby.GetChat(
                    chat_pb2.GetChatRequest(
                        table_id=self.table_id, after_id=after, wait_ms=STREAM_WAIT_MS
                    ),
                    metadata=metadata_of(self.auth),
                    timeout=STREAM_WAIT_MS / 1000 + 5,
                )
            except grpc.aio.AioRpcError as err:
                if err.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                    continue
                log.info("table stream without chat", code=err.code().name)
                return
            for m in answer.messages:
                await queue.put(("item", {"type": "chat", **message_out(m)}))
            after = answer.last_id

    async def _updates(self, queue: asyncio.Queue) -> None:
        try:
            async for update in self.watch:
                await queue.put(("item", update))
        except grpc.aio.AioRpcError as err:
            await queue.put(("error", err))
        await queue.put(("end", None))

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._merged()

    async def _merged(self) -> AsyncIterator[Any]:
        queue: asyncio.Queue = asyncio.Queue(maxsize=64)
        self._tasks = [asyncio.create_task(self._updates(queue))]
        if self.auth:
            self._tasks.append(asyncio.create_task(self._chat(queue)))
        try:
            while True:
                kind, item = await queue.get()
                if kind == "end":
                    return
                if kind == "error":
                    raise item
                yield item
        finally:
            for task in self._tasks:
                task.cancel()
            for task in self._tasks:
                with contextlib.suppress(BaseException):
                    await task
