"""The ``roundhouse`` command in embedded mode (no services)."""

from __future__ import annotations

import json

import pytest

from services.cli.main import main
from services.rules.titles import available_titles, get_game


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


def test_without_redis_the_launcher_says_how_to_get_one(monkeypatch, tmp_path):
    """make demo: no Redis answers and redis-server is not installed -> a clear message."""
    from services.cli import launcher

    monkeypatch.setattr(launcher.shutil, "which", lambda name: None)
    stack = launcher.Stack(
        ["railbarons"], redis_url=f"redis://127.0.0.1:{launcher.free_port()}/0", run_dir=tmp_path
    )
    with pytest.raises(launcher.NoRedis) as err:
        stack.start()
    assert "redis-server" in str(err.value) and "ROUNDHOUSE_REDIS_URL" in str(err.value)
    assert stack.procs == []


def test_the_stack_stops_every_process_it_started(tmp_path):
    """make demo leaves nothing running: servers, worker and the private Redis all exit."""
    import os

    from services.cli.launcher import Stack

    stack = Stack(["railbarons"], private_redis=True, run_dir=tmp_path, workers=1)
    with stack:
        procs = list(stack.procs)
        assert {p.name for p in procs} >= {
            "redis",
            "rules-railbarons",
            "lobby",
            "dispatcher",
            "worker",
        }
    assert stack.procs == []
    for p in procs:
        assert p.popen.poll() is not None, f"{p.name} still running"
        with pytest.raises(ProcessLookupError):
            os.killpg(p.popen.pid, 0)  # no process of its group is left either


def test_the_stack_runs_a_review_worker_on_its_own_queue(tmp_path):
    """The review worker consumes the review queue only, one process, apart from the bots."""
    from services.cli.launcher import Stack
    from services.platform.reviews import review_queue

    stack = Stack(["railbarons"], run_dir=tmp_path)
    argv = stack.review_worker_argv()
    bots = stack.worker_argv()
    assert argv[argv.index("-Q") + 1] == review_queue(stack.prefix)
    assert bots[bots.index("-Q") + 1] != review_queue(stack.prefix)
    assert argv[argv.index("--concurrency") + 1] == "1"
    assert argv[argv.index("-n") + 1] != bots[bots.index("-n") + 1]
