"""18xx.games interchange: undo/redo filtering, import, divergences, export
(spec "Replay semantics of a recorded 18xx.games game", "Action JSON format")."""

from __future__ import annotations

import argparse
import json

import pytest

from services.kernel.playout import random_choice
from services.kernel.rng import SeededRandom

from ... import cli
from .. import GAME
from ..interchange.exporter import export_game
from ..interchange.filter import filtered_actions
from ..interchange.importer import ImportDivergence, import_game
from ..interchange.ledger import ShareLedger
from .flow_helpers import FINAL, MARKET, action, fixture, fixture_copy


def _ids(raw):
    return [a["id"] for a in filtered_actions(raw)]


def test_undo_without_id_removes_the_last_action_and_redo_restores_it():
    """§Action JSON: undo (no id) removes the last kept action; redo puts the group back."""
    raw = [{"id": 1, "type": "bid"}, {"id": 2, "type": "bid"}, {"id": 3, "type": "undo"}]
    assert _ids(raw) == [1]
    assert _ids(raw + [{"id": 4, "type": "redo"}]) == [1, 2]


def test_undo_to_an_action_and_undo_everything():
    """§Action JSON: undo with action_id keeps everything up to that action; id 0 undoes all."""
    raw = [{"id": k, "type": "pass"} for k in (1, 2, 3)]
    assert _ids(raw + [{"id": 4, "type": "undo", "action_id": 1}]) == [1]
    assert _ids(raw + [{"id": 4, "type": "undo", "action_id": 0}]) == []


def test_another_action_clears_the_redo_stack_but_a_message_does_not():
    """§Action JSON: any other action clears the stack of undo groups; chat is never undone."""
    raw = [
        {"id": 1, "type": "pass"},
        {"id": 2, "type": "pass"},
        {"id": 3, "type": "undo"},
        {"id": 4, "type": "message", "message": "hi"},
        {"id": 5, "type": "redo"},
    ]
    assert _ids(raw) == [1, 4, 2]
    raw[3] = {"id": 4, "type": "pass"}
    assert _ids(raw) == [1, 4]


@pytest.mark.parametrize("name,count", [(FINAL, 610), (MARKET, 617)])
def test_fixture_filtering_leaves_the_effective_actions(name, count):
    """§Action JSON: applied to the fixtures the rules leave 610 and 617 effective actions."""
    assert len(filtered_actions(fixture(name)["actions"])) == count


@pytest.mark.parametrize("name", [FINAL, MARKET])
def test_recorded_games_replay_to_their_exact_result(name):
    """§Replay semantics: every player's score and the end reason equal the recorded ones."""
    data = fixture(name)
    imp = import_game(data)
    assert imp.result() == {str(k): v for k, v in data["result"].items()}
    assert imp.game_end_reason == data["game_end_reason"]


@pytest.mark.parametrize("name", [FINAL, MARKET])
def test_an_imported_game_is_an_ordinary_game_of_ours(name):
    """§Replay semantics: (num_players, seed, options) + the log replay with GAME.replay."""
    imp = import_game(fixture(name))
    log = [(seat, a.to_json()) for seat, a in imp.log]
    replayed = GAME.replay(imp.num_players, imp.seed, imp.options, log)
    assert replayed.to_json() == imp.state.to_json()
    assert not any(a.TYPE.startswith("program") for _, a in imp.log)


def test_a_wrong_stored_revenue_is_an_error_naming_the_action():
    """§Replay semantics: stored route revenues are recomputed, never trusted."""
    data = fixture_copy(FINAL)
    next(a for a in data["actions"] if a["id"] == 67)["routes"][0]["revenue"] = 50
    with pytest.raises(ImportDivergence) as err:
        import_game(data)
    assert err.value.action_id == 67 and err.value.code == "route_revenue"
    assert "40" in err.value.reason and "50" in err.value.reason


def test_an_illegal_recorded_action_fails_with_the_rules_reason():
    """A recorded action our rules refuse stops the import at that action with the reason."""
    data = fixture_copy(FINAL)
    next(a for a in data["actions"] if a["id"] == 5)["price"] = 82
    with pytest.raises(ImportDivergence) as err:
        import_game(data)
    assert err.value.action_id == 5 and err.value.code == "bid_not_multiple_of_5"
    data = fixture_copy(FINAL)
    next(a for a in data["actions"] if a["id"] == 2)["entity"] = 10573
    with pytest.raises(ImportDivergence) as err:
        import_game(data)
    assert err.value.action_id == 2 and err.value.code == "not_your_turn"


def test_unknown_actions_and_optional_rules_are_refused():
    data = fixture_copy(FINAL)
    data["actions"].insert(3, {"type": "teleport_everything", "entity": 8544, "id": 99999})
    with pytest.raises(ImportDivergence) as err:
        import_game(data)
    assert err.value.code == "unknown_action"
    data = fixture_copy(FINAL)
    data["settings"]["optional_rules"] = ["some_variant"]
    with pytest.raises(ImportDivergence):
        import_game(data)


def test_program_actions_are_accepted_and_ignored():
    """§Replay semantics: program_* only register UI automation; their effects come as
    auto_actions, which are applied."""
    data = fixture(FINAL)
    assert action(FINAL, 18)["type"] == "program_buy_shares"
    imp = import_game(data)
    assert 18 not in imp.source_ids
    assert imp.source_ids.count(30) == 3  # buy_shares + its auto buy_shares and pass


@pytest.mark.parametrize("name", [FINAL, MARKET])
def test_export_then_import_gives_the_same_game(name):
    """Export writes our games in the same format: re-importing gives the identical log."""
    imp = import_game(fixture(name))
    data = export_game(imp.num_players, imp.seed, imp.options, imp.log, player_ids=imp.player_ids)
    again = import_game(json.loads(json.dumps(data)))
    assert again.log == imp.log
    assert again.result() == imp.result() and data["result"] == imp.result()
    assert data["game_end_reason"] == imp.game_end_reason


@pytest.mark.parametrize("players,seed", [(3, 23), (4, 22)])
def test_random_games_round_trip_through_the_format(players, seed):
    st = GAME.new_state(players, seed)
    rng = SeededRandom(seed)
    log = []
    while not st.is_terminal():
        seat = st.active_seats()[0]
        a = random_choice(st, seat, rng)
        st.apply(seat, a)
        log.append((seat, a))
    data = json.loads(json.dumps(export_game(players, seed, None, log)))
    again = import_game(data)
    assert again.log == log and again.state.to_json() == st.to_json()


def _cli(argv, capsys):
    parser = argparse.ArgumentParser(prog="roundhouse")
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code = args.func(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_replay_prints_the_result(capsys, tmp_path):
    """CLI: ``e1894 replay FILE`` prints one JSON line (the differential's reference-command
    contract): ok, the result, finished and the end reason."""
    path = tmp_path / "g.json"
    path.write_text(json.dumps(fixture(MARKET)))
    code, out, _ = _cli(["e1894", "replay", str(path)], capsys)
    assert code == 0
    assert json.loads(out) == {
        "ok": True,
        "result": {str(k): v for k, v in fixture(MARKET)["result"].items()},
        "finished": True,
        "game_end_reason": "stock_market",
    }


def test_cli_replay_names_the_diverging_action(capsys, tmp_path):
    data = fixture_copy(FINAL)
    next(a for a in data["actions"] if a["id"] == 67)["routes"][0]["revenue"] = 50
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    code, out, err = _cli(["e1894", "replay", str(path)], capsys)
    line = json.loads(out)
    assert code == 1 and line["ok"] is False and line["action_id"] == 67
    assert data["actions"][line["action_index"]]["id"] == 67
    assert "worth" in line["error"] and line["code"] == "route_revenue"
    assert "action 67" in err


def test_cli_replay_accepts_a_game_whose_stored_result_differs_but_exits_1(capsys, tmp_path):
    data = fixture_copy(MARKET)
    first = next(iter(data["result"]))
    data["result"][first] += 1
    path = tmp_path / "other.json"
    path.write_text(json.dumps(data))
    code, out, err = _cli(["e1894", "replay", str(path)], capsys)
    line = json.loads(out)
    assert code == 1 and line["ok"] is True and "stored result" in err
    assert line["result"][str(first)] == data["result"][first] - 1
    assert line["stored_result_problems"]
    assert _cli(["e1894", "replay", "--no-check", str(path)], capsys)[0] == 0


def test_cli_export_and_import(capsys, tmp_path):
    """CLI: ``e1894 export`` writes a bot game; ``e1894 import`` gives our log back, which
    ``e1894 export --log`` turns into the same file."""
    game = tmp_path / "game.json"
    code, _, _ = _cli(
        ["e1894", "export", "--players", "3", "--seed", "5", "--out", str(game)], capsys
    )
    assert code == 0
    log = tmp_path / "log.json"
    assert _cli(["e1894", "import", str(game), "--out", str(log)], capsys)[0] == 0
    again = tmp_path / "again.json"
    assert _cli(["e1894", "export", "--log", str(log), "--out", str(again)], capsys)[0] == 0
    assert json.loads(again.read_text())["actions"] == json.loads(game.read_text())["actions"]
    assert _cli(["e1894", "replay", str(again)], capsys)[0] == 0


def test_nminors_gives_the_highest_nord_certificate_left_in_the_treasury():
    """Errata A2: buying NMinorS gives the highest-numbered Nord certificate still in the
    Treasury: ``Nord_4`` when Nord is the drawn French starting corporation."""
    none = [-1] * 9
    led = ShareLedger(4, ("Nord", "Belge"))
    led.follow([{"type": "bought_private", "company": "NMinorS", "player": 2}], none, none)
    assert led.held_by(2, "Nord") == ["Nord_6", "Nord_4"]
    other = ShareLedger(4, ("PLM", "Belge"))
    other.follow([{"type": "bought_private", "company": "NMinorS", "player": 1}], none, none)
    assert other.held_by(1, "Nord") == ["Nord_8"]


def test_selling_into_the_presidents_certificate_names_as_the_reference():
    """Errata A2: a president sells 10% of his 20% certificate and the presidency passes:
    the named certificate and the new president's first two 10% go to the pool, the new
    president takes the president's certificate, the seller gets the front of the pool."""
    led = ShareLedger(3, ("PLM", "Belge"))  # seat 2 holds Belge_6, the pool Belge_5
    led.move("Belge_0", 2)
    led.move("Belge_5", 0)  # seat 0: Belge_8, Belge_5 (20%)
    led.sell(2, "Belge", ["Belge_6"], 10, 2)
    assert led.pool["Belge"] == [6]
    led.sell(2, "Belge", ["Belge_0"], 10, 0)
    assert led.held_by(0, "Belge") == ["Belge_0"]
    assert led.held_by(2, "Belge") == ["Belge_6"]  # the front of the pool comes back
    assert led.pool["Belge"] == [8, 5]
