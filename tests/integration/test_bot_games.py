"""Full bot games through the real services (platform issue, point 9).

The lobby creates a table of bots; the dispatcher turns every bot turn into a
Celery task; the worker submits moves to the rules service, which appends
them to the game's Redis stream. Checks: the stream holds exactly the applied
actions in order (the moves the lobby streamed to a watcher), and replaying
the stream with the engine gives the result the lobby reports.
"""

from __future__ import annotations

import json
import time

import pytest

from roundhouse.v1 import lobby_pb2
from services.platform.hotstore import KeySpace
from services.rules.titles import get_game

pytestmark = pytest.mark.integration

CASES = [
    ("railbarons", ["greedy", "random", "random"]),
    ("railbarons", ["random", "greedy", "random", "greedy", "random", "random"]),
    ("transsib", ["greedy", "random", "random", "greedy"]),
    ("e1894", ["greedy", "random", "random"]),
    ("e1894", ["greedy", "random", "random", "greedy"]),
]


def play(lobby, title, policies, seed):
    table = lobby.CreateTable(
        lobby_pb2.CreateTableRequest(title=title, num_players=len(policies), seed=seed)
    )
    for seat, policy in enumerate(policies):
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy=policy))
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    assert table.status == lobby_pb2.TABLE_STATUS_RUNNING
    updates = list(
        lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=table.table_id), timeout=300)
    )
    return table, updates


@pytest.mark.parametrize(("title", "policies"), CASES, ids=[f"{t}-{len(p)}p" for t, p in CASES])
def test_bots_play_a_full_game_and_the_stream_is_the_truth(lobby, rdb, stack, title, policies):
    table, updates = play(lobby, title, policies, seed=4242 + len(policies))
    assert updates and updates[-1].finished
    assert [u.version for u in updates] == list(range(1, len(updates) + 1))

    prefix = stack.prefix
    stream = rdb.xrange(KeySpace(prefix).log(table.game_id))
    assert [int(sid.split("-")[0]) for sid, _ in stream] == [u.version for u in updates]
    assert [f["action"] for _, f in stream] == [u.action_json for u in updates]
    assert [int(f["seat"]) for _, f in stream] == [u.seat for u in updates]
    assert sum(f["finished"] == "1" for _, f in stream) == 1

    # the lobby's lifecycle consumer records the result by itself
    deadline = time.monotonic() + 30
    while lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table.table_id)).status != (
        lobby_pb2.TABLE_STATUS_FINISHED
    ):
        assert time.monotonic() < deadline, "the lobby never recorded the finished game"
        time.sleep(0.1)
    result = lobby.GetTableResult(lobby_pb2.GetTableRequest(table_id=table.table_id))

    meta = json.loads(rdb.get(KeySpace(prefix).meta(table.game_id)))
    game = get_game(title)
    replayed = game.replay(
        meta["num_players"],
        meta["seed"],
        meta["options"],
        [(int(f["seat"]), json.loads(f["action"])) for _, f in stream],
    )
    assert replayed.is_terminal()
    expected = replayed.result()
    by_seat = {s.seat: s for s in result.standings}
    assert [by_seat[i].score for i in range(len(policies))] == [int(s) for s in expected.scores]
    assert [by_seat[i].rank for i in range(len(policies))] == list(expected.ranks)
    assert result.end_reason == expected.end_reason
    # every seat's moves came from the bots it was given: each seat moved at least once
    assert {u.seat for u in updates} == set(range(len(policies)))
