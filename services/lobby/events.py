"""The account event log: what happened to an account's seats, per account,
in Redis (``Lobby.StreamEvents``, the gateway's ``GET /api/stream/events``).

Keys (``P`` = key prefix, ``A`` = account id):

* ``P:events:{A}``: a Redis stream per account, trimmed to about
  ``events_maxlen`` entries (``ROUNDHOUSE_EVENTS_MAXLEN``, 1,000). Fields
  ``type``, ``table_id``, ``game_id``, ``title``, ``seat``, ``version``,
  ``at_ms`` and ``data`` (JSON object). The entry id is the event id: a
  reader resumes after the last id it saw and gets every later event, also
  across a restart of the gateway or the lobby (Redis keeps them; with
  ``appendonly yes`` across a Redis restart too).
* ``P:events:{A}:seen:K``: a dedupe marker (``K`` a key the publisher gives,
  e.g. ``yourTurn:G:12:0``), kept ``dedupe_ttl_s``: an event published
  twice with the same key (a lifecycle entry handled again) is stored once.
* ``P:events:notify``: a pub/sub channel; each publish sends the account id,
  the id of the account's previous event, the new event's id and the event
  (with, for a ``yourTurn``, the seat's legal moves if they were current
  when it was published), one per line, so a reader that has everything up
  to the previous id sends it on at once without reading the stream, and
  one that does not (a message missed, a reader just opened) reads the
  stream after its last id. Readers also re-read every ``events_poll_s`` in
  case a message was missed.

Publishing is one Lua script (dedupe marker, ``XADD`` with ``MAXLEN ~``,
``PUBLISH``), so an event is either stored and announced or not at all. The
account's keys share its hash tag ``{A}`` (one slot of a Redis Cluster; the
channel is not a key: a cluster delivers a ``PUBLISH`` to every node).

Who publishes (the lobby; other services call :meth:`AccountEvents.publish`
with their own types, e.g. the tournaments):

* ``tableJoined`` (the seated account, on ``JoinSeat``, and on ``AddBot`` of
  a self-playing bot account), ``tableAborted`` (every seated account, on
  ``AbortTable``): from the lobby's calls, after the database commit;
* ``gameStart``, ``yourTurn`` (with the version), ``gameFinish`` (with the
  result): from the lifecycle stream, read by the lobby's consumer group
  ``lobby-events`` (:func:`lifecycle_to_events`). Every applied move, the
  bots' included, puts one ``turn`` entry there, so every move after which
  an account's seat is to act gives that account a ``yourTurn``, whoever
  moved, and a consumer that died resumes its pending entries.

* ``reviewReady`` (every account seated at a reviewed table, resigned seats too; data
  ``{"review": "/api/tables/{id}/review"}``): from the lifecycle entry ``review_ready`` the
  review worker appends once a review is stored (:mod:`services.platform.reviews`).

* ``challenge`` (the invitee), ``challengeAccepted`` / ``challengeDeclined`` (the inviter),
  ``challengeCanceled`` (the invitee), data ``{"challenge_id": ...}`` and more: from the
  lobby's challenge calls, after the commit (:mod:`services.lobby.handlers.challenges`).
* ``rematchOffer``, ``rematchDeclined``, ``rematchStarted`` (the persons seated at the
  finished table; :mod:`services.lobby.handlers.rematch`).

Only seats an account plays itself get events (people, self-playing bot
accounts), never seats of a hosted policy.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import time
from collections.abc import Iterable
from typing import Any

import redis.asyncio as aioredis

from services.lobby.hot_tables import HotTables
from services.lobby.quotas import QuotaExceeded
from services.platform import hotstore
from services.platform.grpc_errors import RETRY_AFTER_S
from services.platform.reviews import REVIEW_READY_ENTRY

TABLE_JOINED = "tableJoined"
GAME_START = "gameStart"
YOUR_TURN = "yourTurn"
GAME_FINISH = "gameFinish"
TABLE_ABORTED = "tableAborted"
REVIEW_READY = "reviewReady"
CHALLENGE = "challenge"
CHALLENGE_ACCEPTED = "challengeAccepted"
CHALLENGE_DECLINED = "challengeDeclined"
CHALLENGE_CANCELED = "challengeCanceled"
REMATCH_OFFER = "rematchOffer"
REMATCH_DECLINED = "rematchDeclined"
REMATCH_STARTED = "rematchStarted"
EVENT_TYPES = (
    TABLE_JOINED,
    GAME_START,
    YOUR_TURN,
    GAME_FINISH,
    TABLE_ABORTED,
    REVIEW_READY,
    CHALLENGE,
    CHALLENGE_ACCEPTED,
    CHALLENGE_DECLINED,
    CHALLENGE_CANCELED,
    REMATCH_OFFER,
    REMATCH_DECLINED,
    REMATCH_STARTED,
)
"""The lobby's event types (other services add their own)."""
ENDING_TYPES = frozenset({GAME_FINISH, TABLE_ABORTED})
"""After one of these a table's events are no longer pending."""

EVENT_ID = re.compile(r"^\d{1,20}-\d{1,20}$")

_PUBLISH_LUA = """
-- KEYS: events stream, dedupe marker (none: the stream again; one hash slot)
-- ARGV: maxlen, dedupe ttl (s), account id, notify channel, the message's event (JSON),
--       field/value pairs...
if KEYS[2] ~= KEYS[1] then
  if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then return false end
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local prev = '0-0'
if #last > 0 then prev = last[1][1] end
local fields = {}
for i = 6, #ARGV do fields[#fields + 1] = ARGV[i] end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(fields))
redis.call('PUBLISH', ARGV[4], ARGV[3] .. '\\n' .. prev .. '\\n' .. id .. '\\n' .. ARGV[5])
return id
"""


class BadEventId(ValueError):
    """An event id that is not ``<ms>-<n>``."""


@dataclasses.dataclass(frozen=True, slots=True)
class Event:
    """One account event (see the module docstring)."""

    event_id: str
    type: str
    table_id: str = ""
    game_id: str = ""
    title: str = ""
    seat: int = -1
    version: int = 0
    at_ms: int = 0
    data: dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_entry(cls, entry_id: str, f: dict[str, str]) -> Event:
        return cls(
            event_id=entry_id,
            type=f.get("type", ""),
            table_id=f.get("table_id", ""),
            game_id=f.get("game_id", ""),
            title=f.get("title", ""),
            seat=int(f.get("seat", -1)),
            version=int(f.get("version", 0)),
            at_ms=int(f.get("at_ms", 0)),
            data=json.loads(f.get("data") or "{}"),
        )


def _id_key(event_id: str) -> tuple[int, int]:
    ms, _, seq = event_id.partition("-")
    return int(ms), int(seq or 0)


@dataclasses.dataclass(frozen=True, slots=True)
class Pushed:
    """An event as its publication announced it (:class:`EventHub`): the account's previous
    event id, the event, and for a ``yourTurn`` the seat's legal moves (the base64
    ``ListLegalActionsResponse`` stored with the game's entry; "" = none were current; None =
    not looked up: the reader looks them up)."""

    prev: str
    event: Event
    moves: str | None = None


def follow_on(pushed: Iterable[Pushed], last: str) -> list[Pushed] | None:
    """The pushed events that follow a reader's ``last`` event id without a gap, in order
    (those at or before ``last`` it already has); None when one does not follow on from the
    one before (a message was missed: the reader reads the stream instead)."""
    out: list[Pushed] = []
    for item in pushed:
        if _id_key(item.event.event_id) <= _id_key(last):
            continue
        if item.prev != last:
            return None
        out.append(item)
        last = item.event.event_id
    return out


def check_event_id(event_id: str) -> str:
    """``event_id`` if it has the form of one. Raises :class:`BadEventId`."""
    if not EVENT_ID.match(event_id):
        raise BadEventId("an event id looks like 1733059200000-0 (the event_id of an event)")
    return event_id


def pending(events: Iterable[Event]) -> list[Event]:
    """The events still pending, oldest first: those of tables with no
    ``gameFinish``/``tableAborted`` among ``events``, and of those only the
    latest ``yourTurn`` per table (an earlier turn was played since)."""
    events = list(events)
    ended = {e.table_id for e in events if e.type in ENDING_TYPES}
    last_turn: dict[str, str] = {}
    for e in events:
        if e.type == YOUR_TURN:
            last_turn[e.table_id] = e.event_id
    return [
        e
        for e in events
        if e.table_id not in ended and (e.type != YOUR_TURN or last_turn[e.table_id] == e.event_id)
    ]


class AccountEvents:
    """Publish and read account events.

    Args:
        client: ``redis.asyncio`` client with ``decode_responses=True``.
        prefix: the key prefix.
        maxlen: approximate number of events kept per account.
        dedupe_ttl_s: how long a dedupe key is remembered (seconds).
    """

    def __init__(
        self,
        client: aioredis.Redis,
        prefix: str,
        maxlen: int = 1000,
        dedupe_ttl_s: int = 7 * 86_400,
    ) -> None:
        self.r = client
        self.prefix = prefix
        self.maxlen = maxlen
        self.dedupe_ttl_s = dedupe_ttl_s
        self.channel = f"{prefix}:events:notify"
        self._publish = client.register_script(_PUBLISH_LUA)

    def key(self, account_id: str) -> str:
        return f"{self.prefix}:events:{{{account_id}}}"

    async def publish(
        self,
        account_id: str,
        type: str,
        *,
        table_id: str = "",
        game_id: str = "",
        title: str = "",
        seat: int = -1,
        version: int = 0,
        data: dict[str, Any] | None = None,
        dedupe: str = "",
        at_ms: int | None = None,
        moves: str | None = None,
    ) -> str | None:
        """Append one event to ``account_id``'s log and announce it to its readers (with
        ``moves``, a ``yourTurn``'s legal moves, "" = none current; None = not looked up: in
        the announcement only, not stored).

        Returns the event id, or None when ``dedupe`` was already published.
        """
        fields = {
            "type": type,
            "table_id": table_id,
            "game_id": game_id,
            "title": title,
            "seat": str(seat),
            "version": str(version),
            "at_ms": str(int(time.time() * 1000) if at_ms is None else at_ms),
            "data": json.dumps(data or {}, sort_keys=True, separators=(",", ":")),
        }
        stream = self.key(account_id)
        marker = f"{stream}:seen:{dedupe}" if dedupe else stream
        pairs = [x for kv in fields.items() for x in kv]
        message = json.dumps({"f": fields, "m": moves}, separators=(",", ":"))
        return await self._publish(
            keys=[stream, marker],
            args=[self.maxlen, self.dedupe_ttl_s, account_id, self.channel, message, *pairs],
        )

    async def after(self, account_id: str, after_id: str, count: int = 500) -> list[Event]:
        """The events after ``after_id`` (exclusive), oldest first, at most ``count``."""
        check_event_id(after_id)
        rows = await self.r.xrange(self.key(account_id), f"({after_id}", "+", count=count)
        return [Event.from_entry(i, f) for i, f in rows]

    async def opening(self, account_id: str) -> tuple[list[Event], str]:
        """What a stream opened without an event id starts with: the pending
        events and the id to follow on from (``0-0`` for an empty log)."""
        rows = await self.r.xrange(self.key(account_id), "-", "+")
        events = [Event.from_entry(i, f) for i, f in rows]
        return pending(events), (rows[-1][0] if rows else "0-0")


async def _review_ready(hot: HotTables, events: AccountEvents, fields: dict[str, str]) -> int:
    """``reviewReady`` (data: ``{"review": "/api/tables/{id}/review"}``) for every account
    seated at the reviewed table (resigned seats too), once per game."""
    game_id = fields["game_id"]
    table = await hot.by_game(game_id)
    if table is None:
        return 0
    sent = 0
    for seat, s in enumerate(table.seats):
        if s.account_id and not s.policy or (s.account_id and s.resigned):
            sent += bool(
                await events.publish(
                    s.account_id,
                    REVIEW_READY,
                    table_id=table.table_id,
                    game_id=game_id,
                    title=table.title,
                    seat=seat,
                    data={"review": f"/api/tables/{table.table_id}/review"},
                    dedupe=f"{REVIEW_READY}:{game_id}:{seat}",
                )
            )
    return sent


async def lifecycle_to_events(
    hot: HotTables, events: AccountEvents, fields: dict[str, str], moves_key=None
) -> int:
    """Lifecycle handler (consumer group ``lobby-events``): the account events
    one lifecycle entry calls for; returns how many were published.
    Idempotent: every event has a dedupe key (game, version, seat).

    ``moves_key`` (game id -> the key of its stored legal moves,
    :meth:`services.platform.gamelog.GameLog.moves_key`): each ``yourTurn``'s announcement
    carries the seat's moves when those stored are of the event's version (read with the
    table, in one round trip)."""
    kind = fields.get("type")
    if kind == REVIEW_READY_ENTRY:
        return await _review_ready(hot, events, fields)
    if kind not in ("game_created", "turn", "game_finished", "game_rewound"):
        return 0
    game_id = fields["game_id"]
    version = int(fields.get("version", 0))
    stored: dict[str, str] = {}
    if moves_key is not None and kind != "game_finished":
        table, stored = await hot.by_game_with_hash(game_id, moves_key(game_id))
    else:
        table = await hot.by_game(game_id)
    if table is None:  # not a lobby table (an imported game)
        return 0
    current = stored.get("version") == str(version)
    looked_up = moves_key is not None
    played = {
        i: s.account_id
        for i, s in enumerate(table.seats)
        if s.account_id and not s.policy and not s.resigned
    }
    common = {"table_id": table.table_id, "game_id": game_id, "title": table.title}
    sent = 0

    async def send(account_id: str, type: str, seat: int, dedupe: str, **extra: Any) -> None:
        nonlocal sent
        if await events.publish(account_id, type, seat=seat, dedupe=dedupe, **common, **extra):
            sent += 1

    if kind == "game_created":
        for seat, account_id in played.items():
            await send(account_id, GAME_START, seat, f"{GAME_START}:{game_id}")
    if kind == "game_finished":
        result = json.loads(fields.get("result") or "{}")
        for seat, account_id in played.items():
            await send(
                account_id,
                GAME_FINISH,
                seat,
                f"{GAME_FINISH}:{game_id}",
                version=version,
                data={"result": result},
            )
        return sent
    for seat in json.loads(fields.get("active") or "[]"):
        if seat in played:
            dedupe = f"{YOUR_TURN}:{game_id}:{version}:{seat}"
            if kind == "game_rewound":  # the same version again, after lost moves
                dedupe += f":rewound:{fields.get('lost_from', '')}"
            moves = (stored.get(str(seat), "") if current else "") if looked_up else None
            await send(played[seat], YOUR_TURN, seat, dedupe, version=version, moves=moves)
    return sent


class Waiter(asyncio.Event):
    """One open stream's wake-up (:meth:`EventHub.register`): set when its account gets an
    event, with the events announced since it was last taken (:meth:`take`)."""

    def __init__(self) -> None:
        super().__init__()
        self._pushed: list[Pushed] = []
        self._reread = False

    def push(self, item: Pushed | None) -> None:
        """An announced event (None: something may have been published unannounced: read)."""
        if item is None:
            self._reread = True
        else:
            self._pushed.append(item)
        self.set()

    def take(self) -> tuple[list[Pushed], bool]:
        """The events announced since the last take, and whether the stream must be read
        (a wake-up without an event: a resubscription, an older publisher)."""
        pushed, reread = self._pushed, self._reread
        self._pushed, self._reread = [], False
        return pushed, reread


class EventHub:
    """Wakes a process's event readers when their account gets an event, handing them the
    announced event: one pub/sub subscription (``P:events:notify``) for every open stream.

    Readers :meth:`register` a :class:`Waiter` per stream; :meth:`run` gives each message's
    event to the waiters of the account it names, and wakes every waiter once (re)subscribed,
    since messages sent meanwhile may have been missed.

    Args:
        client: ``redis.asyncio`` client.
        channel: the pub/sub channel.
        per_account: open streams one account may hold on this process
            (``event_streams_per_account``; None = no bound).
        max_streams: open streams of this process, all accounts together
            (``lobby_max_event_streams``; None = no bound).
    """

    def __init__(
        self,
        client: aioredis.Redis,
        channel: str,
        per_account: int | None = None,
        max_streams: int | None = None,
    ) -> None:
        self.r = client
        self.channel = channel
        self.per_account, self.max_streams = per_account, max_streams
        self._waiters: dict[str, set[Waiter]] = {}

    def register(self, account_id: str) -> Waiter:
        """A waiter for one new stream of ``account_id`` (:meth:`unregister` it
        when the stream ends).

        Raises:
            QuotaExceeded: ``too_many_streams`` (the account holds
                ``per_account`` streams) or ``too_many_watchers`` (this
                process holds ``max_streams``); ``retry_after_s``, ``limit``.
        """
        if self.max_streams is not None and self.readers >= self.max_streams:
            raise QuotaExceeded(
                "too_many_watchers",
                f"this lobby serves at most {self.max_streams} event streams at once",
                RETRY_AFTER_S,
                str(self.max_streams),
            )
        held = len(self._waiters.get(account_id, ()))
        if self.per_account is not None and held >= self.per_account:
            raise QuotaExceeded(
                "too_many_streams",
                f"an account keeps at most {self.per_account} event streams open (end one first)",
                RETRY_AFTER_S,
                str(self.per_account),
            )
        waiter = Waiter()
        self._waiters.setdefault(account_id, set()).add(waiter)
        return waiter

    def unregister(self, account_id: str, waiter: Waiter) -> None:
        waiters = self._waiters.get(account_id)
        if waiters is not None:
            waiters.discard(waiter)
            if not waiters:
                del self._waiters[account_id]

    def wake(self, account_id: str | None = None, item: Pushed | None = None) -> None:
        """Give ``item`` (None: a wake-up to read the stream) to ``account_id``'s readers
        (None: everyone's)."""
        groups = self._waiters.values() if account_id is None else [self._waiters.get(account_id)]
        for waiters in groups:
            for waiter in waiters or ():
                waiter.push(item)

    def deliver(self, message: str) -> None:
        """One pub/sub message: the account id, the previous event id, the event id and
        ``{"f": fields, "m": moves}``, one per line; or an account id alone (an older
        publisher: a wake-up to read)."""
        account_id, _, rest = message.partition("\n")
        if account_id not in self._waiters:
            return
        prev, _, rest = rest.partition("\n")
        event_id, _, body = rest.partition("\n")
        item = None
        if body:
            data = json.loads(body)
            item = Pushed(prev, Event.from_entry(event_id, data["f"]), data.get("m"))
        self.wake(account_id, item)

    @property
    def readers(self) -> int:
        return sum(len(w) for w in self._waiters.values())

    async def run(self, stop: asyncio.Event) -> None:
        """Follow the channel until ``stop`` is set; raises what Redis raises
        (run it under a :class:`services.platform.supervise.Supervisor`)."""
        pubsub = await hotstore.pubsub(self.r)
        try:
            await pubsub.subscribe(self.channel)
            self.wake()
            while not stop.is_set():
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if message is not None:
                    data = message["data"]
                    self.deliver(data.decode() if isinstance(data, bytes) else str(data))
        finally:
            await pubsub.aclose()
