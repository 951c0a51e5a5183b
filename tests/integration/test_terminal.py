"""Play in the terminal, the way a person does (issue 10, item 5): ``roundhouse login``,
``new``, ``tables``, then a WHOLE game of Chicago Express against three hosted bots
driven through the textual screen of ``roundhouse play TABLE`` with textual's Pilot,
against the real services (lobby, accounts, rules, dispatcher, Celery worker).

On the way the screen is given input it must refuse (not a number, no such move, a
move the rules refuse): each shows its reason and changes nothing. A screenshot of the
screen mid-game is saved (``ROUNDHOUSE_SCREENSHOT_DIR``, else the test's tmp dir)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import stat
from pathlib import Path

import pytest

from services.cli import session as sessions
from services.cli.main import main
from services.cli.screen import PlayApp
from services.kernel.rng import SeededRandom

pytestmark = pytest.mark.integration

PASSWORD = "terminal password"


def run_cli(argv, capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


async def until(pilot, cond, what: str, limit_s: float = 120.0) -> None:
    """Let the screen run until ``cond()``; fail naming ``what`` if it never comes."""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit_s
    while not cond():
        if loop.time() > end:
            raise AssertionError(f"the screen never showed {what}")
        await pilot.pause(0.02)


async def type_in(pilot, text: str) -> None:
    await pilot.press(*list(text), "enter")


def test_a_person_plays_a_whole_game_in_the_terminal(stack, tmp_path, monkeypatch, capsys):
    name = f"t-{os.urandom(4).hex()}"
    config = tmp_path / "conf" / "config.json"
    monkeypatch.setenv(sessions.CONFIG_ENV, str(config))
    where = ["--lobby", stack.lobby_address, "--accounts", stack.accounts_address]

    def with_stdin(text: str) -> None:
        monkeypatch.setattr("sys.stdin", io.StringIO(text + "\n"))

    # no account yet: refused with the reason and how to make one, nothing saved
    with_stdin(PASSWORD)
    code, out = run_cli(["login", "--username", name, "--password-stdin", *where], capsys)
    flat = out.replace("\n", " ")
    assert code == 1 and "refused (bad_credentials)" in flat and "roundhouse signup" in flat
    assert not config.exists()
    code, out = run_cli(["tables"], capsys)
    assert code == 1 and "roundhouse login" in out

    # signup makes the account and signs in; the same name again is refused
    with_stdin(PASSWORD)
    code, out = run_cli(["signup", "--username", name, "--password-stdin", *where], capsys)
    assert code == 0 and f"account {name} created" in out, out
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    config.unlink()
    with_stdin(PASSWORD)
    code, out = run_cli(["signup", "--username", name, "--password-stdin", *where], capsys)
    assert code == 1 and "refused (username_taken)" in out.replace("\n", " ")
    assert not config.exists()

    # a wrong password: refused, nothing saved
    with_stdin("wrong")
    code, out = run_cli(["login", "--username", name, "--password-stdin", *where], capsys)
    assert code == 1 and "refused (bad_credentials)" in out.replace("\n", " ")
    assert not config.exists()

    with_stdin(PASSWORD)
    code, out = run_cli(["login", "--username", name, "--password-stdin", *where], capsys)
    assert code == 0, out
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    session = sessions.load()
    assert session.username == name and session.token.startswith("rh_")

    # a bot name the lobby refuses: the half-built table is aborted, not left open
    code, out = run_cli(
        ["new", "railbarons", "--players", "4", "--bots", "greedy,no-such-bot,greedy"], capsys
    )
    assert code == 1 and "refused (" in out and "aborted" in out, out
    code, out = run_cli(["tables", "--mine", "--json"], capsys)
    assert code == 0 and "open" not in [t["status"] for t in json.loads(out)], out

    code, out = run_cli(
        ["new", "railbarons", "--players", "4", "--bots", "greedy,random,greedy", "--json"],
        capsys,
    )
    assert code == 0, out
    table = json.loads(out.strip().splitlines()[-1])
    assert table["status"] == "running"
    assert table["seats"][0] == name
    assert [s.split(" ")[-1] for s in table["seats"][1:]] == ["(greedy)", "(random)", "(greedy)"]
    code, out = run_cli(["tables", "--mine", "--json"], capsys)
    assert code == 0 and table["table_id"] in [t["table_id"] for t in json.loads(out)]

    shots = Path(os.environ.get("ROUNDHOUSE_SCREENSHOT_DIR") or tmp_path)
    asyncio.run(drive_whole_game(session, table["table_id"], shots))


async def drive_whole_game(session, table_id: str, shots: Path) -> None:
    app = PlayApp(session, table_id)
    rng = SeededRandom(7)
    mine = 0
    async with app.run_test(size=(150, 48)) as pilot:
        await until(pilot, lambda: app.moves or app.finished, "the first move of seat 0")
        assert app.seat == 0
        assert len(app.view.seat_summaries) == 4

        # input the screen refuses by itself, then one the rules refuse: nothing changes
        before = (app.version, list(app.moves))
        for text, reason in (("abc", "not_a_number"), ("999", "no_such_move")):
            await type_in(pilot, text)
            assert reason in app.error
            assert (app.version, app.moves) == before
            pilot.app.query_one("#command").value = ""
        await type_in(pilot, json.dumps({"type": "bid", "amount": 9999}))
        await pilot.pause(0.2)
        assert app.error.startswith("refused (bid_above_cash)"), app.error
        assert (app.version, app.moves) == before
        pilot.app.query_one("#command").value = ""

        shot = None
        while not app.finished:
            await until(pilot, lambda: app.moves or app.finished, "seat 0's moves or the end")
            if app.finished:
                break
            version = app.moves_version
            number = 1 + rng.randbelow(len(app.moves))
            move = app.moves[number - 1]
            text = str(number)
            if move.ranged:
                text += f" {move.min}"
            await type_in(pilot, text)
            assert not app.error, app.error
            assert app.status_text.startswith("played: ") or app.finished
            mine += 1
            await until(pilot, lambda v=version: app.version > v, f"move {version + 1} applied")
            if shot is None and app.version >= 60 and app.moves:
                shot = app.save_screenshot("terminal_midgame.svg", str(shots))
        assert mine > 20, "the person made the moves of seat 0"
        await until(pilot, lambda: bool(app.result_lines), "the result")
        assert "Game over" in app.status_text
        assert len(app.result_lines) == 4
        labels = [line for line in app.history if line]
        assert labels and all(": " in line for line in labels)
        app.save_screenshot("terminal_game_over.svg", str(shots))
    assert shot is not None and Path(shot).stat().st_size > 1000
    text = Path(shot).read_text().replace("&#160;", " ")
    assert "Your moves" in text and "Last" in text
