"""Reading the lifecycle stream through a consumer group, reliably.

:func:`consume` is the loop every lifecycle consumer (the lobby's result
recorder, the bot dispatcher) runs:

* it first re-handles its own pending entries (delivered before a restart but
  never acknowledged), then reads new ones;
* every ``claim_every_s`` it claims entries that another consumer of the
  group took but has not acknowledged for ``claim_idle_ms`` (that consumer
  crashed, or its handler failed), so no event is lost;
* an entry is acknowledged only after its handler returned; a handler that
  raises leaves it pending, to be retried by the claim.

Handlers must therefore be idempotent (on game id and version).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

from services.common.logging import get_logger

log = get_logger("consumer")

Handler = Callable[[dict[str, str]], Awaitable[None]]


async def ensure_group(r: aioredis.Redis, stream: str, group: str) -> None:
    """Create ``group`` on ``stream`` (and the stream) if missing."""
    try:
        await r.xgroup_create(stream, group, id="0", mkstream=True)
    except aioredis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


async def consume(
    r: aioredis.Redis,
    stream: str,
    group: str,
    consumer: str,
    handle: Handler,
    *,
    block_ms: int = 1000,
    claim_idle_ms: int = 30_000,
    claim_every_s: float = 5.0,
    stop: asyncio.Event | None = None,
) -> None:
    """Run until ``stop`` is set (or forever), handling each entry once it is
    delivered to this consumer (see the module docstring).

    Args:
        r: a client created with ``decode_responses=True``; ``block_ms`` must
            stay below its socket timeout.
    """
    await ensure_group(r, stream, group)
    stop = stop or asyncio.Event()
    start = "0"  # own pending entries first
    next_claim = time.monotonic() + claim_every_s
    while not stop.is_set():
        if time.monotonic() >= next_claim:
            next_claim = time.monotonic() + claim_every_s
            _, claimed, _ = await r.xautoclaim(
                stream, group, consumer, claim_idle_ms, start_id="0-0", count=100
            )
            await _handle_all(r, stream, group, handle, claimed)
        batch = await r.xreadgroup(group, consumer, {stream: start}, count=200, block=block_ms)
        entries = batch[0][1] if batch else []
        if start != ">":  # paging once through our own pending entries
            if not entries:
                start = ">"
                continue
            start = entries[-1][0]
        await _handle_all(r, stream, group, handle, entries)


async def _handle_all(r, stream, group, handle: Handler, entries) -> None:
    for entry_id, fields in entries:
        if fields is None:  # trimmed away while pending
            await r.xack(stream, group, entry_id)
            continue
        try:
            await handle(fields)
        except Exception:  # noqa: BLE001 - left pending; retried by the claim
            log.exception(
                "handler failed; entry left pending", stream=stream, group=group, entry_id=entry_id
            )
            continue
        await r.xack(stream, group, entry_id)
