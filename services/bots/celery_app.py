"""The Celery app of the bot workers (broker: Redis by default, RabbitMQ in production; no
result backend).

Run a worker: ``celery -A services.bots.celery_app worker -Q <prefix>-bots``
(the demo and the tests start one for you). Delivery is at least once:
``acks_late`` with ``reject_on_worker_lost`` re-delivers a task whose worker
died; a duplicated or retried task cannot move twice because every move is
submitted with its expected version and an idempotency key derived from
(game id, version, seat).

Readiness: with ``ROUNDHOUSE_WORKER_READY_FILE`` set, the worker creates that
file once it consumes its queue and removes it when it shuts down.

Metrics: with ``ROUNDHOUSE_METRICS_PORT`` set, the worker serves Prometheus
metrics (tasks done by state and outcome, durations) on that port; see
:mod:`services.bots.worker_metrics`. A port already taken ends the worker
with status 2 and an error naming the port and the setting.

Heartbeats: while a ``play_turn`` task runs, its pool process keeps a
heartbeat key alive in Redis, so the dispatcher enqueues again, within a few
seconds, the turn of a worker that died (:mod:`services.bots.heartbeat`).

Logs: the worker does not install Celery's own logging; the ``setup_logging``
signal below configures :mod:`services.platform.logging` from the settings
(``ROUNDHOUSE_LOG_LEVEL``, ``ROUNDHOUSE_LOG_FORMAT``), so Celery's and kombu's
records come out through the same renderer as ours (JSON lines in production).
"""

from __future__ import annotations

from pathlib import Path

import redis
from celery import Celery
from celery.signals import (
    setup_logging,
    task_postrun,
    task_prerun,
    worker_init,
    worker_ready,
    worker_shutdown,
)
from kombu import Exchange, Queue

from services.bots import heartbeat, worker_metrics
from services.platform.logging import configure_logging, get_logger
from services.platform.reviews import REVIEW_TASK, review_queue
from services.platform.settings import BotSettings, BrokerNotSet, get_settings


def bot_queue(prefix: str) -> str:
    """Queue of the bot tasks for a deployment's key prefix."""
    return f"{prefix}-bots"


def is_amqp(broker_url: str) -> bool:
    """True for a RabbitMQ broker URL (``amqp://``, ``amqps://``, ``pyamqp://``)."""
    return broker_url.split("://", 1)[0] in {"amqp", "amqps", "pyamqp"}


def broker_conf(broker_url: str, queue: str) -> dict[str, object]:
    """The broker-specific part of the Celery configuration.

    RabbitMQ (the production broker, ``ROUNDHOUSE_BROKER_URL=amqp://...``): the bot queue is a
    quorum queue (replicated, durable; ``x-queue-type: quorum``), declared the same way by the
    dispatcher that sends and by the workers that consume, and the workers detect it and use
    per-consumer prefetch (quorum queues have no global QoS). A task whose worker dies is
    returned to the queue as soon as the worker's connection closes.

    Redis (the embedded default): a plain list; a task whose worker dies is delivered again after
    ``visibility_timeout`` (the dispatcher's heartbeats bring the turn back sooner).
    """
    if is_amqp(broker_url):
        return {
            "task_queues": [
                Queue(q, Exchange(q), routing_key=q, queue_arguments=QUORUM)
                for q in (queue, review_queue(queue.removesuffix("-bots")))
            ],
            "task_default_exchange": queue,
            "task_default_routing_key": queue,
            "worker_detect_quorum_queues": True,
            "broker_heartbeat": 30,
        }
    return {
        "broker_transport_options": {"visibility_timeout": 300},
        # Redis out of memory is a lost connection, and a refused ack frees its slot
        # (services/bots/broker.py)
        "broker_transport": "services.bots.broker:Transport",
    }


#: RabbitMQ queue arguments of the bot queue.
QUORUM = {"x-queue-type": "quorum"}


def make_app() -> Celery:
    settings = get_settings(BotSettings)
    broker = settings.celery_broker
    queue = bot_queue(settings.key_prefix)
    app = Celery(
        "roundhouse-bots",
        broker=broker,
        include=["services.bots.tasks", "services.bots.review_task"],
    )
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        worker_prefetch_multiplier=1,
        task_default_queue=queue,
        task_routes={
            REVIEW_TASK: {
                "queue": review_queue(settings.key_prefix),
                "routing_key": review_queue(settings.key_prefix),
                "exchange": review_queue(settings.key_prefix),
            }
        },
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,  # a lost broker (Redis full, say) is retried for ever
        worker_hijack_root_logger=False,
        task_serializer="json",
        accept_content=["json"],
        **broker_conf(broker, queue),
    )
    return app


@setup_logging.connect
def configure_worker_logging(**_: object) -> None:
    """Celery's ``setup_logging`` signal: with a receiver connected Celery
    configures no logging (no handlers, no stdout redirection); we install
    ours, with the settings' level and format (Celery's ``--loglevel`` is
    ignored). Runs in the worker's main process; forked pool children inherit
    the configuration (a spawned child runs it again)."""
    settings = get_settings(BotSettings)
    configure_logging(settings.log_level, settings.log_format)


@worker_init.connect
def serve_worker_metrics(**_: object) -> None:
    """Celery's ``worker_init`` (main process, before the pool forks): serve
    the worker's metrics if ``metrics_port`` is set, and freeze the start-up heap
    (:func:`~services.platform.server.enter_service_process`); a taken port, or a Redis
    Cluster without a broker of its own (``BotSettings.check_broker``), ends the
    worker (status 2) with the reason."""
    try:
        get_settings(BotSettings).check_broker()
    except BrokerNotSet as exc:
        get_logger("bots").error("cannot start", server="worker", error=str(exc))
        raise SystemExit(2) from None
    try:
        worker_metrics.start(get_settings(BotSettings))
    except RuntimeError as exc:  # MetricsPortInUse, or prometheus_client imported too early
        get_logger("bots").error("cannot start", server="worker", error=str(exc))
        raise SystemExit(2) from None
    # a long-running process: freeze its start-up heap before the pool forks, so that
    # neither it nor its children walk it in full collections (nor copy its pages)
    from services.platform.server import enter_service_process  # (after the metrics set-up:
    # it imports prometheus_client, whose multiprocess mode must be configured first)

    enter_service_process()


def _heartbeats() -> heartbeat.TaskHeartbeats:
    settings = get_settings(BotSettings)
    return heartbeat.for_this_process(
        settings.redis_url,
        settings.key_prefix,
        settings.bot_heartbeat_ttl_s,
        cluster=settings.redis_cluster,
    )


@task_prerun.connect
def _task_started(task_id: str, task, args=(), **_: object) -> None:
    worker_metrics.task_started(task_id)
    if task.name == heartbeat.TASK_NAME:
        try:
            _heartbeats().started(task_id, list(args))
        except redis.RedisError as exc:  # unseen: the dispatcher sends a twin (bot_pickup_s)
            get_logger("bots").warning("no heartbeat for bot task", task_id=task_id, error=str(exc))


@task_postrun.connect
def _task_done(task_id: str, task, retval=None, state=None, **_: object) -> None:
    worker_metrics.task_done(task_id, task.name, state, retval)
    if task.name == heartbeat.TASK_NAME:
        try:
            _heartbeats().ended(task_id)
        except redis.RedisError as exc:  # the entry stays; its expired heartbeat re-enqueues
            get_logger("bots").warning("heartbeat not removed", task_id=task_id, error=str(exc))


@worker_ready.connect
def mark_ready(**_: object) -> None:
    """Touch ``worker_ready_file`` (if set) once the worker consumes its queue:
    the readiness signal of the launcher and of a Kubernetes exec probe."""
    path = get_settings(BotSettings).worker_ready_file
    if path:
        Path(path).touch()


@worker_shutdown.connect
def mark_not_ready(**_: object) -> None:
    path = get_settings(BotSettings).worker_ready_file
    if path:
        Path(path).unlink(missing_ok=True)
    worker_metrics.stop()


app = make_app()
