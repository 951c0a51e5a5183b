"""The bot dispatcher: reads the lifecycle stream through its consumer group
and enqueues one Celery task per bot turn.

For each ``game_created`` or ``turn`` event it looks up the game's table (the
lobby's record) and enqueues ``play_turn`` for every active seat that is a
bot. It is idempotent on (game id, version, seat): a marker key remembers
what was enqueued, so a re-delivered event enqueues nothing twice (and a
duplicate that slipped through, e.g. after a crash between enqueueing and
writing the marker, is harmless: the task's submit is idempotent). Delivery,
acknowledgement and recovery of a crashed dispatcher's entries are
:func:`services.common.consumer.consume`'s job.

Run: ``python -m services.bots.dispatcher``.
"""

from __future__ import annotations

import asyncio
import json
import signal
import uuid

import redis.asyncio as aioredis
from celery import Celery
from prometheus_client import Counter

from services.bots.celery_app import app as celery_app
from services.bots.celery_app import bot_queue
from services.common.consumer import consume
from services.common.logging import configure_logging, get_logger
from services.common.settings import Settings, get_settings
from services.lobby.tables import TableRecord

log = get_logger("dispatcher")

ENQUEUED = Counter("roundhouse_bot_turns_enqueued_total", "Bot turns enqueued", ["title"])


class Dispatcher:
    """Turns lifecycle events into bot tasks.

    Args:
        settings: key prefix, Redis URL and consumer group.
        client: ``redis.asyncio`` client with ``decode_responses=True``.
        celery: the Celery app tasks are sent with.
    """

    def __init__(self, settings: Settings, client: aioredis.Redis, celery: Celery = celery_app):
        self.r = client
        self.celery = celery
        self.prefix = settings.key_prefix
        self.stream = f"{self.prefix}:lifecycle"
        self.group = settings.dispatcher_group
        self.consumer = f"dispatcher-{uuid.uuid4().hex[:8]}"
        self.queue = bot_queue(self.prefix)

    async def handle(self, fields: dict[str, str]) -> int:
        """Enqueue the bot turns one lifecycle event calls for; returns how many."""
        if fields.get("type") not in ("game_created", "turn"):
            return 0
        game_id = fields["game_id"]
        version = int(fields["version"])
        table_id = await self.r.get(f"{self.prefix}:game-table:{game_id}")
        if table_id is None:  # not a lobby table (e.g. an imported game)
            return 0
        raw = await self.r.get(f"{self.prefix}:table:{table_id}")
        if raw is None:
            return 0
        bots = TableRecord.from_json(raw).bot_seats()
        sent = 0
        for seat in json.loads(fields["active"]):
            policy = bots.get(seat)
            if policy is None:
                continue
            marker = f"{self.prefix}:dispatched:{game_id}:{version}:{seat}"
            if await self.r.exists(marker):
                continue
            self.celery.send_task(
                "roundhouse.bots.play_turn",
                args=[fields["title"], game_id, seat, version, policy],
                queue=self.queue,
            )
            await self.r.set(marker, 1, ex=24 * 3600)
            ENQUEUED.labels(fields["title"]).inc()
            sent += 1
        return sent

    async def run(self, stop: asyncio.Event) -> None:
        log.info("dispatching", stream=self.stream, group=self.group, queue=self.queue)
        await consume(self.r, self.stream, self.group, self.consumer, self.handle, stop=stop)
        log.info("dispatcher stopped")


async def serve() -> None:
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    if settings.metrics_port:
        from prometheus_client import start_http_server

        start_http_server(settings.metrics_port)
    client = aioredis.from_url(settings.redis_url, decode_responses=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await Dispatcher(settings, client).run(stop)
    finally:
        await client.aclose()


def main() -> None:
    asyncio.run(serve())


if __name__ == "__main__":
    main()
