"""Reading the lifecycle stream through a consumer group, reliably.

:func:`consume` is the loop every lifecycle consumer (the lobby's result
recorder, the bot dispatcher) runs:

* it first re-handles its own pending entries (delivered before a restart but
  never acknowledged; consumer names are stable, e.g. the pod name), then
  reads new ones;
* every ``claim_every_s`` it claims entries that another consumer of the group
  took but has not acknowledged for ``claim_idle_ms`` (that consumer crashed,
  or its handler failed), walking the whole pending list with the cursor, so
  no event is lost;
* an entry is acknowledged only after its handler returned; a handler that
  raises leaves it pending, to be retried by the claim; after
  ``max_attempts`` failures it is moved to the dead-letter stream
  ``<stream>:dead`` (with the group and the error) and acknowledged;
* a Redis failure does not end the loop: it logs, backs off (tenacity's
  exponential wait, capped) and carries on;
* a missing group (``NOGROUP``: Redis restarted empty, or the group was
  destroyed) is created again (from the start of the stream) and the loop
  carries on;
* with ``linger_ms``, after handling a batch that was not full it waits that
  long before reading again, so that under load one read (and one XACK)
  takes the entries of several moves instead of one each: a consumer that
  wakes for every move costs its process a few tenths of a millisecond of
  CPU per move, and the stream has every move of every game on it. An
  entry then waits at most ``linger_ms`` longer; consumers that act on a
  move at once (the account events, the bot dispatcher) linger little or not;
* handled entries are acknowledged together, one ``XACK`` every ``ACK_EVERY_S``
  at most (and as soon as a read finds nothing new, and when the loop ends),
  not one per batch: a round trip saved per batch, for entries left pending a
  tenth of a second longer (a crash in between hands them over again).

Handlers must therefore be idempotent (on game id and version).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis
import redis.exceptions
from prometheus_client import Counter as MetricCounter
from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

from services.common.logging import get_logger

log = get_logger("consumer")

FIRST_BACKOFF_S = 0.2
"""The first wait after a Redis failure (then doubling, at most 10 s)."""
READ_COUNT = 200
"""Entries one XREADGROUP takes at most."""
ACK_EVERY_S = 0.1
"""Handled entries wait at most this long for their XACK (seconds; see the module docstring)."""

Handler = Callable[[dict[str, str]], Awaitable[None]]

HANDLED = MetricCounter(
    "roundhouse_lifecycle_entries_total", "Lifecycle entries by outcome", ["group", "outcome"]
)


async def ensure_group(r: aioredis.Redis, stream: str, group: str) -> None:
    """Create ``group`` on ``stream`` (and the stream) if missing."""
    try:
        await r.xgroup_create(stream, group, id="0", mkstream=True)
    except redis.exceptions.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


class _Consumer:
    def __init__(
        self,
        r,
        stream,
        group,
        consumer,
        handle,
        block_ms,
        claim_idle_ms,
        claim_every_s,
        max_attempts,
        linger_ms=0,
    ):
        self.linger_s = linger_ms / 1000
        self.handled = HANDLED.labels(group, "handled")  # looked up once, counted per entry
        self.r, self.stream, self.group, self.consumer = r, stream, group, consumer
        self.handle = handle
        self.block_ms, self.claim_idle_ms = block_ms, claim_idle_ms
        self.claim_every_s, self.max_attempts = claim_every_s, max_attempts
        self.failures: Counter[str] = Counter()
        self.start = "0"  # own pending entries first
        self.claim_cursor = "0-0"
        self.next_claim = 0.0
        self.unacked: list[str] = []
        self.next_ack = 0.0

    async def step(self) -> None:
        if time.monotonic() >= self.next_claim:
            self.next_claim = time.monotonic() + self.claim_every_s
            cursor, claimed, _ = await self.r.xautoclaim(
                self.stream,
                self.group,
                self.consumer,
                self.claim_idle_ms,
                start_id=self.claim_cursor,
                count=100,
            )
            self.claim_cursor = cursor or "0-0"  # "0-0": the whole list was walked
            await self.handle_all(claimed)
        batch = await self.r.xreadgroup(
            self.group,
            self.consumer,
            {self.stream: self.start},
            count=READ_COUNT,
            block=self.block_ms,
        )
        entries = batch[0][1] if batch else []
        if not entries:
            await self.ack()  # nothing new to share the acknowledgement with
        if self.start != ">":  # paging once through our own pending entries
            if not entries:
                self.start = ">"
                return
            self.start = entries[-1][0]
        await self.handle_all(entries)
        if self.linger_s and 0 < len(entries) < READ_COUNT and self.start == ">":
            await self._linger()

    async def _linger(self) -> None:
        """Wait ``linger_s`` so that the next read takes a batch (a plain sleep: waiting on
        ``stop`` as well would start a task per wait; the loop looks at ``stop`` right after)."""
        await asyncio.sleep(self.linger_s)

    async def handle_all(self, entries) -> None:
        """Handle a batch in order, then acknowledge the handled (and trimmed, and
        dead-lettered) entries (:meth:`ack`, at most ``ACK_EVERY_S`` later); an entry
        whose handler failed stays pending for the claim. A crash before the XACK
        redelivers them: the handlers are idempotent (at-least-once delivery)."""
        done: list[str] = []
        for entry_id, fields in entries:
            if fields is None:  # trimmed away while pending
                done.append(entry_id)
                HANDLED.labels(self.group, "trimmed").inc()
                continue
            try:
                await self.handle(fields)
            except Exception as exc:  # noqa: BLE001 - left pending, retried by the claim
                self.failures[entry_id] += 1
                if self.failures[entry_id] < self.max_attempts:
                    log.exception(
                        "handler failed; entry left pending",
                        group=self.group,
                        entry_id=entry_id,
                        attempt=self.failures[entry_id],
                    )
                    HANDLED.labels(self.group, "failed").inc()
                    continue
                log.exception(
                    "handler keeps failing; entry dead-lettered",
                    group=self.group,
                    entry_id=entry_id,
                )
                await self.r.xadd(
                    f"{self.stream}:dead",
                    {**fields, "_group": self.group, "_entry": entry_id, "_error": repr(exc)[:500]},
                    maxlen=100_000,
                    approximate=True,
                )
                HANDLED.labels(self.group, "dead").inc()
            else:
                self.handled.inc()
            self.failures.pop(entry_id, None)
            done.append(entry_id)
        self.unacked += done
        if time.monotonic() >= self.next_ack:
            await self.ack()

    async def ack(self) -> None:
        """Acknowledge the handled entries not acknowledged yet (one XACK)."""
        self.next_ack = time.monotonic() + ACK_EVERY_S
        if self.unacked:
            done, self.unacked = self.unacked, []
            await self.r.xack(self.stream, self.group, *done)


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
    max_attempts: int = 5,
    stop: asyncio.Event | None = None,
    linger_ms: int = 0,
) -> None:
    """Run until ``stop`` is set (or forever), handling each entry of
    ``stream`` delivered to ``consumer`` of ``group`` (see the module docstring).

    Args:
        r: a client created with ``decode_responses=True``; ``block_ms`` must
            stay below its socket timeout.
        linger_ms: the wait after a batch that was not full (module docstring; 0 = none).
    """
    stop = stop or asyncio.Event()
    me = _Consumer(
        r,
        stream,
        group,
        consumer,
        handle,
        block_ms,
        claim_idle_ms,
        claim_every_s,
        max_attempts,
        linger_ms,
    )
    retrying = AsyncRetrying(
        retry=retry_if_exception_type(
            (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
        ),
        wait=wait_exponential(multiplier=FIRST_BACKOFF_S, max=10),
        before_sleep=lambda state: log.warning(
            "lifecycle stream unavailable; retrying",
            group=group,
            error=str(state.outcome.exception()),
            attempt=state.attempt_number,
        ),
    )
    await retrying(ensure_group, r, stream, group)
    while not stop.is_set():
        try:
            try:
                await me.step()  # the retrying wrapper only once Redis fails: it costs a step
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
                log.warning("lifecycle stream unavailable; retrying", group=group, error=str(exc))
                await asyncio.sleep(FIRST_BACKOFF_S)
                await retrying(me.step)
        except redis.exceptions.ResponseError as exc:
            # NOGROUP: no group (any more); UNBLOCKED: the stream was deleted
            # under a blocked read
            if not str(exc).startswith(("NOGROUP", "UNBLOCKED")):
                raise
            log.warning(
                "consumer group missing (Redis lost its data?); creating it again",
                group=group,
                stream=stream,
            )
            HANDLED.labels(group, "group_recreated").inc()
            await retrying(ensure_group, r, stream, group)
            me.start, me.claim_cursor, me.unacked = "0", "0-0", []
    try:
        await me.ack()  # what was handled before the stop
    except redis.exceptions.RedisError:  # left pending: handed over again, and idempotent
        log.warning("acknowledgements left pending at the stop", group=group)
