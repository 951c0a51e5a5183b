"""``roundhouse up`` starts the whole platform in the background and returns;
the HTTP API answers on the printed address (sign up, sign in, a table with a
seat and two hosted bots that starts); ``roundhouse down`` stops every process
it started, the private Redis included, and its supervisor, and forgets them. Under
``up`` every process is supervised: one killed with ``kill -9`` is started again and
``roundhouse status`` counts the restart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import psutil
import pytest

from services.cli.launcher import free_port

pytestmark = pytest.mark.integration

LOBBY_WORKER = ("lobby", "worker")


def http_get(gateway: str, path: str, headers: dict) -> httpx.Response:
    with httpx.Client(base_url=f"http://{gateway}", timeout=30) as http:
        return http.get(path, headers=headers)


def test_up_runs_the_platform_in_the_background_and_down_stops_it(tmp_path):
    env = {
        **os.environ,
        "ROUNDHOUSE_DATA_DIR": str(tmp_path),
        "ROUNDHOUSE_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",  # none answers there
        "ROUNDHOUSE_KEY_PREFIX": f"up-{os.getpid()}",
        "ROUNDHOUSE_GATEWAY_ADDRESS": f"127.0.0.1:{free_port()}",
        "ROUNDHOUSE_LOBBY_ADDRESS": f"127.0.0.1:{free_port()}",
        "ROUNDHOUSE_ACCOUNTS_ADDRESS": f"127.0.0.1:{free_port()}",
        "ROUNDHOUSE_ARCHIVE_ADDRESS": f"127.0.0.1:{free_port()}",
        "ROUNDHOUSE_RULES_ADDRESSES": json.dumps(
            {t: f"127.0.0.1:{free_port()}" for t in ("railbarons", "transsib", "e1894")}
        ),
    }
    env.pop("ROUNDHOUSE_DATABASE_URL", None)
    roundhouse = [sys.executable, "-m", "services.cli.main"]
    up = subprocess.run([*roundhouse, "up"], env=env, capture_output=True, text=True, timeout=240)
    state_file = tmp_path / "run" / "platform.json"
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        gateway = env["ROUNDHOUSE_GATEWAY_ADDRESS"]
        assert f"http://{gateway}/api" in up.stdout and env["ROUNDHOUSE_LOBBY_ADDRESS"] in up.stdout
        assert "POST http://" in up.stdout and "/api/tokens" in up.stdout  # how to sign in
        state = json.loads(state_file.read_text())
        assert oct(state_file.stat().st_mode & 0o777) == "0o600"
        names = {p["name"] for p in state["processes"]}
        assert {
            "redis",
            "lobby",
            "accounts",
            "dispatcher",
            "archiver",
            "worker",
            "gateway",
        } <= names
        assert {"rules-railbarons", "rules-transsib", "rules-e1894"} <= names
        assert state["own_redis"] and state["database_url"].startswith("sqlite")
        with httpx.Client(base_url=f"http://{gateway}", timeout=30) as http:
            password = "correct horse battery"
            r = http.post("/api/accounts", json={"username": "ada", "password": password})
            assert r.status_code == 201, r.text
            r = http.post(
                "/api/tokens",
                json={"username": "ada", "password": password, "scopes": ["play", "tables:write"]},
            )
            auth = {"Authorization": f"Bearer {r.json()['token']}"}
            table = http.post(
                "/api/tables", json={"title": "railbarons", "num_players": 3}, headers=auth
            ).json()
            tid = table["table_id"]
            assert http.post(f"/api/tables/{tid}/seats/0/join", headers=auth).status_code == 200
            for seat in (1, 2):
                r = http.post(
                    f"/api/tables/{tid}/seats/{seat}/bot", json={"policy": "random"}, headers=auth
                )
                assert r.status_code == 200, r.text
            assert http.post(f"/api/tables/{tid}/start", headers=auth).json()["status"] == "running"
        # kill -9 the lobby and the worker: the supervisor starts them again
        killed = {p["name"]: p["pid"] for p in state["processes"] if p["name"] in LOBBY_WORKER}
        for pid in killed.values():
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            rows = {p["name"]: p for p in json.loads(state_file.read_text())["processes"]}
            if all(
                rows[n]["restarts"] == 1 and rows[n]["state"] == "running" for n in LOBBY_WORKER
            ):
                break
            time.sleep(0.5)
        for name in LOBBY_WORKER:
            assert rows[name]["restarts"] == 1 and rows[name]["last_exit"] == -9, rows[name]
            assert rows[name]["pid"] != killed[name] and psutil.pid_exists(rows[name]["pid"])
        shown = subprocess.run([*roundhouse, "status"], env=env, capture_output=True, text=True)
        assert shown.returncode == 0, shown.stdout + shown.stderr
        cells = [line.replace("│", " ").split() for line in shown.stdout.splitlines()]
        lines = {row[0]: row for row in cells if row}
        assert lines["lobby"][1:4] == [str(rows["lobby"]["pid"]), "running", "1"]
        assert lines["worker"][1:4] == [str(rows["worker"]["pid"]), "running", "1"]
        assert lines["supervisor"][2] == "running" and lines["gateway"][3] == "0"
        # the restarted lobby serves once it is up (503 while it starts): the table is there
        deadline = time.monotonic() + 120
        while (got := http_get(gateway, f"/api/tables/{tid}", auth)).status_code == 503:
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert got.status_code == 200, got.text
        state = json.loads(state_file.read_text())
    finally:
        down = subprocess.run(
            [*roundhouse, "down"], env=env, capture_output=True, text=True, timeout=120
        )
    assert down.returncode == 0, down.stdout + down.stderr
    assert not state_file.exists()
    for p in [*state["processes"], state["supervisor"]]:
        assert not psutil.pid_exists(p["pid"]) or psutil.Process(p["pid"]).status() == "zombie", p
    again = subprocess.run([*roundhouse, "down"], env=env, capture_output=True, text=True)
    assert again.returncode == 0 and "nothing to stop" in again.stdout
