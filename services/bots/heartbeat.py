"""Heartbeats of running bot tasks, so a dead worker's turns come back fast.

The 60 s stall sweep of the dispatcher finds any unplayed bot turn, but a
worker killed mid-turn should not cost a minute. So (``P`` = key prefix):

* **Worker side** (:class:`TaskHeartbeats`, hooked to Celery's
  ``task_prerun``/``task_postrun`` in ``services/bots/celery_app.py``): when a
  ``play_turn`` task starts, one transaction records it in the hash
  ``P:{bot-turns}`` (task id -> JSON of its arguments) and sets
  ``P:{bot-turns}:<task id>:alive`` with a TTL of ``bot_heartbeat_ttl_s``; a
  thread of the pool process refreshes that key every third of the TTL while
  the task runs; when the task ends (moved, stale, refused, retried, failed)
  both are removed, again in one transaction.
* **Dispatcher side** (:func:`dead_turns`): every ``dead_turn_check_s`` it
  reads ``P:{bot-turns}`` (as many entries as tasks in flight) and, for each
  entry whose heartbeat key expired (its process died: kill -9, OOM, a lost
  node), removes the entry (``HDEL`` answers 1 to one dispatcher only, so the
  turn is claimed once) and returns its arguments to be enqueued again.

* **Lost before it started** (Redis out of memory refused the broker's
  bookkeeping of a message it had handed out, or the heartbeat's own first
  write): ``started`` also sets ``P:{bot-turns}:<task id>:seen`` (kept
  ``SEEN_TTL_MS``, not removed when the task ends). The dispatcher remembers
  the tasks it sent; one not seen ``bot_pickup_s`` after it was sent, while
  the queue is empty or a task sent after it was seen (the queue is FIFO), is
  lost, and its turn is enqueued again (:func:`seen_tasks`,
  ``Dispatcher.resume_lost_tasks``).

The keys share the hash tag ``{bot-turns}``: one hash slot, so the transactions run
on a Redis Cluster too (a few small writes per bot move on one master).

Worst case after a kill: the TTL plus one check, plus the new task's own time;
after a lost task, ``bot_pickup_s`` plus one check. Moving twice is impossible
whatever happens: the task submits with its expected version and the key
``bot:<game>:<version>:<seat>``, so a twin of a task that did run is harmless.
"""

from __future__ import annotations

import json
import os
import threading

import redis
import redis.asyncio as aioredis

from services.platform.hotstore import sync_client, turns_key

TASK_NAME = "roundhouse.bots.play_turn"


SEEN_TTL_MS = 600_000
"""How long the mark that a task reached a worker is kept (ms)."""


def seen_key(prefix: str, task_id: str) -> str:
    """Set when a task starts on a worker (kept ``SEEN_TTL_MS``)."""
    return f"{prefix}:{{bot-turns}}:{task_id}:seen"


def alive_key(prefix: str, task_id: str) -> str:
    """The heartbeat key of one running task (expires ``ttl_s`` after its last beat)."""
    return f"{prefix}:{{bot-turns}}:{task_id}:alive"


class TaskHeartbeats:
    """Heartbeats of the tasks running in this process (one refresh thread).

    Args:
        client: a synchronous Redis client (created after the pool forked).
        prefix: the key prefix.
        ttl_s: lifetime of a heartbeat key (seconds); refreshed every ``ttl_s / 3``.
    """

    def __init__(self, client: redis.Redis | redis.RedisCluster, prefix: str, ttl_s: float) -> None:
        self.r, self.prefix, self.ttl_ms = client, prefix, max(1, int(ttl_s * 1000))
        self._running: set[str] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def started(self, task_id: str, args: list) -> None:
        """Record a task that starts (its ``args`` are what the dispatcher
        enqueues again if it dies)."""
        with self.r.pipeline(transaction=True) as pipe:
            pipe.hset(turns_key(self.prefix), task_id, json.dumps(list(args)))
            pipe.set(alive_key(self.prefix, task_id), "1", px=self.ttl_ms)
            pipe.set(seen_key(self.prefix, task_id), "1", px=SEEN_TTL_MS)
            pipe.execute()
        with self._lock:
            self._running.add(task_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._beat, daemon=True, name="heartbeat")
                self._thread.start()

    def ended(self, task_id: str) -> None:
        """Forget a task that ended, however it ended."""
        with self._lock:
            self._running.discard(task_id)
        with self.r.pipeline(transaction=True) as pipe:
            pipe.hdel(turns_key(self.prefix), task_id)
            pipe.delete(alive_key(self.prefix, task_id))
            pipe.execute()

    def _beat(self) -> None:
        while True:
            self._wake.wait(self.ttl_ms / 3000)
            with self._lock:
                running = list(self._running)
            if not running:
                continue
            try:
                with self.r.pipeline(transaction=False) as pipe:
                    for task_id in running:
                        pipe.pexpire(alive_key(self.prefix, task_id), self.ttl_ms)
                    pipe.execute()
            except redis.RedisError:  # Redis away: the next beat tries again
                pass


_beats: dict[int, TaskHeartbeats] = {}


def for_this_process(url: str, prefix: str, ttl_s: float, cluster: bool = False) -> TaskHeartbeats:
    """The heartbeats of this (pool) process, created on first use after the fork
    (``cluster``: ``url`` names a node of a Redis Cluster)."""
    beats = _beats.get(os.getpid())
    if beats is None:
        client = sync_client(url, cluster=cluster, socket_timeout=5, decode_responses=True)
        beats = _beats[os.getpid()] = TaskHeartbeats(client, prefix, ttl_s)
    return beats


async def dead_turns(r: aioredis.Redis, prefix: str) -> list[list]:
    """Claim the running tasks whose heartbeat expired: each is removed from
    ``P:bot-turns`` (by one caller only) and its args returned, to be enqueued
    again. ``r`` must decode responses."""
    running = await r.hgetall(turns_key(prefix))
    if not running:
        return []
    ids = list(running)
    async with r.pipeline(transaction=False) as pipe:
        for task_id in ids:
            pipe.exists(alive_key(prefix, task_id))
        alive = await pipe.execute()
    claimed = []
    for task_id, up in zip(ids, alive, strict=True):
        if not up and await r.hdel(turns_key(prefix), task_id):
            claimed.append(json.loads(running[task_id]))
    return claimed


async def seen_tasks(r: aioredis.Redis, prefix: str, task_ids: list[str]) -> set[str]:
    """The ones of ``task_ids`` that started on a worker (in the last
    ``SEEN_TTL_MS``), whether they run still or ended."""
    if not task_ids:
        return set()
    async with r.pipeline(transaction=False) as pipe:
        for task_id in task_ids:
            pipe.exists(seen_key(prefix, task_id))
        found = await pipe.execute()
    return {task_id for task_id, up in zip(task_ids, found, strict=True) if up}
