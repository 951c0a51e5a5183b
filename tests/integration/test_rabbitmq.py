"""The bots on RabbitMQ, the production broker (``ROUNDHOUSE_BROKER_URL=amqp://...``; issue 17,
item 2): the bot queue is a quorum queue with late acks, bots play whole games through it, a
duplicated task moves once, and a worker killed mid-turn has its task delivered again at once
(the broker sees the connection close) without any seat moving twice.

RabbitMQ runs on localhost on this machine and in CI (``.ci/run`` starts the installed server if
it is down); ``ROUNDHOUSE_TEST_AMQP_URL`` points the tests at another one.
"""

from __future__ import annotations

import os
import socket
import time
from urllib.parse import urlparse

import grpc
import kombu
import pytest
from celery import Celery

from roundhouse.v1 import game_pb2, game_pb2_grpc, lobby_pb2
from services.bots import heartbeat
from services.bots.celery_app import QUORUM, bot_queue, broker_conf
from services.cli.launcher import Stack
from services.platform.auth import internal
from services.platform.hotstore import KeySpace
from tests.integration.signin import DefaultCredentials, signed_in_lobby
from tests.integration.test_dead_worker import kill9, spawn_worker, version_of, wait_until

pytestmark = pytest.mark.integration
AMQP_URL = os.environ.get("ROUNDHOUSE_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")


@pytest.fixture(scope="module")
def amqp_url():
    parsed = urlparse(AMQP_URL)
    try:
        socket.create_connection((parsed.hostname, parsed.port or 5672), timeout=3).close()
    except OSError as exc:
        pytest.fail(f"RabbitMQ does not answer at {AMQP_URL} ({exc}); start rabbitmq-server")
    return AMQP_URL


@pytest.fixture(scope="module")
def amqp_stack(redis_url, amqp_url, tmp_path_factory):
    stack = Stack(
        ["railbarons", "transsib"],
        redis_url=redis_url,
        broker_url=amqp_url,
        workers=1,
        run_dir=tmp_path_factory.mktemp("amqp"),
        log_level="INFO",
    )
    with stack:
        yield stack


@pytest.fixture(scope="module")
def amqp_lobby(amqp_stack):
    with signed_in_lobby(amqp_stack) as (_, lobby):
        yield lobby


def _wait_finished(lobby, table_id, seconds=120):
    deadline = time.monotonic() + seconds
    while True:
        table = lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id))
        if table.status == lobby_pb2.TABLE_STATUS_FINISHED:
            return table
        assert time.monotonic() < deadline, "the game did not finish"
        time.sleep(0.2)


def _contiguous(rdb, prefix, game_id):
    entries = rdb.xrange(KeySpace(prefix).log(game_id))
    assert [int(f["version"]) for _, f in entries] == list(range(1, len(entries) + 1))
    return entries


@pytest.mark.parametrize("title", ["transsib"])  # every title's games: test_bot_games.py
def test_bots_play_whole_games_over_a_quorum_queue(amqp_stack, amqp_lobby, rdb_for, title):
    lobby = amqp_lobby
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title=title, num_players=3, seed=5))
    for seat in range(3):
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy="greedy"))
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    _wait_finished(lobby, table.table_id)
    entries = _contiguous(rdb_for(amqp_stack), amqp_stack.prefix, table.game_id)
    assert entries[-1][1]["finished"] == "1"
    with kombu.Connection(amqp_stack.broker_url) as conn:  # the queue is a quorum queue
        declared = kombu.Queue(
            bot_queue(amqp_stack.prefix), queue_arguments=QUORUM, channel=conn.channel()
        )
        declared.queue_declare(passive=True)  # exists, with these arguments


def test_a_duplicated_task_moves_once(amqp_stack, rdb_for):
    rdb = rdb_for(amqp_stack)
    channel = grpc.intercept_channel(
        grpc.insecure_channel(amqp_stack.rules_addresses["railbarons"]),
        DefaultCredentials(internal(amqp_stack.internal_secret, "tests")),
    )
    rules = game_pb2_grpc.GameRulesStub(channel)
    game_id = rules.CreateGame(
        game_pb2.CreateGameRequest(title="railbarons", num_players=3, seed=79)
    ).info.game_id  # no table: the dispatcher ignores it
    seat = rules.GetView(game_pb2.GetViewRequest(game_id=game_id)).active_seats[0]
    queue = bot_queue(amqp_stack.prefix)
    sender = Celery("test-sender", broker=amqp_stack.broker_url)
    sender.conf.update(**broker_conf(amqp_stack.broker_url, queue))
    for _ in range(3):
        sender.send_task(
            "roundhouse.bots.play_turn",
            args=["railbarons", game_id, seat, 0, "random"],
            queue=queue,
        )
    deadline = time.monotonic() + 30
    while rdb.xlen(KeySpace(amqp_stack.prefix).log(game_id)) < 1:
        assert time.monotonic() < deadline, "the task did not run"
        time.sleep(0.1)
    time.sleep(2)  # give the duplicates time to run
    assert rdb.xlen(KeySpace(amqp_stack.prefix).log(game_id)) == 1


def test_a_killed_workers_task_is_delivered_again_and_moves_once(amqp_stack, amqp_lobby, rdb_for):
    """The 10 s bound measures the recovery only: the replacement worker is ready
    (its start-up takes 9-11 s on a loaded machine) before the slow one is killed."""
    rdb = rdb_for(amqp_stack)
    lobby = amqp_lobby
    turns = heartbeat.turns_key(amqp_stack.prefix)
    kill9(amqp_stack, next(p for p in amqp_stack.procs if p.name == "worker"))
    slow = spawn_worker(amqp_stack, "slow", delay_s=600)
    table = lobby.CreateTable(lobby_pb2.CreateTableRequest(title="railbarons", num_players=2))
    for seat in range(2):
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy="random"))
    table = lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    wait_until(lambda: rdb.hlen(turns) == 1, "the slow worker never took the first turn")
    held = version_of(rdb, amqp_stack.prefix, table.game_id)  # held, unacknowledged
    spawn_worker(amqp_stack, "fresh", delay_s=0)  # ready and idle
    kill9(amqp_stack, slow)
    killed_at = time.monotonic()
    while version_of(rdb, amqp_stack.prefix, table.game_id) <= held:
        assert time.monotonic() - killed_at < 10, "the held turn did not resume in 10 s"
        time.sleep(0.05)
    # redelivered by RabbitMQ and enqueued again by the heartbeat path: one move a version
    wait_until(
        lambda: version_of(rdb, amqp_stack.prefix, table.game_id) >= held + 20,
        "the game did not go on",
    )
    _contiguous(rdb, amqp_stack.prefix, table.game_id)
