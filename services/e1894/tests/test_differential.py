"""``roundhouse e1894 differential`` without the 18xx.games engine: a fake reference command
(``fake_reference.py``) and our own ``roundhouse e1894 replay`` stand in for it, to check the
planning of the games, the reference-command contract, the four counts, the first-divergence
report, the kept files and the JSON report."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import pytest

from services.e1894 import cli
from services.e1894.botgames import seat_policy
from services.e1894.differential import (
    SEARCH_SEAT,
    GameSpec,
    Status,
    export_bot_game,
    parse_verdict,
    plan_games,
    run_differential,
)
from services.kernel.engine import InvalidOptions

FAKE = Path(__file__).with_name("fake_reference.py")
ROUNDHOUSE_REPLAY = f"{shlex.quote(sys.executable)} -m services.cli.main e1894 replay"


def fake(mode: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} {mode}"


def tiny_export(spec: GameSpec, options: dict) -> dict:
    """A stand-in exporter: a finished game of 12 actions; seeds divisible by 4 raise."""
    if spec.seed % 4 == 0:
        raise IndexError("pick_buy: no share left")
    actions = [{"type": "pass", "entity": 1, "id": 10 + i} for i in range(12)]
    return {
        "actions": actions,
        "status": "finished",
        "result": {str(p + 1): spec.seed * 10 + p for p in range(spec.players)},
        "game_end_reason": "bank",
    }


# --- planning -------------------------------------------------------------------------------


def test_plan_rotates_bots_and_player_counts_with_distinct_seeds():
    specs = plan_games(12, seed=100)
    assert [s.seed for s in specs] == list(range(100, 112))
    assert [(s.kind, s.players) for s in specs[:6]] == [
        ("random", 3),
        ("greedy", 3),
        ("mixed", 3),
        ("random", 4),
        ("greedy", 4),
        ("mixed", 4),
    ]
    assert [(s.kind, s.players) for s in specs[6:]] == [(s.kind, s.players) for s in specs[:6]]
    assert specs[0].policies == ("random",) * 3 and specs[4].policies == ("greedy",) * 4
    assert specs[2].policies == ("greedy", "random", "greedy")
    assert specs[5].policies == ("random", "greedy", "random", "greedy")
    assert len({s.name for s in specs}) == 12
    assert specs[5].export_command.endswith("--seed 105 --bots random,greedy,random,greedy")


def test_plan_search_kind_seats_one_deterministic_search_bot():
    """Kind ``search``: one seat of :data:`SEARCH_SEAT` (seat ``i mod n``), the others
    alternating greedy and random; rotated with the other kinds like any kind."""
    specs = plan_games(8, bots=("random", "greedy", "mixed", "search"), seed=50)
    search = [s for s in specs if s.kind == "search"]
    assert [(s.index, s.players) for s in search] == [(3, 3), (7, 4)]
    assert search[0].policies == (SEARCH_SEAT, "greedy", "random")
    assert search[1].policies == ("greedy", "random", "greedy", SEARCH_SEAT)
    for s in search:
        assert s.policies.count(SEARCH_SEAT) == 1 and s.policies.index(SEARCH_SEAT) == (
            s.index % s.players
        )
    assert search[1].export_command.endswith(f"--bots greedy,random,greedy,{SEARCH_SEAT}")


def test_search_seat_with_an_iteration_budget_is_reproducible():
    """``TIER@N``: the tier's knobs, N iterations a decision and no clock, so two policies
    with one seed choose the same moves (an export is rebuilt from its seed); a bad budget
    or tier is refused."""
    from services.e1894.engine import GAME

    moves = []
    for _ in range(2):
        st = GAME.new_state(3, 7, {})
        policies = [seat_policy("search-easy@2", 11 + s) for s in range(3)]
        seen = []
        for _ in range(4):
            seat = st.active_seats()[0]
            action = policies[seat](st, seat)
            seen.append(action)
            st.apply(seat, action)
        moves.append(seen)
    assert moves[0] == moves[1]
    with pytest.raises(InvalidOptions, match="positive integer"):
        seat_policy("search-easy@0", 1)
    with pytest.raises(InvalidOptions, match="positive integer"):
        seat_policy("search-easy@x", 1)
    with pytest.raises(KeyError, match="unknown search tier"):
        seat_policy("greedy@3", 1)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"games": 0}, "at least 1"),
        ({"games": 3, "players": (5,)}, "3 or 4 players"),
        ({"games": 3, "bots": ("clever",)}, "unknown bot kinds"),
        ({"games": 3, "bots": ()}, "unknown bot kinds"),
    ],
)
def test_plan_refuses_bad_arguments(kwargs, message):
    games = kwargs.pop("games")
    with pytest.raises(ValueError, match=message):
        plan_games(games, **kwargs)


# --- the reference command's contract --------------------------------------------------------


def test_verdict_accepted_refused_and_without_a_json_line():
    ok = parse_verdict('log\n{"ok": true, "result": {"7": 10}, "finished": false}\n', "", 0)
    assert ok.ok and ok.result == {"7": 10} and ok.finished is False
    line = '{"ok": false, "action_index": 4, "action_id": 9, "error": "no"}'
    refused = parse_verdict(line, "", 1)
    assert not refused.ok and (refused.action_index, refused.action_id) == (4, 9)
    assert refused.error == "no"
    crashed = parse_verdict("", "Traceback\nNameError: x\n", 1)
    assert not crashed.ok and "exit code 1" in crashed.error and "NameError: x" in crashed.error
    # without "ok", the exit code decides
    assert parse_verdict('{"result": {"1": 5}}', "", 0).ok
    assert not parse_verdict('{"result": {"1": 5}}', "", 1).ok


# --- counting and the first divergence -------------------------------------------------------


@pytest.mark.parametrize(
    "mode, status",
    [
        ("accept", Status.SAME),
        ("different", Status.DIFFERENT),
        ("refuse-at-5", Status.REFUSED),
        ("crash", Status.REFUSED),
    ],
)
def test_each_verdict_is_counted_and_export_failures_apart(mode, status, tmp_path):
    specs = plan_games(8, bots=("random",), players=(3,), seed=1)  # seeds 1..8: 4 and 8 fail
    report = run_differential(specs, fake(mode), exporter=tiny_export, keep_dir=str(tmp_path))
    counts = {s.value: 0 for s in Status} | {status.value: 6, "export_failed": 2}
    assert report.counts == counts
    failed = [o for o in report.outcomes if o.status == Status.EXPORT_FAILED]
    assert [o.spec.seed for o in failed] == [4, 8]
    assert failed[0].export_error.startswith("IndexError: pick_buy: no share left")
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert len(kept) == (0 if status == Status.SAME else 6)


def test_refused_game_reports_its_first_divergent_action(tmp_path):
    specs = plan_games(2, bots=("random",), players=(3,), seed=1)
    report = run_differential(specs, fake("refuse-at-5"), exporter=tiny_export)
    d = report.outcomes[0].divergence
    assert d["action_index"] == 5 and d["action_id"] == 15
    assert d["action"] == {"type": "pass", "entity": 1, "id": 15}
    assert d["error"] == "GameError: cannot process action pass"
    assert [a["id"] for a in d["previous_actions"]] == [12, 13, 14]
    assert report.causes == [("pass: GameError: cannot process action pass", 2)]


def test_divergence_found_by_action_id_when_the_reference_gives_no_index():
    specs = plan_games(1, bots=("random",), players=(3,))
    report = run_differential(specs, fake("refuse-by-id-17"), exporter=tiny_export)
    d = report.outcomes[0].divergence
    assert d["action_index"] == 7 and d["action"]["id"] == 17


def test_different_result_keeps_both_results():
    specs = plan_games(1, bots=("random",), players=(4,), seed=3)
    (o,) = run_differential(specs, fake("different"), exporter=tiny_export).outcomes
    assert o.status == Status.DIFFERENT
    assert o.ours["result"] == {"1": 30, "2": 31, "3": 32, "4": 33}
    assert o.reference["result"] == {"1": 31, "2": 31, "3": 32, "4": 33}


def test_a_reference_that_cannot_start_is_a_refusal():
    specs = plan_games(1, bots=("random",), players=(3,))
    (o,) = run_differential(specs, "/nonexistent/engine", exporter=tiny_export).outcomes
    assert o.status == Status.REFUSED and "cannot start" in o.divergence["error"]


def test_workers_run_games_in_processes_with_the_same_outcomes():
    specs = plan_games(8, bots=("random",), players=(3, 4), seed=1)
    one = run_differential(specs, fake("refuse-at-3"), exporter=tiny_export)
    two = run_differential(specs, fake("refuse-at-3"), exporter=tiny_export, workers=2)
    assert [o.to_json() | {"seconds_export": 0, "seconds_reference": 0} for o in one.outcomes] == [
        o.to_json() | {"seconds_export": 0, "seconds_reference": 0} for o in two.outcomes
    ]
    with pytest.raises(ValueError, match="workers"):
        run_differential(specs, fake("accept"), workers=0)


# --- real bot games ---------------------------------------------------------------------------


def test_our_own_replay_accepts_our_bot_games_with_the_same_result():
    """``roundhouse e1894 replay`` honours the contract, so it can be the reference."""
    specs = plan_games(2, bots=("random", "mixed"), players=(3,), seed=11)
    report = run_differential(specs, ROUNDHOUSE_REPLAY, workers=2)
    assert report.counts["same"] == 2, [o.to_json() for o in report.outcomes]
    for o in report.outcomes:
        assert o.ours["finished"] and o.reference["ok"] is True
        assert o.reference["result"] == o.ours["result"]


def test_kept_file_of_a_refused_bot_game_holds_the_divergent_action(tmp_path):
    (spec,) = plan_games(1, bots=("random",), players=(3,), seed=21)
    report = run_differential([spec], fake("refuse-at-40"), keep_dir=str(tmp_path))
    (o,) = report.outcomes
    kept = json.loads(Path(o.file).read_text())
    assert kept == json.loads(json.dumps(export_bot_game(spec, {})))
    assert o.divergence["action"] == kept["actions"][40]


# --- the command line -------------------------------------------------------------------------


def _cli(argv, capsys):
    parser = argparse.ArgumentParser(prog="roundhouse")
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code = args.func(args)
    return code, capsys.readouterr().out


def test_cli_differential_writes_the_report_and_keeps_refused_games(capsys, tmp_path):
    report_path = tmp_path / "report.json"
    keep = tmp_path / "kept"
    argv = ["e1894", "differential", "--games", "2", "--players", "3", "--bots", "random"]
    argv += ["--seed", "31", "--reference-cmd", fake("refuse-at-7"), "--jobs", "2"]
    log_path = tmp_path / "games.jsonl"
    argv += ["--log", str(log_path)]
    code, out = _cli([*argv, "--report", str(report_path), "--keep-dir", str(keep)], capsys)
    assert code == 1
    lines = [json.loads(x) for x in log_path.read_text().splitlines()]
    assert sorted(x["seed"] for x in lines) == [31, 32]
    assert {x["status"] for x in lines} == {"refused"}
    assert "refused" in out and "e1894-0001-s32-3p-random action 7" in out
    report = json.loads(report_path.read_text())
    assert report["counts"] == {
        "same": 0,
        "different": 0,
        "known_defect": 0,
        "refused": 2,
        "export_failed": 0,
    }
    assert [d["key"] for d in report["known_defects"]] == ["two-split-brown-homes"]
    assert [g["seed"] for g in report["outcomes"]] == [31, 32]
    assert report["outcomes"][0]["divergence"]["action_index"] == 7
    assert sorted(p.name for p in keep.iterdir()) == [
        "e1894-0000-s31-3p-random.json",
        "e1894-0001-s32-3p-random.json",
    ]


def test_cli_differential_exit_zero_when_all_agree_and_two_for_bad_arguments(capsys, tmp_path):
    argv = ["e1894", "differential", "--games", "1", "--players", "3", "--bots", "random"]
    code, out = _cli([*argv, "--reference-cmd", fake("accept")], capsys)
    assert code == 0 and "accepted, same result" in out
    code, out = _cli([*argv[:-2], "--bots", "clever", "--reference-cmd", fake("accept")], capsys)
    assert code == 2 and "unknown bot kinds" in out


# --- refusals at a known reference defect ------------------------------------------------------


def home_token_export(spec: GameSpec, options: dict) -> dict:
    """A stand-in exporter whose action 3 is a home token of Nord (seed 1), of Est (seed 2, not
    a corporation with two homes) or Nord's third token (seed 3), each on a split brown tile."""
    corporation = "Est" if spec.seed == 2 else "Nord"
    actions = [{"type": "pass", "entity": 1, "id": 10 + i} for i in range(6)]
    token = {"type": "place_token", "entity": corporation, "entity_type": "corporation"}
    actions[3] = {**token, "id": 13, "city": "X20-0-0", "slot": 0}
    actions[2] = {**token, "id": 12, "city": "X17-0-1", "slot": 0}
    if spec.seed == 3:
        actions[1] = {**token, "id": 11, "city": "X6-0-0", "slot": 1}
    result = {str(p + 1): 100 + p for p in range(spec.players)}
    return {"actions": actions, "status": "finished", "result": result}


def test_home_token_defect_is_counted_apart_from_other_refusals(tmp_path):
    specs = plan_games(3, bots=("random",), players=(4,), seed=1)
    report = run_differential(specs, fake("token-used-at-3"), exporter=home_token_export)
    assert [o.status for o in report.outcomes] == [
        Status.KNOWN_DEFECT,  # Nord's second home token on X20
        Status.REFUSED,  # Est has one home: the same message is not the defect
        Status.REFUSED,  # Nord's third token: not a home token
    ]
    assert report.counts["known_defect"] == 1 and report.counts["refused"] == 2
    defect = report.outcomes[0].divergence["defect"]
    assert defect["key"] == "two-split-brown-homes"
    assert defect["write_up"].startswith("tests/fixtures/e1894/reference-defects/README.md")
    assert (Path(__file__).parents[3] / defect["write_up"].split("#")[0]).exists()
    assert report.outcomes[1].divergence["defect"] is None


def test_the_defect_signature_needs_its_action_type_and_message():
    specs = plan_games(1, bots=("random",), players=(4,), seed=1)
    # action 4 is a pass: the message alone does not make the defect
    (o,) = run_differential(specs, fake("token-used-at-4"), exporter=home_token_export).outcomes
    assert o.status == Status.REFUSED
    # the right action with another message is not the defect either
    (o,) = run_differential(specs, fake("refuse-at-3"), exporter=home_token_export).outcomes
    assert o.status == Status.REFUSED


def test_cli_exit_one_when_a_refusal_is_not_a_known_defect(capsys):
    code, out = _cli(
        ["e1894", "differential", "--games", "1", "--players", "3", "--bots", "random"]
        + ["--reference-cmd", fake("token-used-at-0")],
        capsys,
    )
    assert code == 1 and "refused otherwise" in out  # a real game's action 0 is not a token
