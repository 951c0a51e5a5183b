"""Tournament events to the players' account event streams.

The events (``docs/tournaments.md``, "Events"), each a flat dict with ``type``,
``tournament_id`` and the fields below:

* ``round_started``: ``round``; per player also ``table`` (number), ``table_id``
  (the lobby's, "" until created) and ``seat`` (0-based), or ``bye: "1"``;
* ``table_finished``: ``round``, ``table``, ``table_id``, ``ranks`` (JSON list, seat order),
  ``void_reason`` ("" for a played table);
* ``standings_changed``: ``round`` (the standings after it are in ``GetStandings``).

:class:`EventPublisher` is the small interface the tournament service publishes through. In
production it is :class:`AccountEventLog`: the account event log of the lobby
(:mod:`services.lobby.events`, read by ``Lobby.StreamEvents`` and the gateway's
``GET /api/stream/events``), with the types ``roundStarted``, ``tableFinished`` and
``standingsChanged`` (the event's fields in ``data``, the lobby table id in ``table_id``) and a
dedupe key per event and account, so a result handled twice is told once.
:class:`RedisAccountEvents` (a plain stream per account) and :class:`NullPublisher`
(benchmarks) are the other implementations. Events carry only public tournament facts (no
seeds, no hidden information).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

import redis.asyncio as aioredis

from services.lobby.events import AccountEvents

EVENT_TYPES = {
    "round_started": "roundStarted",
    "table_finished": "tableFinished",
    "standings_changed": "standingsChanged",
}
"""The tournament's event types as the account event log names them."""


class EventPublisher(Protocol):
    async def publish(self, account_ids: Iterable[str], event: Mapping[str, str]) -> None:
        """Give ``event`` to each account's event stream. Best effort: a failure is
        logged by the caller, never undoes the tournament change it reports."""


class NullPublisher:
    async def publish(self, account_ids: Iterable[str], event: Mapping[str, str]) -> None:
        return None


class RecordingPublisher:
    """Keeps ``(account_id, event)`` pairs in :attr:`sent` (tests)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, str]]] = []

    async def publish(self, account_ids: Iterable[str], event: Mapping[str, str]) -> None:
        self.sent.extend((a, dict(event)) for a in account_ids)


class RedisAccountEvents:
    """Each event appended to ``<prefix>:account:<account_id>:events`` (one pipeline)."""

    def __init__(self, client: aioredis.Redis, prefix: str, maxlen: int = 1000) -> None:
        self.r, self.prefix, self.maxlen = client, prefix, maxlen

    def key(self, account_id: str) -> str:
        return f"{self.prefix}:account:{account_id}:events"

    async def publish(self, account_ids: Iterable[str], event: Mapping[str, str]) -> None:
        fields = {k: str(v) for k, v in event.items()}
        async with self.r.pipeline(transaction=False) as pipe:
            for a in account_ids:
                pipe.xadd(self.key(a), fields, maxlen=self.maxlen, approximate=True)
            await pipe.execute()


class AccountEventLog:
    """Tournament events in the lobby's account event log (see the module)."""

    def __init__(self, events: AccountEvents) -> None:
        self.events = events

    async def publish(self, account_ids: Iterable[str], event: Mapping[str, str]) -> None:
        kind = EVENT_TYPES.get(event.get("type", ""), event.get("type", ""))
        key = ":".join(
            str(event.get(k, "")) for k in ("type", "tournament_id", "round", "table", "bye")
        )
        for a in account_ids:
            await self.events.publish(
                a,
                kind,
                table_id=str(event.get("table_id", "")),
                data=dict(event),
                dedupe=key,
            )
