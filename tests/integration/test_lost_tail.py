"""Lost Redis writes (issue 13, item 4): the last entries of a game's stream
vanish behind the rules service's back (as after a failover to a lagging
replica). Without restarting anything, the service notices on the next call,
rebuilds from the stream, announces ``game_rewound`` on the lifecycle stream,
ends open watches with ABORTED ``game_rewound``, and the game moves again
within 5 s; a retry of a lost move with its key is applied afresh."""

from __future__ import annotations

import json
import threading
import time

import grpc
import pytest

from roundhouse.v1 import game_pb2
from services.platform.grpc_errors import error_info, error_reason
from services.platform.hotstore import KeySpace
from tests.integration.test_bad_input import first_legal, new_game, submit

pytestmark = pytest.mark.integration


def _rewound_events(rdb, prefix, game_id):
    return [
        fields
        for _, fields in rdb.xrange(KeySpace(prefix).lifecycle(game_id))
        if fields.get("game_id") == game_id and fields.get("type") == "game_rewound"
    ]


def test_a_lost_stream_tail_is_noticed_and_the_game_moves_again(rules, rdb, stack):
    stub, game_id = new_game(rules)
    requests = {}
    for n in range(6):
        version, seat, legal = first_legal(stub, game_id)
        action_json = legal.actions_json[0]
        requests[version] = (seat, action_json, f"k-{n}")
        answer = submit(stub, game_id, seat, version, action_json=action_json, key=f"k-{n}")
    assert answer.version == 6
    watch = stub.WatchGame(game_pb2.WatchGameRequest(game_id=game_id, from_version=6), timeout=20)
    ended: list[grpc.RpcError] = []

    def follow() -> None:
        try:
            for _ in watch:
                pass
        except grpc.RpcError as err:
            ended.append(err)

    watcher = threading.Thread(target=follow)
    watcher.start()
    time.sleep(0.5)  # the watch is open and blocking
    log_key = KeySpace(stack.prefix).log(game_id)
    assert rdb.xdel(log_key, "5-0", "6-0") == 2  # the tail is lost; the idempotency hash is not
    started = time.monotonic()
    watcher.join(10)  # the open watch notices on its next read (within its 2 s block)
    assert ended and ended[0].code() == grpc.StatusCode.ABORTED
    assert error_reason(ended[0]) == "game_rewound"
    view = stub.GetView(game_pb2.GetViewRequest(game_id=game_id), timeout=5)
    assert view.version == 4
    seat, action_json, key = requests[4]
    retried = submit(stub, game_id, seat, 4, action_json=action_json, key=key)
    assert retried.version == 5  # the lost move, applied again
    version, seat, legal = first_legal(stub, game_id)
    assert version == 5
    assert submit(stub, game_id, seat, 5, action_json=legal.actions_json[0], key="new").version == 6
    assert time.monotonic() - started < 5
    assert rdb.xlen(log_key) == 6
    events = _rewound_events(rdb, stack.prefix, game_id)
    assert events and json.loads(events[0]["version"]) == 4
    assert json.loads(events[0]["lost_from"]) == 6


def test_a_move_sent_at_the_lost_version_is_told_the_real_one(rules, rdb, stack):
    """The first call after the loss is the move itself, at the version the
    client last saw (now lost): the answer names the stream's version, and a
    move there succeeds (no contradictory "at 6" / "at 4" answers)."""
    stub, game_id = new_game(rules)
    for _ in range(6):
        version, seat, legal = first_legal(stub, game_id)
        submit(stub, game_id, seat, version, action_json=legal.actions_json[0])
    rdb.xdel(KeySpace(stack.prefix).log(game_id), "4-0", "5-0", "6-0")
    for stale in (6, 5):
        with pytest.raises(grpc.RpcError) as err:
            submit(stub, game_id, 0, stale, action_json='{"type":"pass"}')
        assert err.value.code() == grpc.StatusCode.OUT_OF_RANGE
        assert error_reason(err.value) == "future_version"
        assert error_info(err.value).metadata["current_version"] == "3"
    version, seat, legal = first_legal(stub, game_id)
    assert version == 3
    assert submit(stub, game_id, seat, 3, action_json=legal.actions_json[0]).version == 4
