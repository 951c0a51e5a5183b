"""The seed "for audits" through the public entry: the lobby's GetTableResult
gives it once the game is over (and replaying the table's moves from it gives
the result), never before: while the game runs the call is refused and
neither it nor GetTable carries the seed."""

from __future__ import annotations

import json
import time

import grpc
import pytest

from roundhouse.v1 import lobby_pb2
from services.platform.grpc_errors import error_info
from services.platform.hotstore import KeySpace
from services.rules.titles import get_game

pytestmark = pytest.mark.integration

TITLE = "railbarons"


def _stored_seed(rdb, prefix, game_id) -> str:
    return str(json.loads(rdb.get(KeySpace(prefix).meta(game_id)))["seed"])


def test_the_seed_is_given_after_the_game_and_replays_it(lobby, rdb, stack):
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=3))
    for seat in range(3):
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy="random"))
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    updates = list(
        lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=table.table_id), timeout=300)
    )
    assert updates[-1].finished
    deadline = time.monotonic() + 30
    while True:  # whether or not the lobby recorded the result yet, the answer is the same
        result = lobby.GetTableResult(lobby_pb2.GetTableRequest(table_id=table.table_id))
        if result.table.status == lobby_pb2.TABLE_STATUS_FINISHED or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    seed = _stored_seed(rdb, stack.prefix, table.game_id)
    assert result.seed == seed  # drawn by the rules service (the table fixed none)

    # the audit: the public moves replayed from the public seed give the public result
    replayed = get_game(TITLE).replay(
        3,
        int(result.seed),
        json.loads(table.options_json or "{}"),
        [(u.seat, json.loads(u.action_json)) for u in updates],
    )
    by_seat = {s.seat: s for s in result.standings}
    assert [by_seat[i].score for i in range(3)] == [int(s) for s in replayed.result().scores]
    assert result.end_reason == replayed.result().end_reason


def test_the_seed_is_never_given_while_the_game_runs(lobby, rdb, stack):
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=3))
    lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=0))  # the organiser
    for seat in (1, 2):
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy="random"))
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    seed = _stored_seed(rdb, stack.prefix, table.game_id)

    with pytest.raises(grpc.RpcError) as err:
        lobby.GetTableResult(lobby_pb2.GetTableRequest(table_id=table.table_id))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    info = error_info(err.value)
    assert info is not None and info.reason == "game_not_over"
    assert seed not in err.value.details()
    assert seed not in list(info.metadata.values())
    public = lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table.table_id))
    assert seed.encode() not in public.SerializeToString()
    assert seed not in str(public)
