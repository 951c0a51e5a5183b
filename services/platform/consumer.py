"""Reading the lifecycle stream through a consumer group, reliably.

:func:`consume` is the loop every lifecycle consumer (the lobby's result
recorder, the bot dispatcher) runs, over every shard of the lifecycle stream
(``lifecycle_shards`` streams, :class:`services.platform.hotstore.KeySpace`): on
one Redis one ``XREADGROUP`` reads them all at once; on a Redis Cluster, where
a command's keys must share a hash slot, each shard has its own loop (its own
reads, claims and acknowledgements), all in the one task. Per shard:

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
* a Redis Cluster failing over (``CLUSTERDOWN``, ``TRYAGAIN``, a slot not
  covered) counts as Redis away;
* with ``linger_ms``, after handling a batch that was not full it waits that
  long before reading again, so that under load one read (and one XACK)
  takes the entries of several moves instead of one each: a consumer that
  wakes for every move costs its process a few tenths of a millisecond of
  CPU per move, and the stream has every move of every game on it. An
  entry then waits at most ``linger_ms`` longer; consumers that act on a
  move at once (the account events, the bot dispatcher) linger little or not;
* handled entries are acknowledged together, every ``ACK_EVERY_S`` at most
  (and as soon as a read finds nothing new, and when the loop ends), not
  after each batch: a round trip saved per batch, for entries left pending a
  tenth of a second longer (a crash in between hands them over again).

Handlers must therefore be idempotent (on game id and version).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence

import redis.asyncio as aioredis
import redis.exceptions
from prometheus_client import Counter as MetricCounter
from tenacity import AsyncRetrying, retry_if_exception, wait_exponential

from services.platform.hotstore import is_cluster, is_outage
from services.platform.logging import get_logger

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
        streams,
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
        self.r, self.streams, self.group, self.consumer = r, tuple(streams), group, consumer
        self.handle = handle
        self.block_ms, self.claim_idle_ms = block_ms, claim_idle_ms
        self.claim_every_s, self.max_attempts = claim_every_s, max_attempts
        self.failures: Counter[tuple[str, str]] = Counter()  # (stream, entry id) -> failures
        self.reset()
        self.next_claim = 0.0

    def reset(self) -> None:
        """Start again from our own pending entries, and walk the pending lists anew."""
        self.starts = dict.fromkeys(self.streams, "0")  # own pending entries first
        self.claim_cursors = dict.fromkeys(self.streams, "0-0")
        self.unacked: dict[str, list[str]] = {}  # stream -> handled, not acknowledged yet
        self.next_ack = 0.0

    async def step(self) -> None:
        if time.monotonic() >= self.next_claim:
            self.next_claim = time.monotonic() + self.claim_every_s
            for stream in self.streams:
                cursor, claimed, _ = await self.r.xautoclaim(
                    stream,
                    self.group,
                    self.consumer,
                    self.claim_idle_ms,
                    start_id=self.claim_cursors[stream],
                    count=100,
                )
                self.claim_cursors[stream] = cursor or "0-0"  # "0-0": the whole list was walked
                await self.handle_all([(stream, claimed)])
        batch = await self.r.xreadgroup(
            self.group, self.consumer, self.starts, count=READ_COUNT, block=self.block_ms
        )
        if not batch:
            await self.ack()  # nothing new to share the acknowledgement with
            return
        if isinstance(batch, dict):  # RESP3
            batch = list(batch.items())
        paging = full = False
        for stream, entries in batch:
            if self.starts[stream] != ">":  # paging once through our own pending entries
                self.starts[stream] = entries[-1][0] if entries else ">"
                paging = True
            full = full or len(entries) >= READ_COUNT
        await self.handle_all(batch)
        if self.linger_s and not (paging or full):
            await self._linger()

    async def _linger(self) -> None:
        """Wait ``linger_s`` so that the next read takes a batch (a plain sleep: waiting on
        ``stop`` as well would start a task per wait; the loop looks at ``stop`` right after)."""
        await asyncio.sleep(self.linger_s)

    async def handle_all(self, batch) -> None:
        """Handle a batch (``[(stream, entries)]``) in order, then acknowledge the handled
        (and trimmed, and dead-lettered) entries (:meth:`ack`, at most ``ACK_EVERY_S``
        later); an entry whose handler failed stays pending for the claim. A crash before
        the XACK redelivers them: the handlers are idempotent (at-least-once delivery)."""
        for stream, entries in batch:
            done = await self._handle(stream, entries)
            if done:
                self.unacked.setdefault(stream, []).extend(done)
        if time.monotonic() >= self.next_ack:
            await self.ack()

    async def ack(self) -> None:
        """Acknowledge the handled entries not acknowledged yet: one XACK per stream, in one
        round trip."""
        self.next_ack = time.monotonic() + ACK_EVERY_S
        acks, self.unacked = list(self.unacked.items()), {}
        if len(acks) == 1:  # one stream (one shard, or a cluster's loop of one): one XACK
            await self.r.xack(acks[0][0], self.group, *acks[0][1])
        elif acks:
            async with self.r.pipeline(transaction=False) as pipe:
                for stream, done in acks:
                    pipe.xack(stream, self.group, *done)
                await pipe.execute()

    async def _handle(self, stream: str, entries) -> list[str]:
        """Handle one stream's entries in order; returns the ids to acknowledge."""
        done: list[str] = []
        for entry_id, fields in entries:
            if fields is None:  # trimmed away while pending
                done.append(entry_id)
                HANDLED.labels(self.group, "trimmed").inc()
                continue
            try:
                await self.handle(fields)
            except Exception as exc:  # noqa: BLE001 - left pending, retried by the claim
                self.failures[stream, entry_id] += 1
                if self.failures[stream, entry_id] < self.max_attempts:
                    log.exception(
                        "handler failed; entry left pending",
                        group=self.group,
                        stream=stream,
                        entry_id=entry_id,
                        attempt=self.failures[stream, entry_id],
                    )
                    HANDLED.labels(self.group, "failed").inc()
                    continue
                log.exception(
                    "handler keeps failing; entry dead-lettered",
                    group=self.group,
                    stream=stream,
                    entry_id=entry_id,
                )
                await self.r.xadd(
                    f"{stream}:dead",
                    {**fields, "_group": self.group, "_entry": entry_id, "_error": repr(exc)[:500]},
                    maxlen=100_000,
                    approximate=True,
                )
                HANDLED.labels(self.group, "dead").inc()
            else:
                self.handled.inc()
            self.failures.pop((stream, entry_id), None)
            done.append(entry_id)
        return done


async def consume(
    r: aioredis.Redis,
    stream: str | Sequence[str],
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
    ``stream`` (one stream, or several: the lifecycle shards) delivered to
    ``consumer`` of ``group`` (see the module docstring).

    Args:
        r: a client (one Redis or a cluster) created with ``decode_responses=True``;
            ``block_ms`` must stay below its socket timeout.
        linger_ms: the wait after a batch that was not full (module docstring; 0 = none).
    """
    stop = stop or asyncio.Event()
    streams = (stream,) if isinstance(stream, str) else tuple(stream)
    parts = [(s,) for s in streams] if is_cluster(r) else [streams]  # a command, one slot
    consumers = [
        _Consumer(
            r,
            part,
            group,
            consumer,
            handle,
            block_ms,
            claim_idle_ms,
            claim_every_s,
            max_attempts,
            linger_ms,
        )
        for part in parts
    ]
    if len(consumers) == 1:
        await _loop(consumers[0], stop)
        return
    await r.initialize()  # type: ignore[attr-defined] # learn the cluster once, not in each loop
    async with asyncio.TaskGroup() as tasks:
        for me in consumers:
            tasks.create_task(_loop(me, stop))


async def _loop(me: _Consumer, stop: asyncio.Event) -> None:
    group = me.group
    retrying = AsyncRetrying(
        retry=retry_if_exception(is_outage),
        wait=wait_exponential(multiplier=FIRST_BACKOFF_S, max=10),
        before_sleep=lambda state: log.warning(
            "lifecycle stream unavailable; retrying",
            group=group,
            error=str(state.outcome.exception()),
            attempt=state.attempt_number,
        ),
    )
    for stream in me.streams:
        await retrying(ensure_group, me.r, stream, group)
    while not stop.is_set():
        try:
            try:
                await me.step()  # the retrying wrapper only once Redis fails: it costs a step
            except Exception as exc:
                if not is_outage(exc):
                    raise
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
                streams=list(me.streams),
            )
            HANDLED.labels(group, "group_recreated").inc()
            for stream in me.streams:
                await retrying(ensure_group, me.r, stream, group)
            me.reset()
    try:
        await me.ack()  # what was handled before the stop
    except redis.exceptions.RedisError:  # left pending: handed over again, and idempotent
        log.warning("acknowledgements left pending at the stop", group=group)
