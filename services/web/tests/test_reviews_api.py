"""``POST``/``GET /api/tables/{id}/review`` (issue 31): a finished table's review is asked for
once by a seated player, travels to the review queue, and reads back with one entry per move
once a worker (run here in the test) has stored it."""

from __future__ import annotations

import asyncio
import base64
import json

import redis

from services.bots.review import ReviewConfig
from services.bots.review_task import run_review
from services.platform.reviews import REVIEW_TASK, review_queue
from services.web.tests.test_api import play_one, setup_table


def test_a_review_is_asked_for_once_and_read_back(
    gateway_env, sqlite_database_url, redis_url, key_prefix
):
    async def body(env):
        tid, players = await setup_table(env)
        ada = players[0]
        r = await env.http.post(f"/api/tables/{tid}/review", headers=ada)
        assert r.status_code == 400 and r.json()["code"] == "not_finished", r.text
        for _ in range(3):
            await play_one(env, tid, players)
        r = await env.http.post(f"/api/tables/{tid}/resign", headers=ada)
        assert r.status_code == 200, r.text
        r = await env.http.get(f"/api/tables/{tid}/review")
        assert r.status_code == 404 and r.json()["code"] == "no_review", r.text
        r = await env.http.post(f"/api/tables/{tid}/review")
        assert r.status_code == 401, r.text
        eve = await env.person("eve")
        r = await env.http.post(f"/api/tables/{tid}/review", headers=eve)
        assert r.status_code == 403 and r.json()["code"] == "not_seated", r.text
        r = await env.http.post(f"/api/tables/{tid}/review", headers=ada)
        assert r.status_code == 202, r.text
        first = r.json()
        assert first["state"] == "queued" and first["progress"] == {"done": 0, "total": 3}
        r = await env.http.post(f"/api/tables/{tid}/review", headers=ada)
        assert r.status_code == 202 and r.json() == first
        # the seated bot's token has bot:play only: starting work needs tables:write
        r = await env.http.post(f"/api/tables/{tid}/review", headers=players[1])
        assert r.status_code == 403 and r.json()["code"] == "scope_missing", r.text
        queued = redis.Redis.from_url(redis_url).lrange(review_queue(key_prefix), 0, -1)
        assert len(queued) == 1  # the second request sent nothing
        message = json.loads(queued[0])
        assert message["headers"]["task"] == REVIEW_TASK
        args = json.loads(base64.b64decode(message["body"]))[0]
        outcome = await asyncio.to_thread(
            run_review,
            sqlite_database_url,
            args[0],
            args[1],
            args[2],
            int(args[3]),
            args[4],
            args[5],
            ReviewConfig(max_iterations=4),
        )
        assert outcome == "done"
        done = (await env.http.get(f"/api/tables/{tid}/review")).json()
        assert done["state"] == "done" and done["progress"] == {"done": 3, "total": 3}
        assert [e["version"] for e in done["entries"]] == [1, 2, 3]
        for e in done["entries"]:
            assert len(e["win_chance_before"]) == len(e["win_chance_after"]) == 2
            assert e["loss"] >= 0 and e["label"] and e["best_label"]
        # the replay page draws the chart; its points lead to the replay at their move
        page = await env.http.get(f"/tables/{tid}/replay")
        assert page.status_code == 200, page.text
        html = page.text
        assert '<svg id="review-chart"' in html and html.count('class="seat-line"') == 2
        assert f'href="/tables/{tid}/replay?at=2"' in html
        assert "Costliest moves" in html

    gateway_env(body)
