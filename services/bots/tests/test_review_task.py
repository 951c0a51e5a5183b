"""The review task and its store: a review runs on the review queue, stores its progress
and entries in ``game_reviews``, and a second request finds the first review."""

from __future__ import annotations

import asyncio

from services.bots.celery_app import app, bot_queue
from services.bots.review import ReviewConfig
from services.bots.review_task import run_review
from services.bots.tests.test_review import _greedy_moves
from services.platform.db import create_engine
from services.platform.reviews import (
    DONE,
    FAILED,
    QUEUED,
    REVIEW_TASK,
    ReviewStore,
    review_queue,
    send_review,
)
from services.platform.settings import CommonSettings, get_settings


def _store_call(url: str, call):
    async def go():
        engine = create_engine(url)
        try:
            return await call(ReviewStore(engine))
        finally:
            await engine.dispose()

    return asyncio.run(go())


def test_the_review_task_has_its_own_queue():
    prefix = get_settings(CommonSettings).key_prefix
    route = app.amqp.router.route({}, REVIEW_TASK)
    assert route["queue"].name == review_queue(prefix) != bot_queue(prefix)
    assert app.amqp.router.route({}, "roundhouse.bots.play_turn")["queue"].name == bot_queue(prefix)


def test_a_review_is_stored_once_and_done(database_url):
    _, moves = _greedy_moves("railbarons", 2, 11)
    review, created = _store_call(
        database_url, lambda s: s.request("T1", "G1", "railbarons", len(moves), "acc1")
    )
    assert created and review.state == QUEUED and review.entries is None
    again, created = _store_call(
        database_url, lambda s: s.request("T1", "G1", "railbarons", len(moves), "acc2")
    )
    assert not created and again == review
    outcome = run_review(
        database_url,
        "T1",
        "railbarons",
        2,
        11,
        None,
        [list(m) for m in moves],
        ReviewConfig(max_iterations=4),
    )
    assert outcome == "done"
    done = _store_call(database_url, lambda s: s.get("T1"))
    assert done.state == DONE
    assert done.done == done.total == len(moves)
    assert len(done.entries) == len(moves)
    assert done.entries[0]["seat"] == moves[0][0]
    assert set(done.to_json()) == {"table_id", "state", "progress", "entries"}


def test_a_game_the_rules_refuse_fails_with_the_reason(database_url):
    _store_call(database_url, lambda s: s.request("T2", "G2", "railbarons", 1, "acc1"))
    outcome = run_review(
        database_url,
        "T2",
        "railbarons",
        2,
        11,
        None,
        [[0, {"type": "nonsense"}]],
        ReviewConfig(max_iterations=2),
    )
    assert outcome == FAILED
    failed = _store_call(database_url, lambda s: s.get("T2"))
    assert failed.state == FAILED and failed.error
    assert _store_call(database_url, lambda s: s.get("nope")) is None


def test_a_sent_review_lands_on_the_review_queue_only(redis_url, key_prefix):
    """The lobby's sender puts one message on ``<prefix>-review`` of a Redis broker (the
    embedded default), none on the live bots' queue."""
    import json

    import redis

    send_review(redis_url, key_prefix, ["T9", "railbarons", 2, "11", None, []])
    r = redis.Redis.from_url(redis_url)
    assert r.llen(review_queue(key_prefix)) == 1
    assert r.llen(bot_queue(key_prefix)) == 0
    message = json.loads(r.lindex(review_queue(key_prefix), 0))
    assert message["headers"]["task"] == REVIEW_TASK


def test_a_stored_review_is_announced_on_its_games_lifecycle_shard(redis_url, key_prefix):
    import redis

    from services.platform.hotstore import KeySpace
    from services.platform.reviews import REVIEW_READY_ENTRY, announce_ready

    announce_ready(redis_url, key_prefix, 4, "railbarons-T9", "T9")
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    ((_, fields),) = r.xrange(KeySpace(key_prefix, 4).lifecycle("railbarons-T9"))
    assert fields == {"type": REVIEW_READY_ENTRY, "game_id": "railbarons-T9", "table_id": "T9"}
