"""A resignation in a title that continues (Russian Railroads: the seat is
handed to a hosted bot) on the real services: the dispatcher plays the
resigned seat to the end, and the resigned seat is ranked last."""

from __future__ import annotations

import time

import pytest

from roundhouse.v1 import lobby_pb2

pytestmark = pytest.mark.integration


def test_a_resigned_seat_is_played_out_by_a_hosted_bot_and_ranked_last(lobby, people):
    ada = people.sign_up()
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title="transsib", num_players=2))
    tid = table.table_id
    lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=ada.md)
    lobby.AddBot(lobby_pb2.AddBotRequest(table_id=tid, seat=1, policy="greedy"))
    lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid))
    table = lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md)
    assert table.status == lobby_pb2.TABLE_STATUS_RUNNING
    assert (table.seats[0].resigned, table.seats[0].policy) == (True, "random")
    updates = list(lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=tid), timeout=300))
    assert updates[-1].finished
    resign = [i for i, u in enumerate(updates) if u.action_json == '{"type":"resign"}']
    assert len(resign) == 1 and updates[resign[0]].seat == 0
    # after it, the hosted bot moved for seat 0
    assert any(u.seat == 0 for u in updates[resign[0] + 1 :])
    deadline = time.monotonic() + 30
    while lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid)).status != (
        lobby_pb2.TABLE_STATUS_FINISHED
    ):
        assert time.monotonic() < deadline, "the lobby never recorded the finished game"
        time.sleep(0.1)
    result = lobby.GetTableResult(lobby_pb2.GetTableRequest(table_id=tid))
    ranks = {s.seat: s.rank for s in result.standings}
    assert ranks[0] == 2 and ranks[1] == 1
