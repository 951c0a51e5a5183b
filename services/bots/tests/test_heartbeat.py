"""Bot task heartbeats (services/bots/heartbeat.py) against a real Redis: a
running task's key stays alive past its TTL while it beats; a task that ends
leaves nothing; a task whose process died (no more beats) is claimed once,
by one dispatcher, and its turn enqueued again."""

from __future__ import annotations

import asyncio
import json
import time

import redis
import redis.asyncio as aioredis

from services.bots import heartbeat
from services.bots.dispatcher import Dispatcher
from services.bots.tests.test_dispatcher import RecordingCelery
from services.platform.settings import BotSettings

ARGS = ["railbarons", "g1", 1, 7, "random"]


def test_a_running_task_stays_alive_and_an_ended_one_leaves_nothing(redis_url, key_prefix):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    beats = heartbeat.TaskHeartbeats(client, key_prefix, ttl_s=0.3)
    beats.started("t1", ARGS)
    assert json.loads(client.hget(heartbeat.turns_key(key_prefix), "t1")) == ARGS
    time.sleep(0.9)  # three TTLs: only the beats keep it
    assert client.exists(heartbeat.alive_key(key_prefix, "t1"))
    assert asyncio.run(_dead(redis_url, key_prefix)) == []
    beats.ended("t1")
    assert not client.exists(heartbeat.turns_key(key_prefix))
    assert not client.exists(heartbeat.alive_key(key_prefix, "t1"))
    client.close()


async def _dead(redis_url, prefix):
    r = aioredis.from_url(redis_url, decode_responses=True)
    try:
        return await heartbeat.dead_turns(r, prefix)
    finally:
        await r.aclose()


def test_a_dead_tasks_turn_is_claimed_once_and_enqueued_again(redis_url, key_prefix):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    beats = heartbeat.TaskHeartbeats(client, key_prefix, ttl_s=0.2)
    beats.started("t1", ARGS)
    with beats._lock:  # the process "dies": no more beats, no end
        beats._running.clear()
    time.sleep(0.4)
    assert not client.exists(heartbeat.alive_key(key_prefix, "t1"))

    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        settings = BotSettings(redis_url=redis_url, key_prefix=key_prefix)
        one, two = RecordingCelery(), RecordingCelery()
        sent = await asyncio.gather(
            Dispatcher(settings, r, one).resume_dead_turns(),
            Dispatcher(settings, r, two).resume_dead_turns(),
        )
        await r.aclose()
        return sorted(sent), one.sent + two.sent

    sent, tasks = asyncio.run(go())
    assert sent == [0, 1]
    assert tasks == [("roundhouse.bots.play_turn", tuple(ARGS), f"{key_prefix}-bots")]
    assert not client.exists(heartbeat.turns_key(key_prefix))
    client.close()
