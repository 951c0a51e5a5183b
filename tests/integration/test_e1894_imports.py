"""Recorded 1894 games through the HTTP API against the real processes (gateway -> lobby ->
the e1894 rules service; the archiver): each of the four recorded games becomes a finished
table of the importing account, listed, with the recorded scores under the recorded players'
names, archived, and exported back to the same actions; an unfinished recording becomes a
running table the importer plays on; a refused recording is 422 naming the action and the rule
and stores nothing (no table, no stream, no archive row); the route's own body bound."""

from __future__ import annotations

import copy
import json
import time
import uuid
from pathlib import Path

import grpc
import httpx
import pytest
import redis

from roundhouse.v1 import archive_pb2, archive_pb2_grpc

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "e1894"
GAMES = sorted(FIXTURES.glob("*.json"))
PASSWORD = "import test password"


@pytest.fixture(scope="module")
def http(stack):
    with httpx.Client(base_url=f"http://{stack.gateway_address}", timeout=60) as client:
        yield client


def sign_up(http) -> dict[str, str]:
    name = f"imp-{uuid.uuid4().hex[:8]}"
    r = http.post("/api/accounts", json={"username": name, "password": PASSWORD})
    assert r.status_code == 201, r.text
    r = http.post(
        "/api/tokens",
        json={"username": name, "password": PASSWORD, "scopes": ["play", "tables:write"]},
    )
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


@pytest.fixture(scope="module")
def importer(http):
    return sign_up(http)


@pytest.fixture(scope="module")
def archive(stack):
    with grpc.insecure_channel(stack.archive_address) as channel:
        yield archive_pb2_grpc.ArchiveStub(channel)


def archived(archive, game_id: str):
    """The archive's record of ``game_id`` (ListGames, every page of 1894), or None."""
    token = ""
    while True:
        page = archive.ListGames(
            archive_pb2.ListGamesRequest(title="e1894", page_size=100, page_token=token)
        )
        for game in page.games:
            if game.info.game_id == game_id:
                return game
        token = page.next_page_token
        if not token:
            return None


@pytest.mark.parametrize("path", GAMES, ids=[p.stem for p in GAMES])
def test_a_recorded_game_becomes_a_finished_table_and_exports_back(path, http, importer, archive):
    recorded = json.loads(path.read_text())
    r = http.post("/api/e1894/imports", json={"game": recorded}, headers=importer)
    assert r.status_code == 201, r.text
    out = r.json()
    table_id = out["table_id"]
    assert out["status"] == "finished"
    assert out["replay_url"] == f"/tables/{table_id}/replay"
    seats = out["table"]["seats"]
    names = {p["id"]: p["name"] for p in recorded["players"]}
    assert [s["guest"] for s in seats] == [names[p["id"]] for p in recorded["players"]]
    assert all(s["kind"] == "empty" and not s["account_id"] for s in seats)  # guests
    # the recorded scores, by player name
    r = http.get(f"/api/tables/{table_id}/result")
    assert r.status_code == 200, r.text
    scores = {s["name"]: s["score"] for s in r.json()["standings"]}
    assert scores == {names[int(pid)]: score for pid, score in recorded["result"].items()}
    # listed among the finished tables
    r = http.get("/api/tables", params={"status": "finished", "title": "e1894", "page_size": 200})
    assert table_id in [t["table_id"] for t in r.json()["tables"]]
    # exported, imported again, exported: the same actions and the same result
    first = http.get(f"/api/tables/{table_id}/export")
    assert first.status_code == 200, first.text
    assert first.json()["format"] == "18xx.games"
    again = http.post("/api/e1894/imports", json={"game": first.json()["game"]}, headers=importer)
    assert again.status_code == 201, again.text
    second = http.get(f"/api/tables/{again.json()['table_id']}/export")
    assert second.json()["game"]["actions"] == first.json()["game"]["actions"]
    assert second.json()["game"]["result"] == first.json()["game"]["result"]
    assert {int(k): v for k, v in first.json()["game"]["result"].items()} == {
        int(k): v for k, v in recorded["result"].items()
    }
    # archived like any finished game
    game_id = out["table"]["game_id"]
    deadline = time.monotonic() + 30
    while (game := archived(archive, game_id)) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert game is not None, "the archiver never archived the imported game"
    assert [s.name for s in game.seats] == [names[p["id"]] for p in recorded["players"]]
    assert list(game.result.scores) == out["table"]["result"]["scores"]
    # the replay page draws it
    page = http.get(f"/tables/{table_id}/replay", params={"at": 100})
    assert page.status_code == 200 and "<svg" in page.text


def test_an_unfinished_recording_is_a_running_table_the_importer_plays_on(http, importer):
    recorded = json.loads(GAMES[0].read_text())
    recorded["actions"] = recorded["actions"][:300]
    recorded["status"], recorded["result"], recorded["game_end_reason"] = "active", {}, None
    r = http.post("/api/e1894/imports", json={"game": recorded}, headers=importer)
    assert r.status_code == 201, r.text
    table = r.json()["table"]
    assert table["status"] == "running" and table["result"] is None
    me = http.get("/api/account", headers=importer).json()
    assert {s["account_id"] for s in table["seats"]} == {me["account_id"]}
    before = http.get(f"/api/tables/{table['table_id']}/view").json()
    assert before["version"] > 100 and not before["finished"]
    seat = before["active_seats"][0]
    moves = http.get(
        f"/api/tables/{table['table_id']}/moves", params={"seat": seat}, headers=importer
    )
    assert moves.status_code == 200, moves.text
    first = moves.json()["moves"][0]
    r = http.post(
        f"/api/tables/{table['table_id']}/moves",
        json={"action": first["action"], "expected_version": before["version"], "seat": seat},
        headers=importer,
    )
    assert r.status_code == 200, r.text
    assert r.json()["version"] == before["version"] + 1
    # a running game is not exported: its seed would give away what is still hidden
    r = http.get(f"/api/tables/{table['table_id']}/export")
    assert r.status_code == 400 and r.json()["code"] == "not_finished"


def test_a_refused_recording_names_the_action_and_the_rule_and_stores_nothing(
    http, importer, stack
):
    recorded = json.loads(GAMES[0].read_text())
    bad = copy.deepcopy(recorded)
    index, run = next(
        (i, a) for i, a in enumerate(bad["actions"]) if a["type"] == "run_routes" and a["routes"]
    )
    run["routes"][0]["revenue"] += 10
    rdb = redis.Redis.from_url(stack.redis_url, decode_responses=True)
    keys_before = set(rdb.scan_iter(f"{stack.prefix}:game:*"))
    mine = http.get("/api/tables", params={"status": "finished,running", "page_size": 200})
    r = http.post("/api/e1894/imports", json={"game": bad}, headers=importer)
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["details"]["action_id"] == str(run["id"])
    assert body["details"]["action_index"] == str(index)
    assert body["code"] and body["details"]["grpc_status"] == "FAILED_PRECONDITION"
    worth = run["routes"][0]["revenue"] - 10
    assert f"action {run['id']}: route" in body["message"]
    assert f"is worth {worth}, the record says {worth + 10}" in body["message"]
    after = http.get("/api/tables", params={"status": "finished,running", "page_size": 200})
    assert after.json()["tables"] == mine.json()["tables"]  # no table
    assert set(rdb.scan_iter(f"{stack.prefix}:game:*")) == keys_before  # no stream, no meta
    # not JSON of a game at all
    r = http.post("/api/e1894/imports", json={"game": {"title": "1894"}}, headers=importer)
    assert r.status_code == 422 and r.json()["code"] == "bad_game_json"


def test_the_import_has_its_own_body_bound_and_needs_a_signed_in_account(http, importer):
    game = json.loads(GAMES[-1].read_text())
    big = json.dumps({"game": game})
    assert 64 * 1024 < len(big) < 4 * 1024 * 1024
    r = http.post("/api/e1894/imports", content=big, headers={"Content-Type": "application/json"})
    assert r.status_code == 401  # read past 64 KiB, refused for want of a token
    # the other routes keep the 64 KiB bound
    r = http.post(
        "/api/tables", content=big, headers={**importer, "Content-Type": "application/json"}
    )
    assert r.status_code == 413 and r.json()["details"]["max_bytes"] == str(64 * 1024)
    huge = json.dumps({"game": {"pad": "x" * (4 * 1024 * 1024)}})
    r = http.post(
        "/api/e1894/imports", content=huge, headers={**importer, "Content-Type": "application/json"}
    )
    assert r.status_code == 413 and r.json()["details"]["max_bytes"] == str(4 * 1024 * 1024)


def test_the_python_sdk_imports_and_exports(stack, http):
    from roundhouse_client import Client

    token = sign_up(http)["Authorization"].removeprefix("Bearer ")
    recorded = json.loads(GAMES[0].read_text())
    with Client(f"http://{stack.gateway_address}", token=token, timeout_s=60) as client:
        out = client.import_e1894(recorded)
        assert out["status"] == "finished"
        exported = client.export(out["table_id"])["game"]["result"]
        assert {int(k): v for k, v in exported.items()} == {
            int(k): v for k, v in recorded["result"].items()
        }
