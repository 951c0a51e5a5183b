"""The Python clients in docs/api.md run as written against the real
services (addresses swapped for this stack's): a person signs up, signs in and
asks WhoAmI on the accounts service; a new account signs in, and its seat plays
a whole game against bots through the lobby."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def python_block(marker: str) -> str:
    """The docs' Python example that mentions ``marker``."""
    (code,) = [c for c in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S) if marker in c]
    return code


def test_the_documented_accounts_client_signs_up_and_in(stack, capsys):
    code = python_block("WhoAmI").replace("localhost:50064", stack.accounts_address)
    exec(compile(code, str(DOC), "exec"), {})
    assert capsys.readouterr().out.strip().splitlines()[-1] == "ada"


def test_the_documented_python_client_plays_a_whole_game(stack, capsys):
    code = python_block("lobby_pb2")
    code = code.replace("localhost:50060", stack.lobby_address)
    code = code.replace("localhost:50064", stack.accounts_address)
    assert "50061" not in code  # the client needs the lobby (and the accounts) only
    exec(compile(code, str(DOC), "exec"), {})
    printed = capsys.readouterr().out.strip().splitlines()
    standings = eval(printed[-1])  # the example prints [(rank, name, score), ...]
    assert sorted(name for _, name, _ in standings) == ["bea", "greedy-bot", "greedy-bot"]
    assert min(rank for rank, _, _ in standings) == 1
    assert len(printed) > 50  # it streamed the moves
