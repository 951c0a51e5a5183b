"""The Python SDK example of docs/api.md (the block marked ``python test``) runs as written
against the real stack's gateway: a person plays seat 0 of a whole Chicago Express game through
the table stream and reads the standings."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_documented_sdk_session_plays_a_whole_game(stack):
    (block,) = re.findall(r"```python test\n(.*?)```", DOC.read_text(), re.S)
    script = f"RH = {f'http://{stack.gateway_address}'!r}\n" + block
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    standings = ast.literal_eval(done.stdout.strip().splitlines()[-1])  # the printed list
    assert sorted(s["name"] for s in standings) == ["greedy-bot", "random-bot", "sam"]
    assert sorted(s["rank"] for s in standings)[0] == 1
