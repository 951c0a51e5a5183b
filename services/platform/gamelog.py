"""The game log on Redis Streams: the truth of every game.

A game is ``(title, rules version, options, seed, seats)`` plus its ordered
actions. Keys (``P`` = the ``key_prefix`` setting, ``G`` = the game id, ``T`` =
the hash tag of the game's lifecycle shard, so that all of a game's keys and its
shard stream lie in one hash slot of a Redis Cluster:
:class:`services.platform.hotstore.KeySpace`):

* ``P:game:{T}:G:meta``: JSON of the game's creation record (seed included: only
  the rules service reads it).
* ``P:game:{T}:G:log``: one stream entry per applied action, with the explicit
  stream id ``<version>-0``, fields ``version``, ``seat``, ``action``
  (canonical JSON), ``events`` (JSON list), ``active`` (JSON list of seats),
  ``finished`` (``0``/``1``), ``result`` (JSON, on the final entry), ``at``
  (ms since the epoch when it was appended) and ``clock`` (JSON of the clocks
  after it, timed games only: :meth:`services.match.clock.ClockState.to_json`).
* ``P:game:{T}:G:idem``: ``<seat>:<idempotency key>`` -> the first answer (JSON,
  with the fingerprint of the request it answered).
* ``P:game:{T}:G:moves``: the legal moves at the game's latest version, written by the
  rules service with each entry (so readers need not ask it): ``version``, ``active`` (JSON
  list) and, per active seat that its account plays, the seat's ``ListLegalActionsResponse``
  (base64 of the protobuf). Absent for a finished game (and for games stored before it).
* ``P:lifecycle:{T}``: the game's lifecycle shard, one of ``lifecycle_shards``
  streams of cross-service events (``game_created``, ``turn``,
  ``game_finished``, ``game_rewound``), each read by every consumer group.

Appending is one Lua script, so it is atomic: it returns the stored answer
for a known idempotency key, refuses a stale expected version (compare and
set on the last stream id), then appends the action entry, records the
answer, replaces the legal moves and appends the lifecycle event to the game's shard. Two
writers can never both append version N, and the stored moves are always those of the
stream's last entry.

With ``wait_replicas`` (``redis_wait_replicas``, 0 = off) a created game or an
appended entry is acknowledged only once ``WAIT`` saw it on that many replicas
within ``wait_timeout_ms``; otherwise :class:`services.platform.hotstore.NotReplicated`
is raised (the write is on the primary and may or may not survive a failover; a
retry with the same idempotency key gets the stored answer, WAITed again).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import WatchError

from services.kernel.engine import canonical_json
from services.platform.hotstore import (
    DEFAULT_LIFECYCLE_SHARDS,
    KeySpace,
    NotReplicated,
    eval_then_wait,
)

_APPEND_LUA = """
-- KEYS: log stream, idempotency hash, lifecycle shard stream, legal moves hash (one hash slot)
-- ARGV: expected_version, idempotency key ('' = none), answer JSON,
--       lifecycle maxlen, n_entry_fields, n_moves_fields, entry field/value pairs...,
--       moves field/value pairs..., lifecycle field/value pairs...
if ARGV[2] ~= '' then
  local prev = redis.call('HGET', KEYS[2], ARGV[2])
  if prev then
    -- written again, so that a WAIT after this script covers the first write too
    redis.call('HSET', KEYS[2], ARGV[2], prev)
    return {'duplicate', prev}
  end
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
-- KEYS: meta key, lifecycle shard stream, legal moves hash (one hash slot)
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
-- taken: written again, so that a WAIT after this script covers the first write too
redis.call('SET', KEYS[1], redis.call('GET', KEYS[1]), 'KEEPTTL')
return 0
"""


_ANSWER_LUA = """
-- KEYS: idempotency hash; ARGV: idempotency key
-- (with WAIT only) the stored answer, written again so that a WAIT after this script
-- covers the first write too
local prev = redis.call('HGET', KEYS[1], ARGV[1])
if prev then redis.call('HSET', KEYS[1], ARGV[1], prev) end
return prev
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
        client: a ``redis.asyncio`` client (one Redis or a cluster:
            :func:`services.platform.hotstore.async_client`) with ``decode_responses=True``.
        prefix: the key prefix (``CommonSettings.key_prefix``).
        lifecycle_maxlen: approximate length each lifecycle shard is trimmed to.
        shards: lifecycle shards (``CommonSettings.lifecycle_shards``; the same in every process).
        wait_replicas: replicas a created game or an appended entry must reach before it
            is acknowledged (``WAIT``; 0 = do not wait).
        wait_timeout_ms: how long ``WAIT`` waits for them.
    """

    def __init__(
        self,
        client: aioredis.Redis,
        prefix: str,
        lifecycle_maxlen: int = 1_000_000,
        shards: int = DEFAULT_LIFECYCLE_SHARDS,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 100,
    ):
        self.r = client
        self.prefix = prefix
        self.keys = KeySpace(prefix, shards)
        self.lifecycle_keys = self.keys.lifecycle_streams
        self.lifecycle_maxlen = lifecycle_maxlen
        self.wait_replicas, self.wait_timeout_ms = wait_replicas, wait_timeout_ms
        self._append = client.register_script(_APPEND_LUA)
        self._create = client.register_script(_CREATE_LUA)
        self._forget = client.register_script(_FORGET_LUA)
        self._answer = client.register_script(_ANSWER_LUA)

    @classmethod
    def for_settings(cls, client: aioredis.Redis, settings: Any) -> GameLog:
        """The game log as ``settings`` (:class:`services.platform.settings.CommonSettings`) say:
        prefix, trim length, shards and WAIT."""
        return cls(
            client,
            settings.key_prefix,
            settings.lifecycle_maxlen,
            settings.lifecycle_shards,
            settings.redis_wait_replicas,
            settings.redis_wait_timeout_ms,
        )

    # ----------------------------------------------------------------- keys

    def meta_key(self, game_id: str) -> str:
        return self.keys.meta(game_id)

    def log_key(self, game_id: str) -> str:
        return self.keys.log(game_id)

    def idem_key(self, game_id: str) -> str:
        return self.keys.idem(game_id)

    def moves_key(self, game_id: str) -> str:
        """The legal moves stored with the game's latest entry (the game's hash slot)."""
        return self.keys.game(game_id, "moves")

    def lifecycle_key(self, game_id: str) -> str:
        """The lifecycle shard stream of a game."""
        return self.keys.lifecycle(game_id)

    async def _run(self, script: Any, keys: list[str], args: list[Any], acked: Any) -> Any:
        """Run a registered script; with ``wait_replicas``, ``WAIT`` after it on its
        connection and raise :class:`NotReplicated` if an answer for which
        ``acked(answer)`` is true did not reach enough replicas."""
        if not self.wait_replicas:
            return await script(keys=keys, args=args)
        answer, replicas = await eval_then_wait(
            self.r, script.sha, script.script, keys, args, self.wait_replicas, self.wait_timeout_ms
        )
        if acked(answer) and replicas < self.wait_replicas:
            raise NotReplicated(replicas, self.wait_replicas, self.wait_timeout_ms)
        return answer

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
        ok = await self._run(
            self._create,
            [self.meta_key(game_id), self.lifecycle_key(game_id), self.moves_key(game_id)],
            [canonical_json(meta), self.lifecycle_maxlen, len(pairs), *pairs, *life],
            lambda _answer: True,  # taken: the first creation, written again
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
        every entry of its stream and its lifecycle events, in one transaction
        (not WAITed: an import lost in a failover is imported again).
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
                        self.lifecycle_key(game_id),
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
        """Append one event to the lifecycle shard of its ``game_id`` (trimmed like the others)."""
        await self.r.xadd(
            self.lifecycle_key(event["game_id"]),
            _stringify(event),
            maxlen=self.lifecycle_maxlen,
            approximate=True,
        )

    async def lifecycle_entries(self) -> list[tuple[str, dict[str, str]]]:
        """Every entry of every lifecycle shard as ``(entry id, fields)``, in the order of
        the ids (time): a full read, for tools and tests."""
        found = [e for key in self.lifecycle_keys for e in await self.r.xrange(key)]
        return sorted(found, key=lambda e: tuple(int(x) for x in e[0].split("-")))

    async def answer(self, game_id: str, idempotency_key: str) -> str | None:
        """The stored first answer for an idempotency key, if any.

        Raises:
            NotReplicated: ``wait_replicas`` set and the answer (which the caller is about
                to give again) did not reach that many replicas in time.
        """
        if not idempotency_key:
            return None
        if self.wait_replicas:
            return await self._run(
                self._answer,
                [self.idem_key(game_id)],
                [idempotency_key],
                lambda prev: prev is not None,
            )
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
        module docstring).

        Raises:
            NotReplicated: ``wait_replicas`` set, and the new entry (or the stored
                answer of a duplicate) did not reach that many replicas in time.
        """
        fields = [x for kv in entry.fields().items() for x in kv]
        pairs = [x for kv in (moves or {}).items() for x in kv]
        life = [x for kv in _stringify(lifecycle or {}).items() for x in kv]
        res = await self._run(
            self._append,
            [
                self.log_key(game_id),
                self.idem_key(game_id),
                self.lifecycle_key(game_id),
                self.moves_key(game_id),
            ],
            [
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
            lambda res: res[0] != "stale",  # a stale refusal acknowledges no move
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
    """The fields of ``P:game:{T}:G:moves`` to read for ``seat`` (``HMGET``)."""
    return ["version", "active", str(seat)]


def parse_legal_moves(values: list[str | None]) -> tuple[int, list[int], str] | None:
    """:meth:`GameLog.legal_moves` from the values of :func:`legal_moves_fields`."""
    version, active, field = values
    if version is None:
        return None
    return int(version), json.loads(active or "[]"), field or ""


def _stringify(d: dict[str, Any]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else canonical_json(v) for k, v in d.items()}
