"""The HTTP routes that mirror the gRPC calls the docs offer (issue 32, item 5): the caller's
bot accounts (``GET /api/bots``, ``PUT /api/bots/{name}/policy``), an account's card
(``GET /api/accounts/{name}``), the archive (``GET /api/games``, each game read back through its
table), reclaiming a seat; each refusal with its reason code, changing nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import grpc

from roundhouse.v1 import archive_pb2_grpc
from services.archive.archiver import Archiver
from services.archive.server import ArchiveServicer
from services.archive.store import ArchiveStore
from services.cli.launcher import free_port
from services.platform.db import create_engine
from services.platform.settings import ArchiveSettings


def test_bots_and_accounts(gateway_env):
    async def body(env):
        ada = await env.person("ada")
        bob = await env.person("bob")
        r = await env.http.get("/api/bots", headers=ada)
        assert r.status_code == 200 and r.json() == {"bots": []}
        for name in ("ada-b1", "ada-b2"):
            r = await env.http.post("/api/bots", json={"username": name}, headers=ada)
            assert r.status_code == 201, r.text
        r = await env.http.get("/api/bots", headers=ada)
        assert sorted(b["username"] for b in r.json()["bots"]) == ["ada-b1", "ada-b2"]
        assert all(b["kind"] == "bot" and b["hosted_policy"] == "" for b in r.json()["bots"])
        assert (await env.http.get("/api/bots", headers=bob)).json() == {"bots": []}
        r = await env.http.get("/api/bots")
        assert r.status_code == 401 and r.json()["code"] == "token_missing"
        # bind, refuse another's bot and an unknown policy, unbind
        r = await env.http.put(
            "/api/bots/ada-b1/policy", json={"hosted_policy": "greedy"}, headers=ada
        )
        assert r.status_code == 200 and r.json()["hosted_policy"] == "greedy", r.text
        r = await env.http.put(
            "/api/bots/ada-b1/policy", json={"hosted_policy": "random"}, headers=bob
        )
        assert (r.status_code, r.json()["code"]) == (403, "not_owner")
        r = await env.http.put(
            "/api/bots/ada-b1/policy", json={"hosted_policy": "nonsense"}, headers=ada
        )
        assert (r.status_code, r.json()["code"]) == (400, "unknown_policy")
        r = await env.http.get("/api/accounts/ADA-B1")
        assert r.status_code == 200 and r.json()["hosted_policy"] == "greedy"
        assert r.json()["bot_owner"] == "ada"
        r = await env.http.put("/api/bots/ada-b1/policy", json={"hosted_policy": ""}, headers=ada)
        assert r.status_code == 200 and r.json()["hosted_policy"] == ""
        r = await env.http.get("/api/accounts/nobody-here")
        assert (r.status_code, r.json()["code"]) == (404, "unknown_account")

    gateway_env(body)


def test_archived_games_listed_and_read_through_their_table(
    gateway_env, sqlite_database_url, redis_url, key_prefix
):
    port = free_port()

    async def body(env):
        ada = await env.person("ada", scopes=("play", "tables:write"))
        r = await env.http.post(
            "/api/tables", json={"title": "railbarons", "num_players": 3}, headers=ada
        )
        tid = r.json()["table_id"]
        await env.http.post(f"/api/tables/{tid}/seats/0/join", headers=ada)
        for seat in (1, 2):
            r = await env.http.post(
                f"/api/tables/{tid}/seats/{seat}/bot", json={"policy": "random"}, headers=ada
            )
            assert r.status_code == 200, r.text
        r = await env.http.post(f"/api/tables/{tid}/start", headers=ada)
        game_id = r.json()["game_id"]
        r = await env.http.post(f"/api/tables/{tid}/reclaim", headers=ada)
        # no bot plays ada's seat (and the table's policy is not reclaim): nothing to take back
        assert (r.status_code, r.json()["code"]) == (400, "reclaim_not_allowed"), r.text
        r = await env.http.post(f"/api/tables/{tid}/reclaim")
        assert (r.status_code, r.json()["code"]) == (401, "token_missing")
        r = await env.http.post(f"/api/tables/{tid}/resign", headers=ada)  # ends the game
        assert r.status_code == 200, r.text
        final = (await env.http.get(f"/api/tables/{tid}/view")).json()["version"]
        assert final >= 1
        # a stream resumed from 0 opens with the state at 0, then replays every move after it
        async with env.http.stream("GET", f"/api/tables/{tid}/stream?from_version=0") as s:
            streamed = [json.loads(line) async for line in s.aiter_lines() if line.strip()]
        state, *moves = streamed
        assert (state["type"], state["version"], state["view"]) == ("state", 0, None)
        assert state["current_version"] == final
        assert [m["version"] for m in moves] == list(range(1, final + 1))
        # without from_version: the state at the end, with its view, and nothing to replay
        async with env.http.stream("GET", f"/api/tables/{tid}/stream") as s:
            streamed = [json.loads(line) async for line in s.aiter_lines() if line.strip()]
        assert [(x["type"], x["version"]) for x in streamed] == [("state", final)]
        assert streamed[0]["view"]["version"] == final and streamed[0]["finished"]
        settings = ArchiveSettings(
            redis_url=redis_url, key_prefix=key_prefix, database_url=sqlite_database_url
        )
        engine = create_engine(sqlite_database_url, settings)
        archiver = Archiver(settings, env.lobby.redis, engine)
        assert await archiver.archive(game_id) == "stored"
        server = grpc.aio.server()
        archive_pb2_grpc.add_ArchiveServicer_to_server(
            ArchiveServicer(ArchiveStore(engine)), server
        )
        server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        try:
            r = await env.http.get("/api/games?username=ADA")
            assert r.status_code == 200, r.text
            (game,) = r.json()["games"]
            assert (game["game_id"], game["table_id"], game["title"]) == (
                game_id,
                tid,
                "railbarons",
            )
            assert game["result"]["end_reason"] == "resignation"
            assert [s["name"] for s in game["seats"]][0] == "ada"
            assert "seed" not in r.text
            assert r.json()["next_page_token"] == ""
            result = (await env.http.get(f"/api/tables/{game['table_id']}/result")).json()
            assert result["end_reason"] == "resignation"
            for query, status, code in (
                ("page_size=-1", 400, "bad_page_size"),
                ("page_token=nope", 400, "bad_page_token"),
                ("title=chess", 400, "unknown_title"),
                ("username=ada&account_id=x", 400, "account_and_username"),
                ("username=nobody-here", 404, "unknown_account"),
            ):
                r = await env.http.get(f"/api/games?{query}")
                assert (r.status_code, r.json()["code"]) == (status, code), (query, r.text)
        finally:
            await server.stop(None)
            await engine.dispose()

    gateway_env(body, archive_address=f"127.0.0.1:{port}")


def test_no_client_example_imports_server_internals():
    """The examples a client copies (docs/api.md, the SDK's README) use the generated gRPC
    modules, the SDK, curl: never the server's own packages (``services.*``)."""
    root = Path(__file__).resolve().parents[3]
    for doc in (root / "docs" / "api.md", root / "clients" / "python" / "README.md"):
        blocks = re.findall(r"```[a-z]*(?: test)?\n(.*?)```", doc.read_text(), re.S)
        assert blocks, doc
        for block in blocks:
            assert not re.search(r"^\s*(from|import) services\b", block, re.M), (doc, block)


def test_a_rules_refusal_carries_its_numbers_in_details(gateway_env):
    """A bid under the minimum or over the bidder's cash: 400 with the rule's code, the rule in
    the message, and the numbers (``amount``, ``min_bid``, ``cash``) in ``details``; the game
    does not move."""

    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        r = await env.http.post(
            "/api/tables", json={"title": "railbarons", "num_players": 2}, headers=ada
        )
        tid = r.json()["table_id"]
        await env.http.post(f"/api/tables/{tid}/seats/0/join", headers=ada)
        await env.http.post(f"/api/tables/{tid}/seats/1/join", headers=bob)
        r = await env.http.post(f"/api/tables/{tid}/start", headers=ada)
        assert r.status_code == 200, r.text
        view = (await env.http.get(f"/api/tables/{tid}/view", headers=ada)).json()
        mover = (ada, bob)[view["active_seats"][0]]
        moves = (await env.http.get(f"/api/tables/{tid}/moves", headers=mover)).json()
        bids = [m["action"]["amount"] for m in moves["moves"] if m["action"]["type"] == "bid"]
        assert bids, moves  # the opening auction of the PRR share
        cash = view["view"]["players"][view["active_seats"][0]]["cash"]
        for amount, code, numbers in (
            (min(bids) - 1, "bid_below_minimum", {"amount": min(bids) - 1, "min_bid": min(bids)}),
            (cash + 1, "bid_above_cash", {"amount": cash + 1, "cash": cash}),
        ):
            r = await env.http.post(
                f"/api/tables/{tid}/moves",
                json={"action": {"type": "bid", "amount": amount}, "expected_version": 0},
                headers=mover,
            )
            assert (r.status_code, r.json()["code"]) == (400, code), r.text
            details = r.json()["details"]
            assert {k: int(details[k]) for k in numbers} == numbers, details
            assert str(numbers.get("min_bid", numbers.get("cash"))) in r.json()["message"]
        assert (await env.http.get(f"/api/tables/{tid}/view")).json()["version"] == 0

    gateway_env(body)
