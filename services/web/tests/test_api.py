"""The HTTP API end to end over real lobby and accounts servers: accounts and
tokens, a table with a person and a self-playing bot account, moves with
labels, views, the NDJSON table stream (first the full state, then one line
per move, keep-alives, a clean end) and the account event stream (pending
events on opening, yourTurn with the version, resuming after an event id)."""

from __future__ import annotations

import asyncio
import json

from services.accounts.tests.conftest import PASSWORD


def reader(response):
    """The lines of an NDJSON response, to read from in several steps."""
    if not hasattr(response, "_rh_lines"):
        response._rh_lines = response.aiter_lines()
    return response._rh_lines


async def lines(response, n: int | None = None, keepalives: list | None = None) -> list[dict]:
    """The next JSON lines of an NDJSON response (``n`` of them, or until it
    ends); empty keep-alive lines are counted into ``keepalives``."""
    out = []
    async for raw in reader(response):
        if not raw.strip():
            if keepalives is not None:
                keepalives.append(raw)
            continue
        out.append(json.loads(raw))
        if n is not None and len(out) == n:
            break
    return out


async def setup_table(env):
    """ada at seat 0, her self-playing bot account at seat 1, started."""
    ada = await env.person("ada")
    r = await env.http.post(
        "/api/bots", json={"username": "ada-bot", "password": PASSWORD}, headers=ada
    )
    assert r.status_code == 201, r.text
    assert (r.json()["kind"], r.json()["hosted_policy"]) == ("bot", "")
    r = await env.http.post("/api/bots/ada-bot/tokens", json={}, headers=ada)
    assert r.status_code == 201, r.text
    bot = {"Authorization": f"Bearer {r.json()['token']}"}
    r = await env.http.post(
        "/api/tables", json={"title": "railbarons", "num_players": 2, "options": {}}, headers=ada
    )
    assert r.status_code == 201, r.text
    table = r.json()
    assert table["status"] == "open" and table["table_id"]
    tid = table["table_id"]
    r = await env.http.post(f"/api/tables/{tid}/seats/0/join", headers=ada)
    assert r.status_code == 200, r.text
    seat_bot = {"account": "ada-bot"}
    r = await env.http.post(f"/api/tables/{tid}/seats/1/bot", json=seat_bot, headers=ada)
    assert r.status_code == 200, r.text
    assert [s["account"] for s in r.json()["seats"]] == ["ada", "ada-bot"]
    r = await env.http.post(f"/api/tables/{tid}/start", headers=ada)
    assert r.status_code == 200 and r.json()["status"] == "running", r.text
    return tid, {0: ada, 1: bot}


async def play_one(env, tid, players) -> dict:
    """The active seat's first legal move; the move's answer."""
    view = (await env.http.get(f"/api/tables/{tid}/view", headers=players[0])).json()
    (seat,) = view["active_seats"]
    moves = (await env.http.get(f"/api/tables/{tid}/moves", headers=players[seat])).json()
    assert moves["version"] == view["version"] and moves["moves"]
    r = await env.http.post(
        f"/api/tables/{tid}/moves",
        json={
            "action": moves["moves"][0]["action"],
            "expected_version": moves["version"],
            "idempotency_key": f"k{moves['version']}",
        },
        headers=players[seat],
    )
    assert r.status_code == 200, r.text
    assert r.json()["version"] == moves["version"] + 1
    assert not _integral_floats(r.json()["events"]), r.json()["events"]
    return r.json()


def _integral_floats(value) -> list:
    """Whole numbers sent as floats (``0.0``) anywhere in ``value``."""
    if isinstance(value, float):
        return [value] if value.is_integer() else []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [f for v in value for f in _integral_floats(v)]
    return []


def test_game_events_give_whole_numbers_as_integers():
    """Events travel as protobuf Structs (every number a double); the JSON
    gives them back as the engine wrote them."""
    from google.protobuf import struct_pb2

    from services.web.models import event_out

    e = struct_pb2.Struct()
    e.update(
        {"type": "coins", "seat": 0, "amount": 5, "share": 0.5, "path": [1, 2.5], "n": {"k": 3}}
    )
    out = event_out(e)
    assert out == {
        "type": "coins",
        "seat": 0,
        "amount": 5,
        "share": 0.5,
        "path": [1, 2.5],
        "n": {"k": 3},
    }
    assert type(out["seat"]) is int and type(out["path"][0]) is int and type(out["n"]["k"]) is int
    assert _integral_floats(out) == []


def test_accounts_tokens_and_whoami(gateway_env):
    async def body(env):
        ada = await env.person("ada", ("play",))
        r = await env.http.get("/api/account", headers=ada)
        assert r.status_code == 200
        assert (r.json()["username"], r.json()["kind"], r.json()["scopes"]) == (
            "ada",
            "human",
            ["play"],
        )
        r = await env.http.post(
            "/api/tokens", json={"username": "ada", "password": "wrong password", "scopes": []}
        )
        assert (r.status_code, r.json()["code"]) == (401, "bad_credentials")
        assert r.json()["details"]["grpc_status"] == "UNAUTHENTICATED"
        r = await env.http.post("/api/accounts", json={"username": "ADA", "password": PASSWORD})
        assert (r.status_code, r.json()["code"]) == (409, "username_taken")
        r = await env.http.get("/api/account", headers={"Authorization": "Bearer rh_nope"})
        assert (r.status_code, r.json()["code"]) == (401, "token_invalid")

    gateway_env(body)


def test_a_game_over_http_with_labelled_moves_views_and_streams(gateway_env):
    async def body(env):
        tid, players = await setup_table(env)
        ada = players[0]
        async with env.http.stream("GET", "/api/stream/events", headers=ada) as events:
            assert events.status_code == 200
            assert events.headers["content-type"].startswith("application/x-ndjson")
            opening = await lines(events, 2)
            assert [e["type"] for e in opening] == ["tableJoined", "gameStart"]
            # spectators' view without a token; ada's own with hers
            spectator = (await env.http.get(f"/api/tables/{tid}/view")).json()
            assert spectator["seat"] is None
            mine = (await env.http.get(f"/api/tables/{tid}/view", headers=ada)).json()
            assert mine["seat"] == 0 and mine["version"] == 0
            moves = (await env.http.get(f"/api/tables/{tid}/moves", headers=ada)).json()
            assert set(moves) == {"version", "moves"}
            for m in moves["moves"]:
                assert set(m) <= {"label", "action", "range"} and "type" in m["action"]
            async with env.http.stream("GET", f"/api/tables/{tid}/stream?from_version=0") as s:
                (full,) = await lines(s, 1)
                assert (full["type"], full["version"]) == ("state", 0)
                assert full["table"]["table_id"] == tid
                assert full["view"]["version"] == 0
                answers = [await play_one(env, tid, players) for _ in range(6)]
                streamed = await lines(s, 6)
            assert [m["version"] for m in streamed] == [1, 2, 3, 4, 5, 6]
            assert all(m["type"] == "move" and "label" in m for m in streamed)
            # ada hears of every turn that is hers, with the version to send
            mine = [a["version"] for a in answers if 0 in a["active_seats"]]
            if 0 in full["view"]["active_seats"]:  # her turn at the start (version 0)
                mine.insert(0, 0)
            turns = await lines(events, len(mine))
            assert [(t["type"], t["version"]) for t in turns] == [("yourTurn", v) for v in mine]
            last_id = turns[0]["id"]
        # resume after the first turn: the later ones, nothing lost in between
        async with env.http.stream(
            "GET", "/api/stream/events", headers={**ada, "Last-Event-ID": last_id}
        ) as again:
            resumed = await lines(again, len(mine) - 1)
        assert [t["id"] for t in resumed] == [t["id"] for t in turns[1:]]
        # resigning ends a Chicago Express game; the stream then ends by itself
        async with env.http.stream("GET", f"/api/tables/{tid}/stream", headers=players[1]) as s:
            (full,) = await lines(s, 1)
            assert full["view"]["seat"] == 1
            r = await env.http.post(f"/api/tables/{tid}/resign", headers=ada)
            assert r.status_code == 200, r.text
            rest = await lines(s)
        assert rest[-1]["finished"] and rest[-1]["result"]["end_reason"] == "resignation"
        result = (await env.http.get(f"/api/tables/{tid}/result")).json()
        assert result["end_reason"] == "resignation" and result["seed"]

    gateway_env(body)


def test_your_turn_carries_the_moves_on_a_stream_that_asks_for_them(gateway_env):
    """``/api/stream/events?moves=true``: each yourTurn still current carries the seat's
    moves as ``GET .../moves`` lists them, and a move played from them is accepted; a replayed
    turn that has passed carries none, and a stream that did not ask gets none."""

    async def body(env):
        tid, players = await setup_table(env)
        ada = players[0]
        async with (
            env.http.stream("GET", "/api/stream/events?moves=true", headers=ada) as events,
            env.http.stream("GET", "/api/stream/events", headers=ada) as plain,
        ):
            played = 0
            while played < 3:
                view = (await env.http.get(f"/api/tables/{tid}/view", headers=ada)).json()
                (seat,) = view["active_seats"]
                if seat == 1:
                    await play_one(env, tid, players)
                    continue
                (turn,) = await lines(events, 1)
                while (turn["type"], turn["version"]) != ("yourTurn", view["version"]):
                    (turn,) = await lines(events, 1)
                listed = (await env.http.get(f"/api/tables/{tid}/moves", headers=ada)).json()
                assert turn["moves"] == listed["moves"] and listed["moves"]
                r = await env.http.post(
                    f"/api/tables/{tid}/moves",
                    json={
                        "action": turn["moves"][-1]["action"],
                        "expected_version": view["version"],
                    },
                    headers=ada,
                )
                assert r.status_code == 200, r.text
                played += 1
            (plain_turn,) = [t for t in await lines(plain, 3) if t["type"] == "yourTurn"][:1]
            assert "moves" not in plain_turn
        async with env.http.stream(
            "GET", "/api/stream/events?moves=true&after=0-0", headers=ada
        ) as again:
            (old,) = [t for t in await lines(again, 3) if t["type"] == "yourTurn"][:1]
        assert old["version"] < view["version"] and "moves" not in old

    gateway_env(body)


def test_idle_streams_send_keepalive_lines(gateway_env):
    async def body(env):
        tid, players = await setup_table(env)
        keepalives: list = []
        async with env.http.stream("GET", f"/api/tables/{tid}/stream", headers=players[0]) as s:
            (full,) = await lines(s, 1)

            async def move_later():
                while len(keepalives) < 2:
                    await asyncio.sleep(0.05)
                await play_one(env, tid, players)

            mover = asyncio.create_task(move_later())
            (move,) = await lines(s, 1, keepalives)
            await mover
        assert len(keepalives) >= 2 and move["version"] == full["view"]["version"] + 1

    gateway_env(body, gateway_keepalive_s=0.2)
