"""The game-ending move, sent again with its idempotency key after the lobby
recorded the result, gets its first answer (issue 13, item 7; docs/api.md,
"idempotency_key"). A new move at the finished table is still refused
``not_running``."""

from __future__ import annotations

import time

import grpc
import pytest

from roundhouse.v1 import lobby_pb2
from services.platform.grpc_errors import error_reason
from services.platform.hotstore import KeySpace

pytestmark = pytest.mark.integration
TITLE = "railbarons"
MAX_MOVES = 3000


def test_the_final_move_retried_gets_its_first_answer(lobby, people, rdb, stack):
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=TITLE, num_players=2))
    players = [people.sign_up() for _ in range(2)]
    for seat, person in enumerate(players):
        lobby.JoinSeat(
            lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=seat), metadata=person.md
        )
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    tid = table.table_id
    last_request = last_answer = last_md = None
    for n in range(MAX_MOVES):
        view = lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=tid))
        if view.finished:
            break
        seat = view.active_seats[0]
        last_md = players[seat].md
        moves = lobby.ListMoves(lobby_pb2.SeatRequest(table_id=tid, seat=seat), metadata=last_md)
        last_request = lobby_pb2.SubmitMoveRequest(
            table_id=tid,
            seat=seat,
            expected_version=view.version,
            action_json=moves.actions_json[0],
            idempotency_key=f"move-{n}",
        )
        last_answer = lobby.SubmitMove(last_request, metadata=last_md, timeout=10)
    assert last_answer is not None and last_answer.finished, "the game did not end"
    deadline = time.monotonic() + 20
    while lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid)).status != (
        lobby_pb2.TABLE_STATUS_FINISHED
    ):
        assert time.monotonic() < deadline, "the lobby never recorded the result"
        time.sleep(0.1)
    entries = rdb.xlen(KeySpace(stack.prefix).log(table.game_id))
    again = lobby.SubmitMove(last_request, metadata=last_md, timeout=10)
    assert again == last_answer
    assert rdb.xlen(KeySpace(stack.prefix).log(table.game_id)) == entries
    # a move that is not a retry of an applied one: the table is not running
    fresh = lobby_pb2.SubmitMoveRequest()
    fresh.CopyFrom(last_request)
    fresh.idempotency_key = "never-used"
    fresh.expected_version = last_answer.version
    for request in (fresh, lobby_pb2.SubmitMoveRequest(**_without_key(last_request))):
        with pytest.raises(grpc.RpcError) as err:
            lobby.SubmitMove(request, metadata=last_md, timeout=10)
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert error_reason(err.value) == "not_running"
    assert rdb.xlen(KeySpace(stack.prefix).log(table.game_id)) == entries


def _without_key(request: lobby_pb2.SubmitMoveRequest) -> dict:
    return dict(
        table_id=request.table_id,
        seat=request.seat,
        expected_version=request.expected_version,
        action_json=request.action_json,
    )
