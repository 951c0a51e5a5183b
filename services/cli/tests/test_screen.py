"""The terminal client without services: reading what a person types on the screen
(:func:`services.cli.screen.choose`), the moves of a ``ListMoves`` answer, the saved
sign-in (mode 0600) and the commands' refusals before any call."""

from __future__ import annotations

import json
import stat

import pytest

from roundhouse.v1 import game_pb2
from services.cli import session as sessions
from services.cli.main import main
from services.cli.screen import BadInput, Move, choose, moves_of

MOVES = [
    Move("Pass", {"type": "pass"}),
    Move(
        "Bid 30-480 F in steps of 5 on AR",
        {"type": "bid", "company": "AR", "price": 30},
        "price",
        30,
        480,
        5,
    ),
]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("x", "not_a_number"),
        ("1 2 3", "not_a_number"),
        ("0", "no_such_move"),
        ("3", "no_such_move"),
        ("1 5", "value_not_allowed"),
        ("2", "value_needed"),
        ("2 25", "value_out_of_range"),
        ("2 485", "value_out_of_range"),
        ("2 32", "value_off_step"),
        ("{nope", "bad_json"),
        ("[1]", "not_a_number"),
    ],
)
def test_input_that_is_not_a_move_of_the_list_is_refused_with_its_reason(text, reason):
    with pytest.raises(BadInput) as err:
        choose(text, MOVES)
    assert err.value.reason == reason


def test_a_move_by_number_by_number_and_value_or_as_json():
    assert choose("1", MOVES) == (MOVES[0], {"type": "pass"})
    assert choose(" 2 480 ", MOVES) == (MOVES[1], {"type": "bid", "company": "AR", "price": 480})
    assert choose('{"type": "pass"}', MOVES) == (None, {"type": "pass"})
    with pytest.raises(BadInput) as err:
        choose("1", [])
    assert err.value.reason == "no_moves"


def test_moves_of_a_list_moves_answer_keep_labels_and_ranges_in_order():
    answer = game_pb2.ListLegalActionsResponse(
        version=4,
        actions_json=['{"type":"pass"}', '{"company":"AR","price":30,"type":"bid"}'],
        ranges=[
            game_pb2.ParameterRange(),
            game_pb2.ParameterRange(field="price", min=30, max=480, step=5),
        ],
        labels=["Pass", "Bid 30-480 F in steps of 5 on AR"],
    )
    moves = moves_of(answer)
    assert [m.label for m in moves] == ["Pass", "Bid 30-480 F in steps of 5 on AR"]
    assert (moves[1].field, moves[1].min, moves[1].max, moves[1].step) == ("price", 30, 480, 5)
    assert not moves[0].ranged and moves[1].ranged
    assert "type 2 and a price" in moves[1].line(2)


def test_the_sign_in_is_saved_for_its_owner_only(tmp_path, monkeypatch):
    path = tmp_path / "deep" / "config.json"
    monkeypatch.setenv(sessions.CONFIG_ENV, str(path))
    with pytest.raises(sessions.NotSignedIn):
        sessions.load()
    path.parent.mkdir()
    path.write_text("{}")
    path.chmod(0o644)
    with pytest.raises(sessions.NotSignedIn, match="not a sign-in"):
        sessions.load()
    saved = sessions.Session("ada", "rh_secret", "127.0.0.1:1", "127.0.0.1:2")
    assert sessions.save(saved) == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # also when the old file was 0644
    assert sessions.load() == saved
    assert json.loads(path.read_text())["token"] == "rh_secret"


def test_commands_refuse_bad_arguments_before_calling_anything(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(sessions.CONFIG_ENV, str(tmp_path / "config.json"))
    assert main(["tables"]) == 1
    assert "roundhouse login" in capsys.readouterr().out
    sessions.save(sessions.Session("ada", "rh_x", "127.0.0.1:9", "127.0.0.1:9"))
    assert main(["new", "railbarons", "--players", "2", "--bots", "a,b,c"]) == 2
    assert "names 3 bots for 2 seats" in capsys.readouterr().out
    assert main(["new", "railbarons", "--players", "3", "--seat", "5"]) == 2
    assert main(["new", "railbarons", "--options", "{bad"]) == 2
    assert "not JSON" in capsys.readouterr().out


def test_local_is_the_embedded_game(capsys):
    assert main(["local", "railbarons", "--players", "2", "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["moves"] > 0


def test_local_prints_each_move_by_its_label(capsys):
    """``roundhouse local`` shows the moves as people read them (the engine's ``describe``,
    made before the move is applied), not as raw actions."""
    assert main(["local", "railbarons", "--players", "3", "--bots", "greedy", "--seed", "7"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Bid $40 on PRR" in lines[0]
    assert not any("amount=" in line for line in lines)
