"""Table chat: ``SendChat``, ``GetChat`` and ``Mute`` (:mod:`services.lobby.chat` has the
channels, audiences, rules and storage)."""

from __future__ import annotations

import asyncio
import time

import grpc

from roundhouse.v1 import chat_pb2
from services.accounts.rules import BOT_PLAY, PLAY
from services.lobby.chat import (
    POLL_S,
    SPECTATORS,
    check_after,
    check_channel,
    check_text,
    deadline_of,
    readable,
    seat_of,
    visible,
    writable,
)
from services.lobby.handlers.common import DENIED, REFUSED
from services.lobby.models import ABORTED, FINISHED
from services.platform.auth import require_principal, require_scope
from services.platform.grpc_errors import ServiceError


def _not_in(channel: str) -> ServiceError:
    return ServiceError(
        DENIED,
        "not_in_channel",
        f"you are not in the {channel} channel of this table",
        channel=channel,
    )


class Chat:
    """The chat handlers of :class:`services.lobby.server.LobbyServicer`."""

    async def SendChat(self, request, context):
        """Store one message in the caller's channel and wake its readers. Checks, in order:
        a ``play``/``bot:play`` token, the channel name, the table (NOT_FOUND), its status
        (FAILED_PRECONDITION ``chat_closed`` once finished or aborted), the caller's channel
        (PERMISSION_DENIED ``not_in_channel``), the text (:func:`check_text`), then the rate
        (RESOURCE_EXHAUSTED ``chat_rate``); a refusal stores nothing."""
        principal = await require_scope(context, PLAY, BOT_PLAY)
        channel = check_channel(request.channel)
        table = await self._table(request.table_id)
        if table.status in (FINISHED, ABORTED):
            raise ServiceError(
                REFUSED, "chat_closed", f"the table is {table.status}: its chat is closed"
            )
        if writable(table, principal.account_id) != channel:
            raise _not_in(channel)
        text = check_text(request.text, self.settings.chat_max_length)
        await self.chat_rates.hit("chat", principal.account_id, "chat_rate", "chat messages")
        seat = seat_of(table, principal.account_id)
        message = await self.chat.append(
            table.table_id,
            channel,
            principal.account_id,
            principal.username,
            -1 if channel == SPECTATORS or seat is None else seat,
            text,
        )
        self.chat_hub.wake(table.table_id)
        return message.proto()

    async def GetChat(self, request, context):
        """The messages after ``after_id`` in the channels the caller reads (one, or all with
        ``channel`` ""), without those of accounts the caller muted here; with none and
        ``wait_ms``, waits up to that long for one."""
        principal = await require_principal(context)
        if not principal.account_id:
            raise ServiceError(DENIED, "account_needed", "chat belongs to accounts")
        channel = check_channel(request.channel, empty_ok=True)
        after = check_after(request.after_id)
        deadline = deadline_of(request.wait_ms)
        table = await self._table(request.table_id)
        channels = readable(table, principal.account_id)
        if channel and channel not in channels:
            raise _not_in(channel)
        wanted = (channel,) if channel else channels
        waiter = self.chat_hub.register(table.table_id)
        try:
            while True:
                waiter.clear()
                read = await self.chat.read(table, after)
                muted = await self.chat.muted(table.table_id, principal.account_id)
                shown = visible(read, wanted, muted)
                if read:
                    after = read[-1].id
                left = deadline - time.monotonic()
                if shown or left <= 0 or context.done():
                    break
                try:
                    async with asyncio.timeout(min(left, POLL_S)):
                        await waiter.wait()
                except TimeoutError:
                    pass
        finally:
            self.chat_hub.unregister(table.table_id, waiter)
        return chat_pb2.GetChatResponse(
            messages=[m.proto() for m in shown],
            channels=list(channels),
            last_id=after,
            muted=sorted(muted.values()),
        )

    async def Mute(self, request, context):
        """Mute (``unmute``: unmute) an account for the caller at this table; the caller's
        mutes after. INVALID_ARGUMENT ``cannot_mute_self``; NOT_FOUND ``unknown_account``."""
        principal = await require_principal(context)
        if not principal.account_id:
            raise ServiceError(DENIED, "account_needed", "chat belongs to accounts")
        table = await self._table(request.table_id)
        target = await self.accounts.by_username(request.username)
        if target is None:
            raise ServiceError(grpc.StatusCode.NOT_FOUND, "unknown_account", "no such account")
        if target.id == principal.account_id:
            raise ServiceError(
                grpc.StatusCode.INVALID_ARGUMENT, "cannot_mute_self", "you cannot mute yourself"
            )
        muted = await self.chat.mute(
            table.table_id, principal.account_id, target.id, target.username, request.unmute
        )
        return chat_pb2.MuteResponse(muted=sorted(muted.values()))
