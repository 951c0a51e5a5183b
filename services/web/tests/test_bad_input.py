"""Bad input to the HTTP API: each is answered with the documented JSON error
(``{"code", "message", "details"}``, the HTTP status of its gRPC code) and
changes nothing in the store or in Redis."""

from __future__ import annotations

import asyncio

from services.web.tests.test_api import lines, setup_table


async def state(env) -> tuple:
    # left out: account events (":events:"), written by the lobby's lifecycle consumer after the
    # start whenever it gets to them (a refusal appends nothing to the lifecycle, so it makes
    # none), and the rate limiters' counters (":limits:"), which count refused calls too
    skip = (":gw:streams:", ":events:", ":limits:")
    keys = [k for k in await env.lobby.redis_keys() if not any(s in k for s in skip)]
    return await env.lobby.rows(), keys


async def refused(env, response_coro, status: int, code: str) -> dict:
    before = await state(env)
    r = await response_coro
    assert (r.status_code, r.json()["code"]) == (status, code), r.text
    body = r.json()
    assert set(body) == {"code", "message", "details"} and body["message"]
    assert await state(env) == before
    return body


def test_bodies_that_are_not_what_the_api_takes(gateway_env):
    async def body(env):
        tid, players = await setup_table(env)
        ada = players[0]
        url = f"/api/tables/{tid}/moves"
        move = {"action": {"type": "pass"}, "expected_version": 0}
        post = env.http.post
        await refused(
            env,
            post(url, content=b'{"action": {', headers={**ada, "Content-Type": "application/json"}),
            400,
            "bad_json",
        )
        await refused(env, post(url, json=[1, 2], headers=ada), 400, "bad_json")
        await refused(
            env,
            post(url, content=b"action=pass", headers={**ada, "Content-Type": "text/plain"}),
            415,
            "bad_content_type",
        )
        big = {"action": {"type": "pass", "pad": "x" * 70_000}, "expected_version": 0}
        body = await refused(env, post(url, json=big, headers=ada), 413, "body_too_large")
        assert body["details"]["max_bytes"] == str(64 * 1024)
        unknown = await refused(
            env, post(url, json={**move, "seat_token": "x"}, headers=ada), 400, "unknown_field"
        )
        assert unknown["details"]["field"] == "seat_token"
        wrong = await refused(
            env, post(url, json={**move, "expected_version": "0"}, headers=ada), 400, "bad_field"
        )
        assert wrong["details"]["field"] == "expected_version"
        await refused(
            env,
            post("/api/tables", json={"title": "railbarons", "num_players": "2"}, headers=ada),
            400,
            "bad_field",
        )
        await refused(env, post(url, json={"action": {}}, headers=ada), 400, "missing_field")
        await refused(env, env.http.get("/api/tables/x/seats"), 404, "no_route")

    gateway_env(body)


def test_moves_for_someone_elses_seat_and_without_a_seat(gateway_env):
    async def body(env):
        tid, players = await setup_table(env)
        bea = await env.person("bea")
        view = (await env.http.get(f"/api/tables/{tid}/view", headers=players[0])).json()
        (active,) = view["active_seats"]
        other = 1 - active
        moves = (await env.http.get(f"/api/tables/{tid}/moves", headers=players[active])).json()
        move = {"action": moves["moves"][0]["action"], "expected_version": view["version"]}
        url = f"/api/tables/{tid}/moves"
        denied = await refused(
            env,
            env.http.post(url, json={**move, "seat": active}, headers=players[other]),
            403,
            "not_your_seat",
        )
        assert denied["details"] == {"seat": str(active), "grpc_status": "PERMISSION_DENIED"}
        await refused(env, env.http.post(url, json=move, headers=bea), 403, "not_seated")
        await refused(env, env.http.post(url, json=move), 401, "token_missing")
        stale = await refused(
            env,
            env.http.post(url, json={**move, "expected_version": 7}, headers=players[active]),
            400,
            "future_version",
        )
        assert stale["details"]["current_version"] == str(view["version"])

    gateway_env(body)


def test_streams_from_versions_that_do_not_exist_and_stream_floods(gateway_env):
    async def body(env):
        tid, players = await setup_table(env)
        ada = players[0]
        future = await refused(
            env, env.http.get(f"/api/tables/{tid}/stream?from_version=5"), 400, "bad_version"
        )
        assert (future["details"]["current_version"], future["details"]["max_version"]) == (
            "0",
            "0",
        )
        await refused(
            env, env.http.get(f"/api/tables/{tid}/stream?from_version=-1"), 400, "bad_version"
        )
        await refused(
            env, env.http.get(f"/api/tables/{tid}/stream?from_version=x"), 400, "bad_field"
        )
        await refused(env, env.http.get("/api/tables/nope/stream"), 404, "unknown_table")
        bad_id = env.http.get("/api/stream/events?after=yesterday", headers=ada)
        await refused(env, bad_id, 400, "bad_event_id")
        await refused(env, env.http.get("/api/stream/events"), 401, "token_missing")
        # a flood from one token: 2 streams may be open at once, the third is refused
        async with (
            env.http.stream("GET", f"/api/tables/{tid}/stream", headers=ada) as one,
            env.http.stream("GET", "/api/stream/events", headers=ada) as two,
        ):
            assert (one.status_code, two.status_code) == (200, 200)
            await lines(one, 1)
            third = await env.http.get(f"/api/tables/{tid}/stream", headers=ada)
            assert (third.status_code, third.json()["code"]) == (429, "too_many_streams")
            assert int(third.headers["Retry-After"]) >= 1
            assert third.json()["details"]["max_streams"] == "2"
            # another token has its own allowance
            async with env.http.stream(
                "GET", f"/api/tables/{tid}/stream", headers=players[1]
            ) as other:
                assert other.status_code == 200
                assert (await lines(other, 1))[0]["type"] == "state"
        # closed streams give their slots back
        for _ in range(50):
            key = f"{env.lobby.settings.key_prefix}:gw:streams:*"
            if not [k async for k in env.lobby.redis.scan_iter(key)] or not await _any_member(
                env, key
            ):
                break
            await asyncio.sleep(0.05)
        async with env.http.stream("GET", "/api/stream/events", headers=ada) as again:
            assert again.status_code == 200

    gateway_env(body, gateway_streams_per_token=2)


async def _any_member(env, pattern: str) -> bool:
    async for key in env.lobby.redis.scan_iter(pattern):
        if await env.lobby.redis.zcard(key):
            return True
    return False


def test_a_refusal_whose_metadata_names_a_status_is_the_json_error(gateway_env):
    """ErrorInfo metadata ``status`` (the table's, of ``not_open``) was passed to
    the HTTP error as its keyword ``status``: the gateway answered 500 with a
    traceback (found by tests/fuzz/gateway.py)."""

    async def body(env):
        tid, players = await setup_table(env)
        join = env.http.post(f"/api/tables/{tid}/seats/1/join", headers=players[0])
        got = await refused(env, join, 400, "not_open")
        assert got["details"]["grpc_status"] == "FAILED_PRECONDITION"
        assert got["details"]["status"] == "running"  # the table's, as the lobby named it

    gateway_env(body)
