"""Scale-out properties of the real services: a replica that never saw a game
rebuilds it from the stream; two replicas never both append a version; a
duplicated bot task moves once; a server stops gracefully on SIGTERM."""

from __future__ import annotations

import json
import signal
import sys
import time

import grpc
import pytest
from celery import Celery

from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.bots.celery_app import bot_queue
from services.cli.launcher import free_port
from services.platform.hotstore import KeySpace

pytestmark = pytest.mark.integration
TITLE = "railbarons"


@pytest.fixture
def replica(stack, internal_channel):
    """A second railbarons rules service on another port, same Redis and prefix."""
    address = f"127.0.0.1:{free_port()}"
    addresses = {**stack.rules_addresses, TITLE: address}
    proc = stack.spawn(
        f"replica-{address.rsplit(':', 1)[1]}",
        [sys.executable, "-m", "services.railbarons.service.server"],
        extra_env={"ROUNDHOUSE_RULES_ADDRESSES": json.dumps(addresses)},
    )
    stack.wait_healthy(address)
    yield game_pb2_grpc.GameRulesStub(internal_channel(address)), proc
    if proc.popen.poll() is None:
        proc.popen.send_signal(signal.SIGTERM)
        proc.popen.wait(20)
    stack.procs.remove(proc)


def advance(stub, game_id, steps):
    for _ in range(steps):
        view = stub.GetView(game_pb2.GetViewRequest(game_id=game_id))
        seat = view.active_seats[0]
        legal = stub.ListLegalActions(game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat))
        stub.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=game_id,
                seat=seat,
                expected_version=view.version,
                action_json=legal.actions_json[-1],
            )
        )


def test_a_replica_rebuilds_from_the_stream_and_both_stay_consistent(rules, replica):
    primary = rules[TITLE]
    second, _ = replica
    game_id = primary.CreateGame(
        game_pb2.CreateGameRequest(title=TITLE, num_players=4, seed=77)
    ).info.game_id
    advance(primary, game_id, 12)
    a = primary.GetView(game_pb2.GetViewRequest(game_id=game_id, seat=1))
    b = second.GetView(game_pb2.GetViewRequest(game_id=game_id, seat=1))
    assert (a.version, a.view_json) == (b.version, b.view_json) and a.version == 12
    advance(second, game_id, 5)  # moves through the replica...
    a = primary.GetView(game_pb2.GetViewRequest(game_id=game_id, seat=2))
    b = second.GetView(game_pb2.GetViewRequest(game_id=game_id, seat=2))
    assert (a.version, a.view_json) == (b.version, b.view_json) and a.version == 17


def test_two_replicas_racing_for_one_version_append_once(rules, replica, rdb, stack):
    primary = rules[TITLE]
    second, _ = replica
    game_id = primary.CreateGame(
        game_pb2.CreateGameRequest(title=TITLE, num_players=4, seed=78)
    ).info.game_id
    view = second.GetView(game_pb2.GetViewRequest(game_id=game_id))  # both have it cached
    seat = view.active_seats[0]
    legal = primary.ListLegalActions(game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat))
    req = game_pb2.SubmitActionRequest(
        game_id=game_id, seat=seat, expected_version=0, action_json=legal.actions_json[0]
    )
    primary.SubmitAction(req)
    with pytest.raises(grpc.RpcError) as err:
        second.SubmitAction(req)
    assert err.value.code() == grpc.StatusCode.ABORTED
    assert rdb.xlen(KeySpace(stack.prefix).log(game_id)) == 1
    # the losing replica caught up: it serves version 1
    assert second.GetView(game_pb2.GetViewRequest(game_id=game_id)).version == 1


def test_a_duplicated_bot_task_moves_once(rules, rdb, stack):
    """Two deliveries of the same play_turn task (as after a worker crash with
    acks_late): exactly one move is appended."""
    primary = rules[TITLE]
    game_id = primary.CreateGame(
        game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=79)
    ).info.game_id  # no table: the dispatcher ignores it
    seat = primary.GetView(game_pb2.GetViewRequest(game_id=game_id)).active_seats[0]
    sender = Celery("test-sender", broker=stack.redis_url)
    for _ in range(3):
        sender.send_task(
            "roundhouse.bots.play_turn",
            args=[TITLE, game_id, seat, 0, "random"],
            queue=bot_queue(stack.prefix),
        )
    deadline = time.monotonic() + 30
    while rdb.xlen(KeySpace(stack.prefix).log(game_id)) < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)  # give the duplicates time to run
    assert rdb.xlen(KeySpace(stack.prefix).log(game_id)) == 1


def test_sigterm_stops_a_server_gracefully(replica):
    _, proc = replica
    proc.popen.send_signal(signal.SIGTERM)
    assert proc.popen.wait(20) == 0
    assert "shutting down" in proc.log_path.read_text()
