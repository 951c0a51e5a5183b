"""The game log on Redis Streams: the truth of every game.

A game is ``(title, rules version, options, seed, seats)`` plus its ordered
actions. Keys (``P`` = the ``key_prefix`` setting, ``G`` = the game id):

* ``P:game:G:meta``: JSON of the game's creation record (seed included: only
  the rules service reads it).
* ``P:game:G:log``: one stream entry per applied action, with the explicit
  stream id ``<version>-0``, fields ``version``, ``seat``, ``action``
  (canonical JSON), ``events`` (JSON list), ``active`` (JSON list of seats),
  ``finished`` (``0``/``1``), ``result`` (JSON, on the final entry), ``at``
  (ms since the epoch when it was appended) and ``clock`` (JSON of the clocks
  after it, timed games only: :meth:`services.clocks.clock.ClockState.to_json`).
* ``P:game:G:idem``: ``<seat>:<idempotency key>`` -> the first answer (JSON,
  with the fingerprint of the request it answered).
* ``P:game:G:moves``: the legal moves at the game's latest version, written by the rules
  service with each entry (so readers need not ask it): ``version``, ``active`` (JSON list)
  and, per active seat that its account plays, the seat's ``ListLegalActionsResponse``
  (base64 of the protobuf). Absent for a finished game (and for games stored before it).
* ``P:lifecycle``: one shared stream of cross-service events
  (``game_created``, ``turn``, ``game_finished``, ``game_rewound``), read by
  consumer groups.

Appending is one Lua script, so it is atomic: it returns the stored answer
for a known idempotency key, refuses a stale expected version (compare and
set on the last stream id), then appends the action entry, records the
answer, replaces the legal moves and appends the lifecycle event. Two writers can never
both append version N, and the stored moves are always those of the stream's last entry.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import WatchError

from services.common.engine import canonical_json

_APPEND_LUA = """
-- KEYS: log stream, idempotency hash, lifecycle stream, legal moves hash
-- ARGV: expected_version, idempotency key ('' = none), answer JSON,
--       lifecycle maxlen, n_entry_fields, n_moves_fields, entry field/value pairs...,
--       moves field/value pairs..., lifecycle field/value pairs...
if ARGV[2] ~= '' then
  local prev = redis.call('HGET', KEYS[2], ARGV[2])
  if prev then return {'duplicate', prev} end
end
local expected = tonumber(ARGV[1])
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local current = 0
if #last > 0 then
  current = tonumber(string.match(last[1][1], '^(%d+)-'))
end
if current ~= expected then return {'stale', tostring(current)} end
local n = tonumber(ARGV[5])
local m = tonumber(ARGV[6])
local entry = {}
for i = 7, 6 + n do entry[#entry + 1] = ARGV[i] end
redis.call('XADD', KEYS[1], tostring(expected + 1) .. '-0', unpack(entry))
if ARGV[2] ~= '' then redis.call('HSET', KEYS[2], ARGV[2], ARGV[3]) end
redis.call('DEL', KEYS[4])
if m > 0 then
  local moves = {}
  for i = 7 + n, 6 + n + m do moves[#moves + 1] = ARGV[i] end
  redis.call('HSET', KEYS[4], unpack(moves))
end
local life = {}
for i = 7 + n + m, #ARGV do life[#life + 1] = ARGV[i] end
if #life > 0 then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', unpack(life))
end
return {'ok', tostring(expected + 1)}
"""

_CREATE_LUA = """
-- KEYS: meta key, lifecycle stream, legal moves hash
-- ARGV: meta JSON, lifecycle maxlen, n_moves_fields, moves pairs..., lifecycle pairs...
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  local m = tonumber(ARGV[3])
  redis.call('DEL', KEYS[3])
  if m > 0 then
    local moves = {}
    for i = 4, 3 + m do moves[#moves + 1] = ARGV[i] end
    redis.call('HSET', KEYS[3], unpack(moves))
  end
  local life = {}
  for i = 4 + m, #ARGV do life[#life + 1] = ARGV[i] end
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', unpack(life))
  return 1
end
return 0
"""


_FORGET_LUA = """
-- KEYS: log stream, idempotency hash, legal moves hash; ARGV: none
-- After lost entries: set the stream's last id back to its last entry (an
-- XDEL keeps the old one, and XADD refuses ids at or below it), drop the
-- stored answers of moves the stream no longer holds and the stored legal
-- moves (the next entry writes them again), atomically.
redis.call('DEL', KEYS[3])
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local current = 0
if #last > 0 then
  current = tonumber(string.match(last[1][1], '^(%d+)-'))
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('XSETID', KEYS[1], tostring(current) .. '-0')
end
local all = redis.call('HGETALL', KEYS[2])
local dropped = 0
for i = 1, #all, 2 do
  local ok, answer = pcall(cjson.decode, all[i + 1])
  if ok and type(answer) == 'table' and tonumber(answer['version']) ~= nil
      and tonumber(answer['version']) > current then
    redis.call('HDEL', KEYS[2], all[i])
    dropped = dropped + 1
  end
end
return {current, dropped}
"""


class StreamRewound(Exception):
    """A game's stream lost entries a reader had seen (a failover to a
    lagging replica, a crash with ``appendfsync everysec``).

    Attributes: ``game_id``, ``seen_version`` (the version the reader had),
    ``version`` (the stream's version now, ``-1`` if unknown).
    """

    def __init__(self, game_id: str, seen_version: int, version: int = -1) -> None:
        super().__init__(f"game {game_id!r}: its stream lost entries after version {version}")
        self.game_id, self.seen_version, self.version = game_id, seen_version, version


@dataclasses.dataclass(frozen=True, slots=True)
class LogEntry:
    """One applied action as stored in a game's stream."""

    version: int
    seat: int
    action: str  # canonical JSON
    events: str  # JSON list
    active: tuple[int, ...]
    finished: bool
    result: str = ""  # JSON of the result on the final entry
    at_ms: int = 0  # when it was appended (ms since the epoch; 0 = stored before clocks)
    clock: str = ""  # JSON of the game's clocks after it (timed games)
    label: str = ""  # the action in words (Game.describe on the state before it)

    def fields(self) -> dict[str, str]:
        return {
            "version": str(self.version),
            "seat": str(self.seat),
            "action": self.action,
            "events": self.events,
            "active": json.dumps(list(self.active)),
            "finished": "1" if self.finished else "0",
            "result": self.result,
            "at": str(self.at_ms),
            "clock": self.clock,
            "label": self.label,
        }

    @classmethod
    def from_fields(cls, f: dict[str, str]) -> LogEntry:
        return cls(
            version=int(f["version"]),
            seat=int(f["seat"]),
            action=f["action"],
            events=f["events"],
            active=tuple(json.loads(f["active"])),
            finished=f["finished"] == "1",
            result=f.get("result", ""),
            at_ms=int(f.get("at", "0") or 0),
            clock=f.get("clock", ""),
            label=f.get("label", ""),
        )


@dataclasses.dataclass(frozen=True, slots=True)
class AppendResult:
    """Outcome of :meth:`GameLog.append`.

    ``status`` is ``"ok"`` (``version`` is the new version), ``"duplicate"``
    (``answer`` is the first answer for that idempotency key) or ``"stale"``
    (``version`` is the stream's actual version).
    """

    status: str
    version: int = 0
    answer: str = ""


class GameLog:
    """Async access to game logs and the lifecycle stream.

    Args:
        client: a ``redis.asyncio.Redis`` created with ``decode_responses=True``.
        prefix: the key prefix (``Settings.key_prefix``).
    """

    def __init__(self, client: aioredis.Redis, prefix: str, lifecycle_maxlen: int = 1_000_000):
        self.r = client
        self.prefix = prefix
        self.lifecycle_key = f"{prefix}:lifecycle"
        self.lifecycle_maxlen = lifecycle_maxlen
        self._append = client.register_script(_APPEND_LUA)
        self._create = client.register_script(_CREATE_LUA)
        self._forget = client.register_script(_FORGET_LUA)

    # ----------------------------------------------------------------- keys

    def meta_key(self, game_id: str) -> str:
        return f"{self.prefix}:game:{game_id}:meta"

    def log_key(self, game_id: str) -> str:
        return f"{self.prefix}:game:{game_id}:log"

    def idem_key(self, game_id: str) -> str:
        return f"{self.prefix}:game:{game_id}:idem"

    def moves_key(self, game_id: str) -> str:
        return f"{self.prefix}:game:{game_id}:moves"

    # ----------------------------------------------------------------- games

    async def create(
        self,
        game_id: str,
        meta: dict[str, Any],
        lifecycle: dict[str, Any],
        moves: dict[str, str] | None = None,
    ) -> bool:
        """Store a new game's creation record and its legal moves (``moves``: the hash fields,
        see the module docstring) and announce it on the lifecycle stream, atomically.
        Returns False (and changes nothing) if the id is taken."""
        life = [x for kv in _stringify(lifecycle).items() for x in kv]
        pairs = [x for kv in (moves or {}).items() for x in kv]
        ok = await self._create(
            keys=[self.meta_key(game_id), self.lifecycle_key, self.moves_key(game_id)],
            args=[canonical_json(meta), self.lifecycle_maxlen, len(pairs), *pairs, *life],
        )
        return bool(ok)

    async def create_with_log(
        self,
        game_id: str,
        meta: dict[str, Any],
        entries: list[LogEntry],
        lifecycle: list[dict[str, Any]],
    ) -> bool:
        """Store a whole game at once (an imported game): its creation record,
        every entry of its stream and its lifecycle events, in one transaction.
        Returns False (and changes nothing) if the id is taken."""
        meta_key = self.meta_key(game_id)
        log_key = self.log_key(game_id)
        async with self.r.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(meta_key, log_key)
                if await pipe.exists(meta_key) or await pipe.exists(log_key):
                    return False
                pipe.multi()
                pipe.set(meta_key, canonical_json(meta))
                for e in entries:
                    pipe.xadd(log_key, e.fields(), id=f"{e.version}-0")
                for event in lifecycle:
                    pipe.xadd(
                        self.lifecycle_key,
                        _stringify(event),
                        maxlen=self.lifecycle_maxlen,
                        approximate=True,
                    )
                await pipe.execute()
            except WatchError:
                return False
        return True

    async def record_bots(self, game_id: str, bots: dict[int, str]) -> bool:
        """Add ``bots`` (seat -> hosted policy) to the creation record of a game created
        before the record named its bots (a one-off backfill: the lobby's
        :func:`services.lobby.backfill.backfill_game_bots`). Changes nothing and returns
        False if the game has no record here or its record already has ``bots``; atomic
        against a concurrent writer of the record (WATCH: the loser changes nothing)."""
        key = self.meta_key(game_id)
        async with self.r.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(key)
                raw = await pipe.get(key)
                if raw is None:
                    return False
                meta = json.loads(raw)
                if "bots" in meta:
                    return False
                meta["bots"] = {str(seat): policy for seat, policy in sorted(bots.items())}
                pipe.multi()
                pipe.set(key, canonical_json(meta), keepttl=True)
                await pipe.execute()
            except WatchError:
                return False
        return True

    async def meta(self, game_id: str) -> dict[str, Any] | None:
        """The creation record, or None for an unknown game."""
        raw = await self.r.get(self.meta_key(game_id))
        return None if raw is None else json.loads(raw)

    async def entries(self, game_id: str, after_version: int = 0) -> list[LogEntry]:
        """Entries with version > ``after_version``, in order."""
        raw = await self.r.xrange(self.log_key(game_id), min=f"{after_version + 1}-0", max="+")
        return [LogEntry.from_fields(fields) for _, fields in raw]

    async def legal_moves(self, game_id: str, seat: int) -> tuple[int, list[int], str] | None:
        """The legal moves stored with the game's latest entry for ``seat``: ``(version,
        active seats, the seat's field)`` (the field "" when the rules service stored none for
        the seat: not active, or played by a hosted bot), or None when none are stored."""
        values = await self.r.hmget(self.moves_key(game_id), legal_moves_fields(seat))
        return parse_legal_moves(values)

    async def last_entry(self, game_id: str) -> LogEntry | None:
        """The newest entry of a game's stream (None before the first move)."""
        last = await self.r.xrevrange(self.log_key(game_id), count=1)
        return LogEntry.from_fields(last[0][1]) if last else None

    async def repair_after_loss(self, game_id: str) -> tuple[int, int]:
        """After a lost stream tail: set the stream's last id back to its last
        entry (so appends resume) and drop the stored answers of moves the
        stream no longer holds (so a retry of such a move is applied afresh).
        Returns ``(stream version, answers dropped)``."""
        current, dropped = await self._forget(
            keys=[self.log_key(game_id), self.idem_key(game_id), self.moves_key(game_id)]
        )
        return int(current), int(dropped)

    async def announce(self, event: dict[str, Any]) -> None:
        """Append one event to the lifecycle stream (trimmed like the others)."""
        await self.r.xadd(
            self.lifecycle_key, _stringify(event), maxlen=self.lifecycle_maxlen, approximate=True
        )

    async def answer(self, game_id: str, idempotency_key: str) -> str | None:
        """The stored first answer for an idempotency key, if any."""
        if not idempotency_key:
            return None
        return await self.r.hget(self.idem_key(game_id), idempotency_key)

    async def append(
        self,
        game_id: str,
        expected_version: int,
        entry: LogEntry,
        idempotency_key: str,
        answer: str,
        lifecycle: dict[str, Any] | None,
        moves: dict[str, str] | None = None,
    ) -> AppendResult:
        """Atomically append ``entry`` as version ``expected_version + 1`` with the legal
        moves after it (``moves``: the hash fields; None or empty = none stored) (see the
        module docstring)."""
        fields = [x for kv in entry.fields().items() for x in kv]
        pairs = [x for kv in (moves or {}).items() for x in kv]
        life = [x for kv in _stringify(lifecycle or {}).items() for x in kv]
        res = await self._append(
            keys=[
                self.log_key(game_id),
                self.idem_key(game_id),
                self.lifecycle_key,
                self.moves_key(game_id),
            ],
            args=[
                expected_version,
                idempotency_key or "",
                answer,
                self.lifecycle_maxlen,
                len(fields),
                len(pairs),
                *fields,
                *pairs,
                *life,
            ],
        )
        status = res[0]
        if status == "duplicate":
            return AppendResult("duplicate", answer=res[1])
        return AppendResult(status, version=int(res[1]))

    async def follow(
        self, game_id: str, after_version: int, block_ms: int = 2000
    ) -> AsyncIterator[LogEntry]:
        """Every entry after ``after_version``: the stored ones, then live ones
        as they are appended (blocking reads of ``block_ms``, which must stay
        below the client's socket timeout). Ends after the game's finished
        entry; for a game that never finishes it runs until the caller stops
        iterating (callers bound how many are open).

        Raises:
            StreamRewound: an entry already read (or the one at
                ``after_version``) vanished or changed: checked after every
                read, blocking or not (one more ``XRANGE`` of one entry).
        """
        last_id, version = f"{after_version}-0", after_version
        key = self.log_key(game_id)
        seen = await self._entry_fields(key, last_id) if after_version else None
        if after_version and seen is None:
            raise StreamRewound(game_id, after_version)
        while True:
            batch = await self.r.xread({key: last_id}, block=block_ms, count=500)
            # the entry we last sent must still be there, unchanged: entries
            # lost and written anew below it would never be read again
            if version and await self._entry_fields(key, last_id) != seen:
                raise StreamRewound(game_id, version)
            for stream_id, fields in batch[0][1] if batch else ():
                entry = LogEntry.from_fields(fields)
                last_id, version, seen = stream_id, entry.version, fields
                yield entry
                if entry.finished:
                    return

    async def _entry_fields(self, key: str, stream_id: str) -> dict[str, str] | None:
        found = await self.r.xrange(key, min=stream_id, max=stream_id)
        return found[0][1] if found else None


def legal_moves_fields(seat: int) -> list[str]:
    """The fields of ``P:game:G:moves`` to read for ``seat`` (``HMGET``)."""
    return ["version", "active", str(seat)]


def parse_legal_moves(values: list[str | None]) -> tuple[int, list[int], str] | None:
    """:meth:`GameLog.legal_moves` from the values of :func:`legal_moves_fields`."""
    version, active, field = values
    if version is None:
        return None
    return int(version), json.loads(active or "[]"), field or ""


def _stringify(d: dict[str, Any]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else canonical_json(v) for k, v in d.items()}
