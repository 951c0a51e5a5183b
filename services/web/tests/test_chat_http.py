"""Table chat over HTTP and on the table page (issue 32, item 3): the routes and their
refusals (reason codes as over gRPC, nothing stored), the chat lines of the table's NDJSON
stream for their audience only, and the page's chat box escaping what people write."""

from __future__ import annotations

import json
import re

import httpx
from limits import parse

from services.web.tests.test_pages import _signed_up, _started

SCRIPT = "<script>alert(1)</script>"


async def _table(env):
    """A started 2-seat table of ann and ben (API tokens), and cat, who only watches."""
    ann, ben, cat = [await env.person(n) for n in ("ann", "ben", "cat")]
    r = await env.http.post(
        "/api/tables", json={"title": "railbarons", "num_players": 2}, headers=ann
    )
    assert r.status_code == 201, r.text
    tid = r.json()["table_id"]
    for seat, who in enumerate((ann, ben)):
        j = await env.http.post(f"/api/tables/{tid}/seats/{seat}/join", headers=who)
        assert j.status_code == 200, j.text
    s = await env.http.post(f"/api/tables/{tid}/start", headers=ann)
    assert s.status_code == 200, s.text
    return tid, ann, ben, cat


def _refusal(r, status: int, code: str) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["code"] == code, body
    return body


def test_the_chat_routes_their_audiences_and_refusals(gateway_env):
    async def body(env):
        tid, ann, ben, cat = await _table(env)
        url = f"/api/tables/{tid}/chat"
        r = await env.http.post(url, json={"channel": "players", "text": SCRIPT}, headers=ann)
        assert r.status_code == 201, r.text
        sent = r.json()
        assert (sent["username"], sent["seat"], sent["text"]) == ("ann", 0, SCRIPT)
        got = await env.http.get(url, headers=ben)
        assert [m["text"] for m in got.json()["messages"]] == [SCRIPT]
        assert got.json()["channels"] == ["players"]
        # the spectator reads the spectators' channel only
        _refusal(
            await env.http.get(url, params={"channel": "players"}, headers=cat),
            403,
            "not_in_channel",
        )
        assert (await env.http.get(url, headers=cat)).json()["messages"] == []
        _refusal(await env.http.get(url), 401, "token_missing")
        stored = await env.lobby.redis.xlen(env.lobby.servicer.chat.log_key(tid))
        too_long = "x" * (env.lobby.settings.chat_max_length + 1)
        body = _refusal(
            await env.http.post(url, json={"channel": "players", "text": too_long}, headers=ann),
            400,
            "message_too_long",
        )
        assert body["details"]["max_length"] == str(env.lobby.settings.chat_max_length)
        _refusal(
            await env.http.post(url, json={"channel": "players", "text": "a\x00b"}, headers=ann),
            400,
            "bad_text",
        )
        raw = '{"channel": "players", "text": "half \\ud800 pair"}'
        r = await env.http.post(
            url, content=raw, headers={**ann, "Content-Type": "application/json"}
        )
        assert r.status_code == 400, r.text
        _refusal(
            await env.http.post(url, json={"channel": "players", "text": "hi"}, headers=cat),
            403,
            "not_in_channel",
        )
        _refusal(await env.http.get(url, params={"after": "zzz"}, headers=ann), 400, "bad_chat_id")
        _refusal(
            await env.http.post(
                "/api/tables/nosuch/chat", json={"channel": "players", "text": "x"}, headers=ann
            ),
            404,
            "unknown_table",
        )
        assert await env.lobby.redis.xlen(env.lobby.servicer.chat.log_key(tid)) == stored
        # mutes
        m = await env.http.post(f"{url}/mute", json={"username": "ann"}, headers=ben)
        assert m.status_code == 200 and m.json() == {"muted": ["ann"]}
        assert (await env.http.get(url, headers=ben)).json()["messages"] == []
        assert (await env.http.get(url, headers=ben)).json()["muted"] == ["ann"]
        _refusal(
            await env.http.post(f"{url}/mute", json={"username": "ben"}, headers=ben),
            400,
            "cannot_mute_self",
        )
        m = await env.http.post(
            f"{url}/mute", json={"username": "ann", "unmute": True}, headers=ben
        )
        assert m.json() == {"muted": []}

    gateway_env(body)


def test_the_rate_refusal_is_a_429_with_retry_after(gateway_env):
    async def body(env):
        tid, ann, _, _ = await _table(env)
        url = f"/api/tables/{tid}/chat"
        for i in range(2):
            r = await env.http.post(url, json={"channel": "players", "text": f"m{i}"}, headers=ann)
            assert r.status_code == 201, r.text
        r = await env.http.post(url, json={"channel": "players", "text": "m2"}, headers=ann)
        _refusal(r, 429, "chat_rate")
        assert int(r.headers["Retry-After"]) >= 1
        assert await env.lobby.redis.xlen(env.lobby.servicer.chat.log_key(tid)) == 2

    async def with_rate(env):  # the gateway harness's lobby has the default rate: 2 here
        env.lobby.servicer.chat_rates.rates["chat"] = parse("2/minute")
        await body(env)

    gateway_env(with_rate)


def test_the_table_stream_carries_the_chat_of_the_callers_channels(gateway_env):
    async def body(env):
        tid, ann, ben, cat = await _table(env)
        url = f"/api/tables/{tid}/chat"
        await env.http.post(url, json={"channel": "players", "text": "secret plan"}, headers=ann)
        await env.http.post(url, json={"channel": "spectators", "text": "hello"}, headers=cat)

        async def first_chat(headers) -> dict:
            async with env.http.stream(
                "GET", f"/api/tables/{tid}/stream", headers=headers
            ) as stream:
                async for line in stream.aiter_lines():
                    if line.strip() and json.loads(line)["type"] == "chat":
                        return json.loads(line)
            raise AssertionError("the stream ended without a chat line")

        # the chat is replayed in order: a players' message reaching cat would come first
        seen = await first_chat(cat)
        assert (seen["channel"], seen["username"], seen["text"]) == ("spectators", "cat", "hello")
        seen = await first_chat(ben)
        assert (seen["channel"], seen["text"]) == ("players", "secret plan")

    gateway_env(body)


def test_the_table_page_chat_box_escapes_what_people_write(gateway_env):
    async def body(env):
        async with _signed_up(env, "dora") as (http, csrf):
            table_id = await _started(env, http, csrf)
            box = await http.get(f"/tables/{table_id}/chat")
            assert box.status_code == 200
            assert 'name="channel" value="players"' in box.text
            r = await http.post(
                f"/tables/{table_id}/chat",
                data={"csrf": csrf, "channel": "players", "text": SCRIPT},
            )
            assert r.status_code == 200, r.text
            assert SCRIPT not in r.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
            page = await http.get(f"/tables/{table_id}")
            assert 'src="/static/chat.js"' in page.text and "<script>alert" not in page.text
            refused = await http.post(
                f"/tables/{table_id}/chat", data={"csrf": csrf, "channel": "players", "text": " "}
            )
            assert 'id="chat-error"' in refused.text and "empty_message" in refused.text
            assert len(re.findall(r'class="chatline', refused.text)) == 1  # nothing stored
            # a spectator's box: the spectators' channel, not the players' message
            async with _signed_up(env, "eddy") as (spectator, _):
                seen = await spectator.get(f"/tables/{table_id}/chat")
                assert 'name="channel" value="spectators"' in seen.text
                assert "alert(1)" not in seen.text
            # signed out: no chat at all
            async with httpx.AsyncClient(base_url=env.base_url, timeout=20) as anon:
                assert "Sign in to read" in (await anon.get(f"/tables/{table_id}/chat")).text

    gateway_env(body)


def test_the_chat_box_lists_the_latest_messages_past_one_answer(gateway_env):
    async def body(env):
        tid, _, _, cat = await _table(env)
        log = env.lobby.servicer.chat
        for i in range(230):  # more than one GetChat answer holds, written beside the rate
            await log.append(tid, "spectators", "acct", "cat", -1, f"line {i}")
        r = await env.http.get(f"/api/tables/{tid}/chat", headers=cat)
        assert len(r.json()["messages"]) == 200
        async with _signed_up(env, "fay") as (http, _):  # a spectator too
            box = (await http.get(f"/tables/{tid}/chat")).text
        shown = re.findall(r'<span class="text">([^<]*)</span>', box)
        assert shown == [f"line {i}" for i in range(130, 230)]

    gateway_env(body)
