"""The Python client in docs/api.md runs as written against the real
services (addresses swapped for this stack's): a new account signs in, and
its seat plays a whole game against bots through the lobby."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_documented_python_client_plays_a_whole_game(stack, capsys):
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    code = code.replace("localhost:50060", stack.lobby_address)
    code = code.replace("localhost:50064", stack.accounts_address)
    assert "50061" not in code  # the client needs the lobby (and the accounts) only
    exec(compile(code, str(DOC), "exec"), {})
    printed = capsys.readouterr().out.strip().splitlines()
    standings = eval(printed[-1])  # the example prints [(rank, name, score), ...]
    assert sorted(name for _, name, _ in standings) == ["ada", "greedy-bot", "greedy-bot"]
    assert min(rank for rank, _, _ in standings) == 1
    assert len(printed) > 50  # it streamed the moves
