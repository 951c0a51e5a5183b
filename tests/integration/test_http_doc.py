"""The HTTP examples of docs/api.md (the fenced blocks marked ``sh test``) run
as written, in order, in one bash shell, against the real stack's gateway: a
person signs up and in, plays seat 0 of a whole Chicago Express game against
two hosted bots through the table stream, reads the standings and the
gameFinish event, and a bad move gets the documented JSON error."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def sh_blocks() -> list[str]:
    return re.findall(r"```sh test\n(.*?)```", DOC.read_text(), re.S)


def test_the_documented_curl_session_plays_a_whole_game(stack):
    assert shutil.which("curl") and shutil.which("jq"), "the doc's examples use curl and jq"
    blocks = sh_blocks()
    assert len(blocks) >= 5
    script = "set -euo pipefail\n" + "\n".join(blocks)
    done = subprocess.run(
        ["bash", "-c", script],
        env={"PATH": "/usr/bin:/bin", "RH": f"http://{stack.gateway_address}"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    out = done.stdout.splitlines()
    assert json.loads(out[0]) == {"username": "dora", "kind": "human"}
    assert json.loads(out[1])["scopes"] == ["play", "tables:write", "bots:write"]
    assert out[2] == "running"
    standings = json.loads(next(line for line in out if line.startswith('[{"rank"')))
    assert sorted(s["name"] for s in standings) == ["dora", "greedy-bot", "random-bot"]
    moves = [line for line in out if re.match(r"^\d+: ", line)]
    assert len(moves) > 5  # dora moved throughout the game
    finish = json.loads(next(line for line in out if '"gameFinish"' in line))
    assert finish["result"]["end_reason"]
    error = json.loads(out[-1])
    assert error["code"] in ("bad_field",) and error["details"]["field"] == "expected_version"
