"""The hot index of started tables in Redis: the lobby's records, written by the
lobby and read by its move path, its event consumers and the clock keeper
(:mod:`services.clocks.keeper`). The bots never read them (an import-linter
contract): they learn their seats from the game's own records.

The durable truth of a table is the database (``services/lobby/store.py``);
this is a copy of what a started table's hot paths need, written after each
database commit that changes it (start, resignation, end), so moves need no
database round trip. A missing entry (Redis was flushed) is
rebuilt by the lobby from the database on its next use.

Keys (``P`` = key prefix):

* ``P:table:T:live``: the started table as JSON (:class:`LiveTable`);
* ``P:game-table:G``: game id -> table id (a lifecycle event's table);
* ``P:tables:running``: the set of running tables.

The three live in different hash slots (on a Redis Cluster, on different
nodes), so a write sends them in one pipeline without a transaction, in the
order a reader can live with: the table before the link that leads to it (a
reader of the link then finds the table), the link removed before the table.
A crash between two of them leaves what the next write of the table, or the
rebuild from the database, mends.
"""

from __future__ import annotations

import dataclasses
import json

import redis.asyncio as aioredis
from cachetools import LRUCache

RUNNING, FINISHED = "running", "finished"
GAME_LINKS_KEPT = 100_000
"""Game id -> table id links :meth:`HotTables.by_game` keeps in memory (about 100 bytes each)."""


@dataclasses.dataclass
class LiveSeat:
    """A seat of a started table: its account and, when the platform plays
    it, the hosted policy."""

    account_id: str = ""
    policy: str = ""
    resigned: bool = False


@dataclasses.dataclass
class LiveTable:
    """What the hot paths need of a started table."""

    table_id: str
    game_id: str
    title: str
    status: str
    seats: list[LiveSeat]
    clock: dict | None = None  # the clock settings (ClockSettings JSON), None = no clock

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LiveTable:
        d = json.loads(text)
        d["seats"] = [LiveSeat(**s) for s in d["seats"]]
        return cls(**d)

    def bot_seats(self) -> dict[int, str]:
        """Seat index -> hosted policy, for the seats the platform plays."""
        return {i: s.policy for i, s in enumerate(self.seats) if s.policy}


class HotTables:
    """Async access to the hot index.

    Args:
        client: ``redis.asyncio`` client with ``decode_responses=True``.
        prefix: the key prefix (``CommonSettings.key_prefix``).
    """

    def __init__(self, client: aioredis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix
        self.running_key = f"{prefix}:tables:running"
        self._table_of_game: LRUCache[str, str] = LRUCache(maxsize=GAME_LINKS_KEPT)

    def key(self, table_id: str) -> str:
        return f"{self.prefix}:table:{table_id}:live"

    def game_key(self, game_id: str) -> str:
        return f"{self.prefix}:game-table:{game_id}"

    async def put(self, table: LiveTable) -> None:
        """Write ``table`` and keep the game link and the running set in step
        (one round trip on one Redis; module docstring)."""
        async with self.r.pipeline(transaction=False) as pipe:
            pipe.set(self.key(table.table_id), table.to_json())
            pipe.set(self.game_key(table.game_id), table.table_id)
            if table.status == RUNNING:
                pipe.sadd(self.running_key, table.table_id)
            else:
                pipe.srem(self.running_key, table.table_id)
            await pipe.execute()

    async def drop(self, table_id: str, game_id: str) -> None:
        """Forget a table whose start failed."""
        self._table_of_game.pop(game_id, None)
        async with self.r.pipeline(transaction=False) as pipe:
            pipe.delete(self.game_key(game_id))
            pipe.delete(self.key(table_id))
            pipe.srem(self.running_key, table_id)
            await pipe.execute()

    async def get(self, table_id: str) -> LiveTable | None:
        raw = await self.r.get(self.key(table_id))
        return None if raw is None else LiveTable.from_json(raw)

    async def by_game(self, game_id: str) -> LiveTable | None:
        """The table playing ``game_id``, or None (e.g. an imported game, or a game whose
        start failed). The link is kept in memory once read (a game id is never given to
        another table), so the account events of a move read one key, not two; a table
        whose record names another game (its first start failed) is not this game's."""
        table_id = self._table_of_game.get(game_id)
        if table_id is None:
            table_id = await self.r.get(self.game_key(game_id))
            if table_id is None:
                return None
            self._table_of_game[game_id] = table_id
        live = await self.get(table_id)
        return live if live is not None and live.game_id == game_id else None

    async def by_game_with_hash(
        self, game_id: str, key: str
    ) -> tuple[LiveTable | None, dict[str, str]]:
        """:meth:`by_game`, and the hash at ``key`` (e.g. the game's stored legal moves), in one
        round trip once the game's table is known (two the first time)."""
        table_id = self._table_of_game.get(game_id)
        if table_id is None:
            return await self.by_game(game_id), await self.r.hgetall(key)
        async with self.r.pipeline(transaction=False) as pipe:
            pipe.get(self.key(table_id))
            pipe.hgetall(key)
            raw, found = await pipe.execute()
        live = None if raw is None else LiveTable.from_json(raw)
        return (live if live is not None and live.game_id == game_id else None), found

    async def get_with_fields(
        self, table_id: str, key: str, fields: list[str]
    ) -> tuple[LiveTable | None, list[str | None]]:
        """:meth:`get`, and ``fields`` of the hash at ``key`` (``HMGET``), in one round trip."""
        async with self.r.pipeline(transaction=False) as pipe:
            pipe.get(self.key(table_id))
            pipe.hmget(key, fields)
            raw, values = await pipe.execute()
        return (None if raw is None else LiveTable.from_json(raw)), values

    async def running(self) -> list[str]:
        """Ids of the running tables."""
        return sorted(await self.r.smembers(self.running_key))
