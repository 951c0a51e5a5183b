"""The bot workers' broker transport: kombu's Redis transport, except that
Redis answering out of memory (``OutOfMemoryError``, ``maxmemory`` reached
with ``noeviction``) counts as a lost connection (issue 13, item 1).

kombu counts it a channel error (a ``ResponseError``), which Celery does not
recover from: the worker logged ``Unrecoverable error: OutOfMemoryError``
and exited, and stayed down after the memory was freed. As a connection
error Celery's consumer reconnects with back-off
(``broker_connection_max_retries=None``: for ever) and goes on consuming once
Redis takes writes again. A task taken off the queue whose bookkeeping write
was refused is not lost for good: its turn is enqueued again by the
dispatcher (heartbeat expiry, or the stall sweep).

Selected by ``broker_transport`` in :mod:`services.bots.celery_app`.
"""

from __future__ import annotations

import redis.exceptions
from kombu.transport import redis as kombu_redis


class Transport(kombu_redis.Transport):
    """kombu's Redis transport; OOM is a connection error."""

    connection_errors = (*kombu_redis.Transport.connection_errors, redis.exceptions.OutOfMemoryError)
