"""The bot workers' broker transport: kombu's Redis transport, made to live
through Redis answering out of memory (``OutOfMemoryError``: ``maxmemory``
reached with ``noeviction``; issue 13, item 1).

What went wrong with kombu's own transport, and what this one does:

* kombu counts OOM a channel error, which Celery does not recover from: the
  worker logged ``Unrecoverable error: OutOfMemoryError``, exited, and stayed
  down after the memory was freed. Here OOM is a connection error, so Celery's
  consumer reconnects with back-off (``broker_connection_max_retries=None``:
  for ever) and consumes again once Redis takes writes.
* an ack (or reject) refused by Redis left the message counted as unacked
  in the worker, whose only prefetch slot then stayed taken: the worker was
  up and never took another task. Here a refused ack is logged and the slot
  freed; the message stays in Redis's unacked set, so after the visibility
  timeout it is delivered once more, and its move is then stale (bot moves
  carry an expected version and an idempotency key), which is harmless.

* a channel closed after its connection (the worker losing Redis) built its
  Redis client from the cleared connection (``AttributeError`` about
  ``hostname``, celery/kombu#582) and the worker exited; :class:`Channel`
  keeps the connection's settings for that (issue 33, item 2).

A task taken off the queue whose bookkeeping write was refused is lost; its
turn is enqueued again by the dispatcher ``bot_pickup_s`` (5 s) after it was
sent (``Dispatcher.resume_lost_tasks``; the stall sweep, ``bot_stall_s``, is
the last resort). Selected by
``broker_transport`` in :mod:`services.bots.celery_app`.
"""

from __future__ import annotations

import redis.exceptions
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual

from services.platform.logging import get_logger

log = get_logger("bots.broker")


class QoS(kombu_redis.QoS):
    """kombu's Redis QoS; an ack or reject that Redis refuses for lack of
    memory frees the prefetch slot anyway."""

    def ack(self, delivery_tag):
        try:
            super().ack(delivery_tag)
        except redis.exceptions.OutOfMemoryError as exc:
            log.warning("ack refused by Redis; redelivered later", tag=delivery_tag, error=str(exc))
            virtual.QoS.ack(self, delivery_tag)

    def reject(self, delivery_tag, requeue=False):
        try:
            super().reject(delivery_tag, requeue=requeue)
        except redis.exceptions.OutOfMemoryError as exc:
            log.warning(
                "reject refused by Redis; redelivered later", tag=delivery_tag, error=str(exc)
            )
            virtual.QoS.ack(self, delivery_tag)


class Channel(kombu_redis.Channel):
    """kombu's Redis channel; it keeps its connection's settings for its own closing.

    When the worker loses Redis, Celery closes the connection: kombu clears the transport's
    ``client`` (the :class:`kombu.Connection` whose URL names Redis) and then closes the
    channels, and a channel's close restores its unacknowledged messages through a new
    Redis client built from ``transport.client``, which is None by then:
    ``AttributeError: 'NoneType' object has no attribute 'hostname'`` in ``_connparams``
    (the defect of celery/kombu#582, still in kombu 5.7.0). Celery counts an
    ``AttributeError`` unrecoverable and the worker exited. Here the channel builds that
    client from the settings it was opened with, so the messages are restored (or, Redis
    being down, the restore fails with a connection error, which kombu logs and Celery
    recovers from) and the worker reconnects.
    """

    QoS = QoS

    def __init__(self, connection, *args, **kwargs):
        self._conninfo = connection.client  # before kombu's __init__, which may connect
        super().__init__(connection, *args, **kwargs)

    def _connparams(self, asynchronous=False):
        transport = self.connection
        if transport.client is not None or self._conninfo is None:
            return super()._connparams(asynchronous=asynchronous)
        transport.client = self._conninfo  # for this one call: the transport stays closed
        try:
            return super()._connparams(asynchronous=asynchronous)
        finally:
            transport.client = None


class Transport(kombu_redis.Transport):
    """kombu's Redis transport; OOM is a connection error."""

    Channel = Channel
    connection_errors = (
        *kombu_redis.Transport.connection_errors,
        redis.exceptions.OutOfMemoryError,
    )
