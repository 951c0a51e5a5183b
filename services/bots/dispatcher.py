"""The bot dispatcher: reads the lifecycle stream through its consumer group
and enqueues one Celery task per bot turn.

For each ``game_created`` or ``turn`` event it looks up the game's table (the
lobby's record) and enqueues ``play_turn`` for every active seat that is a bot.
It is idempotent on (game id, version, seat): a marker key remembers what was
enqueued, so a re-delivered event enqueues nothing twice (and a duplicate that
slipped through is harmless: the task's submit is idempotent). Entries are
acknowledged after they are handled; on start the dispatcher first finishes
its own pending entries.

Run: ``python -m services.bots.dispatcher``.
"""

from __future__ import annotations

import json
import signal
import uuid

import redis

from services.bots.celery_app import app, bot_queue
from services.common.logging import configure_logging, get_logger
from services.common.settings import Settings, get_settings
from services.lobby.tables import TableRecord

log = get_logger("dispatcher")


class Dispatcher:
    def __init__(self, settings: Settings, client: redis.Redis | None = None) -> None:
        self.settings = settings
        self.r = client or redis.Redis.from_url(settings.redis_url, decode_responses=True)
        self.prefix = settings.key_prefix
        self.stream = f"{self.prefix}:lifecycle"
        self.group = settings.dispatcher_group
        self.consumer = f"dispatcher-{uuid.uuid4().hex[:8]}"
        self.queue = bot_queue(self.prefix)
        self.running = True

    def ensure_group(self) -> None:
        try:
            self.r.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def handle(self, fields: dict[str, str]) -> int:
        """Enqueue the bot turns one lifecycle event calls for; returns how many."""
        if fields.get("type") not in ("game_created", "turn"):
            return 0
        game_id = fields["game_id"]
        version = int(fields["version"])
        table_id = self.r.get(f"{self.prefix}:game-table:{game_id}")
        if table_id is None:
            return 0
        raw = self.r.get(f"{self.prefix}:table:{table_id}")
        if raw is None:
            return 0
        bots = TableRecord.from_json(raw).bot_seats()
        sent = 0
        for seat in json.loads(fields["active"]):
            policy = bots.get(seat)
            if policy is None:
                continue
            marker = f"{self.prefix}:dispatched:{game_id}:{version}:{seat}"
            if self.r.exists(marker):
                continue
            app.send_task(
                "roundhouse.bots.play_turn",
                args=[fields["title"], game_id, seat, version, policy],
                queue=self.queue,
            )
            self.r.set(marker, 1, ex=24 * 3600)
            sent += 1
        return sent

    def run(self) -> None:
        """Consume until stopped (SIGTERM/SIGINT)."""
        self.ensure_group()
        log.info("dispatching", stream=self.stream, group=self.group, queue=self.queue)
        start = "0"  # own pending entries first, then new ones
        while self.running:
            batch = self.r.xreadgroup(
                self.group, self.consumer, {self.stream: start}, count=200, block=1000
            )
            entries = batch[0][1] if batch else []
            if start == "0" and not entries:
                start = ">"
                continue
            for entry_id, fields in entries:
                self.handle(fields)
                self.r.xack(self.stream, self.group, entry_id)
        log.info("dispatcher stopped")

    def stop(self, *_: object) -> None:
        self.running = False


def main() -> None:
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    dispatcher = Dispatcher(settings)
    signal.signal(signal.SIGTERM, dispatcher.stop)
    signal.signal(signal.SIGINT, dispatcher.stop)
    dispatcher.run()


if __name__ == "__main__":
    main()
