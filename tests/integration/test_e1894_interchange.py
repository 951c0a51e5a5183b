"""The 1894 Interchange service against the real processes: a game recorded on
18xx.games is imported (replayed with every check on), stored as a game of
ours and served like any other; export then re-import gives the same game;
a divergent recording is refused with the action id and nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from roundhouse.v1 import e1894_interchange_pb2 as pb
from roundhouse.v1 import e1894_interchange_pb2_grpc as pb_grpc
from roundhouse.v1 import game_pb2
from services.platform.grpc_errors import error_info
from services.platform.hotstore import KeySpace
from services.rules.titles import get_game

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "e1894"
GAMES = sorted(FIXTURES.glob("*.json"))


@pytest.fixture(scope="module")
def interchange(stack, internal_channel):
    """ImportGame is a write: it needs internal credentials."""
    return pb_grpc.InterchangeStub(internal_channel(stack.rules_addresses["e1894"]))


@pytest.mark.parametrize("path", GAMES, ids=[p.stem for p in GAMES])
def test_import_stores_a_playable_copy_with_the_recorded_result(
    path, interchange, rules, rdb, stack
):
    recorded = json.loads(path.read_text())
    imported = interchange.ImportGame(pb.ImportGameRequest(game_json=path.read_text()))
    assert dict(imported.scores) == {k: int(v) for k, v in recorded["result"].items()}
    assert imported.game_end_reason == recorded["game_end_reason"]
    assert list(imported.player_ids) == [p["id"] for p in recorded["players"]]
    game_id = imported.info.game_id
    stream = rdb.xrange(KeySpace(stack.prefix).log(game_id))
    assert len(stream) == imported.version > 400  # the shortest, the bankrupt game: 473
    # served like any other game: view, result, watch
    view = rules["e1894"].GetView(game_pb2.GetViewRequest(game_id=game_id))
    assert view.finished and view.version == imported.version
    result = rules["e1894"].GetResult(game_pb2.GetResultRequest(game_id=game_id))
    assert list(result.result.scores) == list(imported.result.scores)
    updates = list(
        rules["e1894"].WatchGame(
            game_pb2.WatchGameRequest(game_id=game_id, from_version=imported.version - 3)
        )
    )
    assert [u.version for u in updates] == [
        imported.version - 2,
        imported.version - 1,
        imported.version,
    ]
    # the stream replays to the same result with our engine alone
    meta = json.loads(rdb.get(KeySpace(stack.prefix).meta(game_id)))
    replayed = get_game("e1894").replay(
        meta["num_players"],
        meta["seed"],
        meta["options"],
        [(int(f["seat"]), json.loads(f["action"])) for _, f in stream],
    )
    assert list(replayed.result().scores) == list(imported.result.scores)
    # export, then import the export: the same game
    exported = interchange.ExportGame(pb.ExportGameRequest(game_id=game_id))
    again = interchange.ImportGame(pb.ImportGameRequest(game_json=exported.game_json))
    assert dict(again.scores) == dict(imported.scores)
    assert again.version == imported.version
    stream2 = rdb.xrange(KeySpace(stack.prefix).log(again.info.game_id))
    assert [f["action"] for _, f in stream2] == [f["action"] for _, f in stream]


def test_a_divergent_recording_is_refused_with_the_action_id(interchange, rdb, stack):
    data = json.loads(GAMES[0].read_text())
    run = next(a for a in data["actions"] if a["type"] == "run_routes" and a["routes"])
    run["routes"][0]["revenue"] += 10
    before = len(list(rdb.scan_iter(f"{stack.prefix}:game:*:meta")))
    with pytest.raises(grpc.RpcError) as err:
        interchange.ImportGame(pb.ImportGameRequest(game_json=json.dumps(data), game_id="diverges"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    info = error_info(err.value)
    assert info.metadata["action_id"] == str(run["id"]) and info.reason
    assert f"action {run['id']}" in err.value.details()
    assert not rdb.exists(KeySpace(stack.prefix).meta("diverges"))
    assert not rdb.exists(KeySpace(stack.prefix).log("diverges"))
    assert len(list(rdb.scan_iter(f"{stack.prefix}:game:*:meta"))) == before


@pytest.mark.parametrize(
    "text", ["not json", "[]", '{"players": []}', '{"title": "1830", "players": [], "actions": []}']
)
def test_unreadable_games_are_invalid_argument(interchange, text):
    with pytest.raises(grpc.RpcError) as err:
        interchange.ImportGame(pb.ImportGameRequest(game_json=text))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_export_needs_a_finished_known_game(interchange, rules):
    game_id = (
        rules["e1894"]
        .CreateGame(game_pb2.CreateGameRequest(title="e1894", num_players=4, seed=3))
        .info.game_id
    )
    with pytest.raises(grpc.RpcError) as err:
        interchange.ExportGame(pb.ExportGameRequest(game_id=game_id))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as err:
        interchange.ExportGame(pb.ExportGameRequest(game_id="nope"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_importing_twice_under_one_id_is_already_exists(interchange):
    text = GAMES[0].read_text()
    interchange.ImportGame(pb.ImportGameRequest(game_json=text, game_id="twice"))
    with pytest.raises(grpc.RpcError) as err:
        interchange.ImportGame(pb.ImportGameRequest(game_json=text, game_id="twice"))
    assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS
