"""Table records of the lobby, kept in Redis.

Keys (``P`` = key prefix): ``P:table:T`` holds the table as JSON;
``P:game-table:G`` maps a game id to its table id (the bot dispatcher uses it
to find bot seats). Updates are optimistic transactions (WATCH/MULTI), so two
lobby replicas never lose each other's writes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import WatchError

OPEN, RUNNING, FINISHED = "open", "running", "finished"
EMPTY, PLAYER, BOT = "empty", "player", "bot"


@dataclasses.dataclass
class SeatRecord:
    """One seat: ``kind`` is empty, player or bot; ``token_hash`` is the
    SHA-256 of a player's seat token (the token itself is never stored)."""

    kind: str = EMPTY
    name: str = ""
    policy: str = ""
    token_hash: str = ""


@dataclasses.dataclass
class TableRecord:
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
        d = json.loads(text)
        d["seats"] = [SeatRecord(**s) for s in d["seats"]]
        return cls(**d)

    def bot_seats(self) -> dict[int, str]:
        """Seat index -> policy name, for the bot seats."""
        return {i: s.policy for i, s in enumerate(self.seats) if s.kind == BOT}


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class TableNotFound(KeyError):
    pass


class TableStore:
    """Async CRUD of table records."""

    def __init__(self, client: aioredis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix

    def key(self, table_id: str) -> str:
        return f"{self.prefix}:table:{table_id}"

    def game_key(self, game_id: str) -> str:
        return f"{self.prefix}:game-table:{game_id}"

    async def create(self, table: TableRecord) -> None:
        if not await self.r.set(self.key(table.table_id), table.to_json(), nx=True):
            raise KeyError(f"table {table.table_id} exists")

    async def get(self, table_id: str) -> TableRecord:
        raw = await self.r.get(self.key(table_id))
        if raw is None:
            raise TableNotFound(table_id)
        return TableRecord.from_json(raw)

    async def by_game(self, game_id: str) -> TableRecord | None:
        table_id = await self.r.get(self.game_key(game_id))
        if table_id is None:
            return None
        try:
            return await self.get(table_id)
        except TableNotFound:
            return None

    async def link_game(self, game_id: str, table_id: str) -> None:
        await self.r.set(self.game_key(game_id), table_id)

    async def update(self, table_id: str, change: Callable[[TableRecord], None]) -> TableRecord:
        """Read, apply ``change`` (which may raise to refuse), write back;
        retried if another writer got in between.

        Raises:
            TableNotFound: unknown table.
        """
        key = self.key(table_id)
        async with self.r.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    if raw is None:
                        raise TableNotFound(table_id)
                    table = TableRecord.from_json(raw)
                    change(table)
                    pipe.multi()
                    pipe.set(key, table.to_json())
                    await pipe.execute()
                    return table
                except WatchError:
                    continue
