"""Game reviews in the durable store (table ``game_reviews``, migration ``0009_reviews``), and
how a review task is named and sent: what the lobby (which sends and reads) and the bot
workers (which review and write) share, below both (the lobby does not import the bots).

One row per reviewed table (``table_id`` is the key, so a second request finds the first
review instead of starting another). ``state`` is ``queued`` (requested, the task sent),
``running`` (``done`` of ``total`` moves reviewed), ``done`` (``entries``: the JSON list of
:meth:`services.bots.review.ReviewEntry.to_json`) or ``failed`` (``error``: why). The bot
worker's review task writes progress and the result; the lobby creates the row and reads it.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, String, Text, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from services.platform.db import Base, UTCDateTime, session_factory, utcnow

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
STATES = (QUEUED, RUNNING, DONE, FAILED)

REVIEW_TASK = "roundhouse.bots.review_table"
"""The Celery name of the review task (:mod:`services.bots.review_task`)."""


def review_queue(prefix: str) -> str:
    """Queue of the game review tasks: their own, so a review (minutes of CPU) never delays a
    live bot move; a worker consumes it with ``-Q <prefix>-review``."""
    return f"{prefix}-review"


REVIEW_READY_ENTRY = "review_ready"
"""The lifecycle entry type a finished review appends to its game's lifecycle shard (fields
``type``, ``game_id``, ``table_id``); the lobby's event consumer turns it into a
``reviewReady`` account event for the table's players (``services.lobby.events``)."""


def announce_ready(
    redis_url: str, prefix: str, shards: int, game_id: str, table_id: str, cluster: bool = False
) -> None:
    """Append :data:`REVIEW_READY_ENTRY` for ``game_id`` to its lifecycle shard.

    Raises:
        redis.RedisError: Redis cannot be reached.
    """
    from services.platform.hotstore import KeySpace, sync_client

    r = sync_client(redis_url, cluster=cluster)
    try:
        r.xadd(
            KeySpace(prefix, shards).lifecycle(game_id),
            {"type": REVIEW_READY_ENTRY, "game_id": game_id, "table_id": table_id},
        )
    finally:
        r.close()


def send_review(broker_url: str, prefix: str, args: list[Any]) -> None:
    """Send one review task with ``args`` onto the bots' broker, on :func:`review_queue`
    (RabbitMQ: a quorum queue, declared as the bot workers declare it).

    Raises:
        kombu.exceptions.OperationalError: the broker cannot be reached.
    """
    from celery import Celery
    from kombu import Exchange, Queue

    queue = review_queue(prefix)
    app = Celery("roundhouse-reviews", broker=broker_url)
    if broker_url.split("://", 1)[0] in {"amqp", "amqps", "pyamqp"}:
        declared = Queue(
            queue, Exchange(queue), routing_key=queue, queue_arguments={"x-queue-type": "quorum"}
        )
        app.conf.task_queues = [declared]
    try:
        app.send_task(REVIEW_TASK, args, queue=queue, routing_key=queue, exchange=queue)
    finally:
        app.close()


class GameReview(Base):
    __tablename__ = "game_reviews"

    table_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    game_id: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(String(32))
    requested_by: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(8))
    done: Mapped[int] = mapped_column(Integer)
    total: Mapped[int] = mapped_column(Integer)
    entries: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


@dataclasses.dataclass(frozen=True, slots=True)
class Review:
    """A review's state as the API gives it (``entries`` only when ``done``)."""

    table_id: str
    game_id: str
    title: str
    state: str
    done: int
    total: int
    entries: list[dict[str, Any]] | None
    error: str | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "table_id": self.table_id,
            "state": self.state,
            "progress": {"done": self.done, "total": self.total},
        }
        if self.entries is not None:
            out["entries"] = self.entries
        if self.error:
            out["error"] = self.error
        return out


def _review(row: GameReview) -> Review:
    return Review(
        table_id=row.table_id,
        game_id=row.game_id,
        title=row.title,
        state=row.state,
        done=row.done,
        total=row.total,
        entries=json.loads(row.entries) if row.entries is not None else None,
        error=row.error,
    )


class ReviewStore:
    """Reads and writes ``game_reviews`` (an :class:`AsyncEngine` of the durable store, or
    the session factory of one)."""

    def __init__(self, engine: AsyncEngine | None = None, sessions: Any = None) -> None:
        self.sessions = sessions if sessions is not None else session_factory(engine)

    async def request(
        self, table_id: str, game_id: str, title: str, total: int, requested_by: str
    ) -> tuple[Review, bool]:
        """The table's review, created ``queued`` if there is none.

        Returns:
            ``(review, created)``: ``created`` is False when a review already existed (it is
            returned unchanged: a second request starts nothing).
        """
        now = utcnow()
        try:
            async with self.sessions.begin() as session:
                session.add(
                    GameReview(
                        table_id=table_id,
                        game_id=game_id,
                        title=title,
                        requested_by=requested_by,
                        state=QUEUED,
                        done=0,
                        total=total,
                        entries=None,
                        error=None,
                        requested_at=now,
                        updated_at=now,
                    )
                )
        except IntegrityError:  # a review exists (a concurrent twin request included)
            found = await self.get(table_id)
            assert found is not None
            return found, False
        found = await self.get(table_id)
        assert found is not None
        return found, True

    async def get(self, table_id: str) -> Review | None:
        """The table's review, or ``None``."""
        async with self.sessions() as session:
            row = (
                await session.execute(select(GameReview).where(GameReview.table_id == table_id))
            ).scalar_one_or_none()
            return _review(row) if row is not None else None

    async def progress(self, table_id: str, done: int, total: int) -> None:
        """Mark the review ``running`` with ``done`` of ``total`` moves reviewed."""
        await self._set(table_id, state=RUNNING, done=done, total=total)

    async def finish(self, table_id: str, entries: list[dict[str, Any]]) -> None:
        """Store the finished review's entries (state ``done``)."""
        await self._set(
            table_id, state=DONE, done=len(entries), total=len(entries), entries=json.dumps(entries)
        )

    async def fail(self, table_id: str, error: str) -> None:
        """Mark the review ``failed`` with the reason."""
        await self._set(table_id, state=FAILED, error=error[:2000])

    async def _set(self, table_id: str, **values: Any) -> None:
        async with self.sessions.begin() as session:
            await session.execute(
                update(GameReview)
                .where(GameReview.table_id == table_id)
                .values(updated_at=utcnow(), **values)
            )
