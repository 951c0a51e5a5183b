"""The ``roundhouse`` command in embedded mode (no services)."""

from __future__ import annotations

import json

import pytest

from services.cli.main import main
from services.common.registry import available_titles, get_game


@pytest.mark.parametrize("title", available_titles())
def test_play_runs_a_whole_game_and_reports_the_result(title, capsys):
    game = get_game(title)
    n = game.min_players
    code = main(
        [
            "play",
            title,
            "--players",
            str(n),
            "--bots",
            ",".join(["greedy"] + ["random"] * (n - 1)),
            "--seed",
            "3",
            "--quiet",
            "--json",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    summary = json.loads(out.strip().splitlines()[-1])
    assert len(summary["result"]["scores"]) == n and summary["moves"] > 0
    assert "game over after" in out


def test_play_is_reproducible_for_a_seed(capsys):
    runs = []
    for _ in range(2):
        main(
            [
                "play",
                "railbarons",
                "--players",
                "3",
                "--bots",
                "greedy,random,random",
                "--seed",
                "11",
                "--quiet",
                "--json",
            ]
        )
        runs.append(capsys.readouterr().out.strip().splitlines()[-1])
    assert runs[0] == runs[1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["play", "railbarons", "--players", "3", "--bots", "foo,foo,foo"], "unknown policies"),
        (["play", "railbarons", "--players", "3", "--bots", "random,random"], "names 2 policies"),
        (["play", "railbarons", "--players", "9"], "takes 2 to 6 players"),
        (["play", "railbarons", "--options", '{"bogus": 1}'], "bogus"),
    ],
)
def test_bad_arguments_give_a_clear_error_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    out = capsys.readouterr().out
    assert message in out
    assert "Traceback" not in out
