"""Table chat (issue 32): two channels per table, their audiences, the message rules, the
Redis log the live messages are kept in, mutes, wake-ups and the archived copy.

Channels and audiences (as lichess has them: the spectators' room apart from the players'):

* ``players``: the accounts seated at the table read and write it, during and after the game;
  nobody else reads it (a spectator, another table's players).
* ``spectators``: any signed-in account that is not seated at the table reads and writes it.
  A seated player does not read it while the table is open or running (no kibitzing reaches a
  player, and nothing a player says reaches the spectators' room); once the game is finished
  the players read it too.

Rules for a message (:func:`check_text`): stripped of surrounding white space, 1 to
``chat_max_length`` code points, no control characters (Unicode category ``Cc``), no lone
surrogates (``Cs``: possible over JSON, ``"\\ud800"``) and no bidirectional overrides
(U+202A-U+202E, U+2066-U+2069), which would turn the text around others' names on the page.
Each account sends at most ``chat_per_account`` messages (a ``limits`` string, counted in Redis
by :class:`services.lobby.quotas.RateLimits`, the lobby's own limiter, so every replica counts
the same). The text is stored as sent: every page escapes it (Jinja autoescape).

Storage: while the table is live, its messages are the Redis stream ``P:chat:{<table>}:log``
(bounded to ``chat_maxlen`` entries; fields ``channel``, ``account_id``, ``username``,
``seat``, ``text``; the entry id is the message id) and each account's mutes the hash
``P:chat:{<table>}:mute:<account id>`` (muted account id -> username; the set
``P:chat:{<table>}:muters`` names the accounts that have one). A message is published
on ``P:chat-wake`` (the table id) so that waiting readers on every lobby read at once
(:class:`ChatHub`). When the game is finished, the archiver copies the log into
``archived_chat`` (:func:`archive_chat`, migration ``0010_table_chat``), keyed by table and
message id (a second copy inserts nothing), and lets the Redis keys expire like the game's;
the lobby reads a finished table's chat from there, with the same audiences (mutes still
apply while their hash lives, ``archived_game_ttl_s``).
"""

from __future__ import annotations

import asyncio
import re
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import grpc
import redis.asyncio as aioredis
import sqlalchemy as sa
from sqlalchemy import BigInteger, Index, Integer, String, Text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from roundhouse.v1 import chat_pb2
from services.lobby.models import FINISHED
from services.lobby.store import TableRecord
from services.platform import hotstore
from services.platform.db import Base
from services.platform.grpc_errors import ServiceError

PLAYERS, SPECTATORS = "players", "spectators"
CHANNELS = (PLAYERS, SPECTATORS)
READ_COUNT = 200
"""Messages one read returns at most (the next read goes on from the last one's id)."""
MAX_WAIT_MS = 30_000
"""Longest wait of one ``GetChat``."""
POLL_S = 1.0
"""A waiting read reads again this often even without a wake-up (a missed pub/sub message)."""

_BAD = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ID = re.compile(r"^\d{1,20}-\d{1,20}$")
INVALID = grpc.StatusCode.INVALID_ARGUMENT


def check_text(text: str, max_length: int) -> str:
    """The message as stored: ``text`` stripped.

    Raises:
        ServiceError: INVALID_ARGUMENT ``empty_message``, ``message_too_long`` (metadata
            ``max_length``, ``length``) or ``bad_text`` (a control character, a lone
            surrogate or a bidirectional override).
    """
    text = text.strip()
    if not text:
        raise ServiceError(INVALID, "empty_message", "the message is empty")
    if len(text) > max_length:
        raise ServiceError(
            INVALID,
            "message_too_long",
            f"a message has at most {max_length} characters, this one {len(text)}",
            max_length=max_length,
            length=len(text),
        )
    if _BAD.search(text) or any(unicodedata.category(c) in ("Cc", "Cs") for c in text):
        raise ServiceError(
            INVALID,
            "bad_text",
            "the message holds a control character, a lone surrogate or a direction override",
        )
    return text


def check_channel(channel: str, empty_ok: bool = False) -> str:
    """``channel`` if it is ``players`` or ``spectators`` (or ``""`` with ``empty_ok``);
    else INVALID_ARGUMENT ``bad_channel``."""
    if channel in CHANNELS or (empty_ok and channel == ""):
        return channel
    raise ServiceError(INVALID, "bad_channel", f"channel must be one of {', '.join(CHANNELS)}")


def check_after(after_id: str) -> str:
    """``after_id`` if empty or a message id; else INVALID_ARGUMENT ``bad_chat_id``."""
    if after_id and not _ID.match(after_id):
        raise ServiceError(INVALID, "bad_chat_id", "after_id must be a message id (<ms>-<n>)")
    return after_id


def seat_of(table: TableRecord, account_id: str) -> int | None:
    """The first seat ``account_id`` holds at ``table`` (None: not seated)."""
    if not account_id:
        return None
    for i, seat in enumerate(table.seats):
        if seat.account_id == account_id:
            return i
    return None


def readable(table: TableRecord, account_id: str) -> tuple[str, ...]:
    """The channels ``account_id`` reads at ``table`` (the module docstring's audiences)."""
    if seat_of(table, account_id) is None:
        return (SPECTATORS,)
    return CHANNELS if table.status == FINISHED else (PLAYERS,)


def writable(table: TableRecord, account_id: str) -> str:
    """The one channel ``account_id`` writes to at ``table``."""
    return SPECTATORS if seat_of(table, account_id) is None else PLAYERS


@dataclass(frozen=True)
class Message:
    """One chat message (``seat`` -1 in the spectators' channel; ``at_ms`` Unix ms)."""

    id: str
    channel: str
    account_id: str
    username: str
    seat: int
    text: str

    @property
    def at_ms(self) -> int:
        return int(self.id.partition("-")[0])

    def proto(self) -> chat_pb2.ChatMessage:
        return chat_pb2.ChatMessage(
            id=self.id,
            channel=self.channel,
            username=self.username,
            seat=self.seat,
            text=self.text,
            at_ms=self.at_ms,
        )

    @classmethod
    def from_fields(cls, id: str, f: dict[str, str]) -> Message:
        return cls(
            id, f["channel"], f["account_id"], f["username"], int(f.get("seat", -1)), f["text"]
        )


def _id_key(id: str) -> tuple[int, int]:
    ms, _, n = id.partition("-")
    return int(ms), int(n or 0)


class ArchivedChat(Base):
    """``archived_chat``: a finished table's messages (:func:`archive_chat`)."""

    __tablename__ = "archived_chat"

    table_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    message_id: Mapped[str] = mapped_column(String(48), primary_key=True)
    game_id: Mapped[str] = mapped_column(String(64))
    ms: Mapped[int] = mapped_column(BigInteger)
    n: Mapped[int] = mapped_column(Integer)
    channel: Mapped[str] = mapped_column(String(16))
    account_id: Mapped[str] = mapped_column(String(32))
    username: Mapped[str] = mapped_column(String(64))
    seat: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)


Index("ix_archived_chat_order", ArchivedChat.table_id, ArchivedChat.ms, ArchivedChat.n)


class ChatLog:
    """A table's chat in Redis, and its archived copy.

    Args:
        client: ``redis.asyncio`` (``decode_responses=True``).
        key_prefix: the deployment's prefix (``P``).
        maxlen: messages a table's log keeps (older ones are trimmed).
        sessions: the durable store (archived chat); None: Redis only.
    """

    def __init__(
        self,
        client: aioredis.Redis,
        key_prefix: str,
        maxlen: int = 1000,
        sessions: async_sessionmaker[AsyncSession] | None = None,
    ) -> None:
        self.r = client
        self.prefix = key_prefix
        self.maxlen = maxlen
        self.sessions = sessions
        self.channel = f"{key_prefix}:chat-wake"

    def log_key(self, table_id: str) -> str:
        return f"{self.prefix}:chat:{{{table_id}}}:log"

    def mute_key(self, table_id: str, account_id: str) -> str:
        return f"{self.prefix}:chat:{{{table_id}}}:mute:{account_id}"

    def muters_key(self, table_id: str) -> str:
        """The set of the accounts that hold a mute hash at the table (for :meth:`expire`)."""
        return f"{self.prefix}:chat:{{{table_id}}}:muters"

    async def append(
        self, table_id: str, channel: str, account_id: str, username: str, seat: int, text: str
    ) -> Message:
        """Store one message (already checked) and announce it on :attr:`channel`."""
        fields = {
            "channel": channel,
            "account_id": account_id,
            "username": username,
            "seat": str(seat),
            "text": text,
        }
        id = await self.r.xadd(self.log_key(table_id), fields, maxlen=self.maxlen, approximate=True)
        await hotstore.publish_id(self.r, self.channel, table_id)
        return Message.from_fields(id, fields)

    async def live(self, table_id: str, after_id: str, count: int = READ_COUNT) -> list[Message]:
        """The messages of the Redis log after ``after_id`` ("" = from the start), oldest first."""
        start = f"({after_id}" if after_id else "-"
        entries = await self.r.xrange(self.log_key(table_id), start, "+", count=count)
        return [Message.from_fields(id, fields) for id, fields in entries]

    async def archived(self, table_id: str, after_id: str) -> list[Message]:
        """The archived messages after ``after_id``, oldest first (none without a store)."""
        if self.sessions is None:
            return []
        query = sa.select(ArchivedChat).where(ArchivedChat.table_id == table_id)
        if after_id:
            ms, n = _id_key(after_id)
            query = query.where(sa.tuple_(ArchivedChat.ms, ArchivedChat.n) > sa.tuple_(ms, n))
        query = query.order_by(ArchivedChat.ms, ArchivedChat.n).limit(READ_COUNT)
        async with self.sessions() as session:
            rows = (await session.execute(query)).scalars().all()
        return [
            Message(r.message_id, r.channel, r.account_id, r.username, r.seat, r.text) for r in rows
        ]

    async def read(self, table: TableRecord, after_id: str) -> list[Message]:
        """A table's messages after ``after_id``: a finished table's from the archive once
        they are there, else from Redis."""
        if table.status == FINISHED:
            kept = await self.archived(table.table_id, after_id)
            if kept or not await self.r.exists(self.log_key(table.table_id)):
                return kept
        return await self.live(table.table_id, after_id)

    async def muted(self, table_id: str, account_id: str) -> dict[str, str]:
        """The accounts ``account_id`` mutes at ``table_id``: account id -> username."""
        return dict(await self.r.hgetall(self.mute_key(table_id, account_id)))

    async def mute(
        self, table_id: str, account_id: str, target_id: str, target_name: str, unmute: bool
    ) -> dict[str, str]:
        """Mute (or unmute) ``target_id`` for ``account_id`` at ``table_id``; the mutes after."""
        key = self.mute_key(table_id, account_id)
        if unmute:
            await self.r.hdel(key, target_id)
        else:
            async with self.r.pipeline(transaction=True) as pipe:  # one slot: {table}
                pipe.sadd(self.muters_key(table_id), account_id)
                pipe.hset(key, target_id, target_name)
                await pipe.execute()
        return await self.muted(table_id, account_id)

    async def expire(self, table_id: str, ttl_s: int) -> None:
        """Let the table's chat keys live ``ttl_s`` more seconds (0: delete them now)."""
        muters = await self.r.smembers(self.muters_key(table_id))
        keys = [self.log_key(table_id), self.muters_key(table_id)]
        keys += [self.mute_key(table_id, a) for a in sorted(muters)]
        async with self.r.pipeline(transaction=True) as pipe:
            for key in keys:
                if ttl_s:
                    pipe.expire(key, ttl_s)
                else:
                    pipe.delete(key)
            await pipe.execute()


async def archive_chat(
    log: ChatLog, sessions: async_sessionmaker[AsyncSession], table_id: str, game_id: str
) -> int:
    """Copy a finished table's Redis chat into ``archived_chat`` (messages stored already are
    skipped: idempotent); returns how many rows were new."""
    messages: list[Message] = []
    after = ""
    while True:
        batch = await log.live(table_id, after, 1000)
        messages += batch
        if len(batch) < 1000:
            break
        after = batch[-1].id
    if not messages:
        return 0
    async with sessions.begin() as session:
        have = set(
            (
                await session.execute(
                    sa.select(ArchivedChat.message_id).where(ArchivedChat.table_id == table_id)
                )
            ).scalars()
        )
        rows = [
            {
                "table_id": table_id,
                "message_id": m.id,
                "game_id": game_id,
                "ms": _id_key(m.id)[0],
                "n": _id_key(m.id)[1],
                "channel": m.channel,
                "account_id": m.account_id,
                "username": m.username,
                "seat": m.seat,
                "text": m.text,
            }
            for m in messages
            if m.id not in have
        ]
        if rows:
            await session.execute(sa.insert(ArchivedChat), rows)
    return len(rows)


def visible(
    messages: Iterable[Message], channels: Iterable[str], muted: Iterable[str]
) -> list[Message]:
    """The messages in ``channels`` whose author is not in ``muted`` (account ids)."""
    wanted, silenced = set(channels), set(muted)
    return [m for m in messages if m.channel in wanted and m.account_id not in silenced]


class ChatHub:
    """Wakes the readers waiting for a table's next message: at once for messages sent
    through this lobby, and, while :meth:`run` follows ``P:chat-wake``, for every lobby's."""

    def __init__(self, client: aioredis.Redis, channel: str) -> None:
        self.r = client
        self.channel = channel
        self._waiters: dict[str, set[asyncio.Event]] = {}

    def register(self, table_id: str) -> asyncio.Event:
        event = asyncio.Event()
        self._waiters.setdefault(table_id, set()).add(event)
        return event

    def unregister(self, table_id: str, event: asyncio.Event) -> None:
        waiters = self._waiters.get(table_id)
        if waiters is not None:
            waiters.discard(event)
            if not waiters:
                del self._waiters[table_id]

    def wake(self, table_id: str) -> None:
        for event in self._waiters.get(table_id, ()):
            event.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Follow the wake-up channel until ``stop`` is set (under a Supervisor)."""
        pubsub = await hotstore.pubsub(self.r)
        try:
            await pubsub.subscribe(self.channel)
            while not stop.is_set():
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if message is not None:
                    data = message["data"]
                    self.wake(data.decode() if isinstance(data, bytes) else str(data))
        finally:
            await pubsub.aclose()


def deadline_of(wait_ms: int) -> float:
    """The monotonic time a wait of ``wait_ms`` (checked: 0..MAX_WAIT_MS) ends at."""
    if not 0 <= wait_ms <= MAX_WAIT_MS:
        raise ServiceError(
            INVALID,
            "bad_wait",
            f"wait_ms must be 0..{MAX_WAIT_MS}",
            min_wait_ms=0,
            max_wait_ms=MAX_WAIT_MS,
        )
    return time.monotonic() + wait_ms / 1000
