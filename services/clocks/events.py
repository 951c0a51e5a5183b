"""Account events of the clocks (``clockLow``, ``timeout``) through a small
publisher interface.

The account event stream (``Lobby.StreamEvents``, built on another branch) had
not landed when this was written, so the keeper publishes through
:class:`AccountEvents`; :class:`RedisAccountEvents` appends each event to the
account's stream ``P:account:<id>:events`` (trimmed to ``maxlen``), which a
stream endpoint can read with ``XREAD``. Events (JSON fields)::

    {"type": "clockLow", "table_id", "game_id", "seat", "version", "remaining_ms", "at_ms"}
    {"type": "timeout", "table_id", "game_id", "seat", "version", "policy", "at_ms"}

Nothing hidden is in them: the seat's own clock, which every seat may see.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

import redis.asyncio as aioredis


class AccountEvents(Protocol):
    async def publish(self, account_id: str, event: dict[str, Any]) -> None: ...


class RedisAccountEvents:
    """Events appended to ``P:account:<account id>:events`` (a Redis stream)."""

    def __init__(self, client: aioredis.Redis, prefix: str, maxlen: int = 1000) -> None:
        self.r, self.prefix, self.maxlen = client, prefix, maxlen

    def key(self, account_id: str) -> str:
        return f"{self.prefix}:account:{account_id}:events"

    async def publish(self, account_id: str, event: dict[str, Any]) -> None:
        if not account_id:
            return
        await self.r.xadd(
            self.key(account_id),
            {"type": event["type"], "event": json.dumps(event, sort_keys=True)},
            maxlen=self.maxlen,
            approximate=True,
        )

    async def read(self, account_id: str) -> list[dict[str, Any]]:
        """Every stored event of an account, oldest first."""
        raw = await self.r.xrange(self.key(account_id))
        return [json.loads(f["event"]) for _, f in raw]
