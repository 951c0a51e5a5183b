"""The game review task (issue 31), on the review queue
(:func:`services.bots.celery_app.review_queue`), never the live bots' queue.

``review_table`` gets everything public about a finished game in its arguments (title,
seats, seed, options and the recorded moves, as the replay page has them: the seed of a
finished game is public) and reviews it with :func:`services.bots.review.review_game`, which
searches every decision from the moving seat's view only. It writes the progress every
:data:`PROGRESS_EVERY` moves and the entries at the end into ``game_reviews``
(:class:`services.platform.reviews.ReviewStore`); a review that fails is stored ``failed``
with the reason (a game the rules refuse cannot be reviewed by trying again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from services.bots.celery_app import app
from services.bots.review import ReviewConfig, review_game
from services.platform.db import create_engine, database_url
from services.platform.logging import get_logger
from services.platform.reviews import REVIEW_TASK, ReviewStore, announce_ready
from services.platform.settings import StoreSettings, get_settings
from services.rules.titles import get_game

log = get_logger("bots")

PROGRESS_EVERY = 10
"""Moves between two progress writes."""


def run_review(
    url: str,
    table_id: str,
    title: str,
    num_players: int,
    seed: int,
    options: dict[str, Any] | None,
    moves: list[list[Any]],
    config: ReviewConfig,
    announce: Callable[[], None] | None = None,
) -> str:
    """Review the game and store the result in the store at ``url`` (an async SQLAlchemy
    URL); once stored, call ``announce`` (the task: :func:`announce_ready`, whence the
    players' ``reviewReady`` event). Returns ``"done"`` or ``"failed"``."""
    loop = asyncio.new_event_loop()
    engine = create_engine(url)
    store = ReviewStore(engine)
    try:

        def progress(done: int, total: int) -> None:
            if done % PROGRESS_EVERY == 0 and done < total:
                loop.run_until_complete(store.progress(table_id, done, total))

        loop.run_until_complete(store.progress(table_id, 0, len(moves)))
        try:
            entries = review_game(
                get_game(title),
                num_players,
                seed,
                options,
                [(int(seat), action) for seat, action in moves],
                config,
                progress,
            )
        except Exception as exc:  # the rules refused a move, an unknown title...
            log.exception("review failed", table_id=table_id, title=title)
            loop.run_until_complete(store.fail(table_id, f"{type(exc).__name__}: {exc}"))
            return "failed"
        loop.run_until_complete(store.finish(table_id, [e.to_json() for e in entries]))
        if announce is not None:
            try:
                announce()
            except Exception:  # the review is stored: GET .../review has it anyway
                log.exception("reviewReady not announced", table_id=table_id)
        return "done"
    finally:
        loop.run_until_complete(engine.dispose())
        loop.close()


@app.task(name=REVIEW_TASK, acks_late=True, reject_on_worker_lost=True)
def review_table(
    table_id: str,
    title: str,
    num_players: int,
    seed: str,
    options: dict[str, Any] | None,
    moves: list[list[Any]],
    time_budget: float = 0.0,
    game_id: str = "",
) -> str:
    """Review ``table_id``'s finished game (``seed`` as decimal text: seeds are unsigned
    64-bit) at ``time_budget`` CPU seconds a decision (``0``: the title's default) and store
    it; with ``game_id``, announce it on the game's lifecycle shard. Returns ``"done"`` or
    ``"failed"`` (for logs)."""
    settings = get_settings(StoreSettings)

    def announce() -> None:
        announce_ready(
            settings.redis_url,
            settings.key_prefix,
            settings.lifecycle_shards,
            game_id,
            table_id,
            cluster=settings.redis_cluster,
        )

    return run_review(
        database_url(settings),
        table_id,
        title,
        num_players,
        int(seed),
        options,
        moves,
        ReviewConfig(time_budget=time_budget),
        announce if game_id else None,
    )
