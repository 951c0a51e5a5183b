"""Table records of the lobby, kept in Redis (read by the bot dispatcher too).

Keys (``P`` = key prefix):

* ``P:table:T``: the table as JSON (:class:`TableRecord`);
* ``P:game-table:G``: game id -> table id (the dispatcher finds bot seats by game);
* ``P:tables:running``: the set of running tables (the dispatcher's sweeper
  looks for stalled bot turns among them).

Updates are optimistic transactions (WATCH/MULTI through redis-py's
``transaction`` helper), so two lobby replicas never lose each other's writes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis

OPEN, RUNNING, FINISHED = "open", "running", "finished"
EMPTY, PLAYER, BOT = "empty", "player", "bot"


@dataclasses.dataclass
class SeatRecord:
    """One seat.

    Attributes:
        kind: ``"empty"``, ``"player"`` or ``"bot"``.
        name: the player's name, or ``"bot:<policy>"``.
        policy: a bot's policy name (``"random"``, ``"greedy"``).
        token_hash: SHA-256 hex of a player's seat token (the token itself is
            never stored).
    """

    kind: str = EMPTY
    name: str = ""
    policy: str = ""
    token_hash: str = ""


@dataclasses.dataclass
class TableRecord:
    """A table.

    Attributes:
        table_id, title, num_players: what was asked for.
        options_json: the title's options as JSON text (``""`` = defaults).
        seed: a seed fixed by the creator (tables of bots only), else None.
        seats: one :class:`SeatRecord` per seat.
        status: ``"open"``, ``"running"`` or ``"finished"``.
        game_id: the game on the title's rules service, once started.
        result: ``{"scores", "ranks", "end_reason"}`` once finished.
    """

    table_id: str
    title: str
    num_players: int
    options_json: str
    seed: int | None
    seats: list[SeatRecord]
    status: str = OPEN
    game_id: str = ""
    result: dict[str, Any] | None = None

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TableRecord:
        """Raises KeyError/TypeError/ValueError for text that is not a table record."""
        d = json.loads(text)
        d["seats"] = [SeatRecord(**s) for s in d["seats"]]
        return cls(**d)

    def bot_seats(self) -> dict[int, str]:
        """Seat index -> policy name, for the bot seats."""
        return {i: s.policy for i, s in enumerate(self.seats) if s.kind == BOT}

    def has_players(self) -> bool:
        return any(s.kind == PLAYER for s in self.seats)


def token_hash(token: str) -> str:
    """SHA-256 hex digest of a seat token."""
    return hashlib.sha256(token.encode()).hexdigest()


class TableNotFound(KeyError):
    """No table of that id."""


class TableExists(KeyError):
    """A table of that id exists already."""


class TableStore:
    """Async access to table records.

    Args:
        client: ``redis.asyncio`` client with ``decode_responses=True``.
        prefix: the key prefix (``Settings.key_prefix``).
    """

    def __init__(self, client: aioredis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix
        self.running_key = f"{prefix}:tables:running"

    def key(self, table_id: str) -> str:
        return f"{self.prefix}:table:{table_id}"

    def game_key(self, game_id: str) -> str:
        return f"{self.prefix}:game-table:{game_id}"

    async def create(self, table: TableRecord) -> None:
        """Raises :class:`TableExists`."""
        if not await self.r.set(self.key(table.table_id), table.to_json(), nx=True):
            raise TableExists(table.table_id)

    async def get(self, table_id: str) -> TableRecord:
        """Raises :class:`TableNotFound`."""
        raw = await self.r.get(self.key(table_id))
        if raw is None:
            raise TableNotFound(table_id)
        return TableRecord.from_json(raw)

    async def by_game(self, game_id: str) -> TableRecord | None:
        """The table playing ``game_id``, or None (e.g. an imported game)."""
        table_id = await self.r.get(self.game_key(game_id))
        if table_id is None:
            return None
        try:
            return await self.get(table_id)
        except TableNotFound:
            return None

    async def link_game(self, game_id: str, table_id: str) -> None:
        await self.r.set(self.game_key(game_id), table_id)

    async def running(self) -> list[str]:
        """Ids of the running tables."""
        return sorted(await self.r.smembers(self.running_key))

    async def update(self, table_id: str, change: Callable[[TableRecord], None]) -> TableRecord:
        """Read, apply ``change`` (which may raise to refuse), write back; retried
        if another writer got in between. Keeps the running set in step.

        Raises:
            TableNotFound: unknown table; whatever ``change`` raises.
        """
        key = self.key(table_id)
        updated: list[TableRecord] = []

        async def attempt(pipe) -> None:
            raw = await pipe.get(key)
            if raw is None:
                raise TableNotFound(table_id)
            table = TableRecord.from_json(raw)
            change(table)
            pipe.multi()
            pipe.set(key, table.to_json())
            if table.status == RUNNING:
                pipe.sadd(self.running_key, table_id)
            else:
                pipe.srem(self.running_key, table_id)
            updated[:] = [table]

        await self.r.transaction(attempt, key)
        return updated[0]
