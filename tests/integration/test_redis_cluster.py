"""The real services on a Redis Cluster of 3 masters and 3 replicas (issue 17, item 1).

The stack (every service, ``ROUNDHOUSE_REDIS_CLUSTER=1``, the bot tasks on a separate
single Redis as their broker) plays a whole bot game of each title; every consumer group
reads every lifecycle shard to its end. Then a master is SIGKILLed mid-play: its replica
takes over, and no move the rules service acknowledged is lost, because the services
acknowledge a move only once ``WAIT`` saw it on a replica (``redis_wait_replicas=1``).
To make that matter, the master's replica is made to lag just before the kill (stopped,
its link full: ``LocalRedisCluster.lag_replica``), so the master's last writes exist only in
its own memory: without WAIT the moves acknowledged meanwhile are lost
(``benchmarks/bench_failover.py`` counts them), with WAIT they are refused
``not_replicated``, retried with their idempotency key, and applied on the new master.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter

import grpc
import pytest
import redis

from roundhouse.v1 import game_pb2, game_pb2_grpc, lobby_pb2
from services.cli.launcher import Stack
from services.platform.auth import internal
from services.platform.hotstore import sync_client
from services.rules.titles import available_titles
from tests.integration.failover import MoveClient, lost_moves
from tests.integration.signin import DefaultCredentials, signed_in_lobby
from tests.integration.test_bot_games import play

pytestmark = pytest.mark.integration

GROUPS = {
    "archiver",
    "bot-dispatcher",
    "clocks",
    "lobby",
    "lobby-events",
    "ratings",
    "tournaments",
}
"""Every consumer group of the lifecycle stream (services/platform/settings.py)."""

WAIT = {"ROUNDHOUSE_REDIS_WAIT_REPLICAS": "1", "ROUNDHOUSE_REDIS_WAIT_TIMEOUT_MS": "1000"}
"""WAIT on, with a timeout a loaded 2-core machine meets (a replica descheduled for more than
100 ms made bot moves refused ``not_replicated`` and retried after 1, 2, 4... s: one bot game
took over 5 minutes at load ~10)."""
LAG_S = 1.5
"""How long the victim's replica lags before the kill: past the WAIT timeout, so moves sent
meanwhile are refused ``not_replicated``."""


@pytest.fixture(scope="module")
def cluster_stack(redis_cluster_session, redis_url, tmp_path_factory):
    """Every service on the cluster, WAIT on; the Celery broker is the session's single Redis."""
    redis_cluster_session.wait_ok()
    with Stack(
        available_titles(),
        redis_url=redis_cluster_session.url,
        redis_cluster=True,
        broker_url=redis_url,
        workers=2,
        run_dir=tmp_path_factory.mktemp("cluster-stack"),
        log_level="INFO",
        env=WAIT,
    ) as stack:
        yield stack


@pytest.fixture(scope="module")
def cluster_lobby(cluster_stack):
    with signed_in_lobby(cluster_stack) as (_, lobby):
        yield lobby


@pytest.fixture
def crdb(cluster_stack):
    client = sync_client(cluster_stack.redis_url, cluster=True, decode_responses=True)
    yield client
    client.close()


def _lag_gone(r: redis.RedisCluster, streams: tuple[str, ...]) -> list[str]:
    """What is still unread or unacknowledged: ``shard group lag/pending`` per lagging pair."""
    left = []
    for stream in streams:
        if not r.exists(stream):
            continue
        groups = {g["name"]: g for g in r.xinfo_groups(stream)}
        missing = GROUPS - set(groups)
        if missing:
            left.append(f"{stream} has no group {sorted(missing)}")
        for name, g in groups.items():
            if g["lag"] or g["pending"]:
                left.append(f"{stream} {name} lag {g['lag']} pending {g['pending']}")
    return left


def test_bots_play_a_whole_game_of_each_title_and_every_group_reads_every_shard(
    cluster_stack, cluster_lobby, crdb
):
    keys = cluster_stack.keys
    cases = [("railbarons", ["greedy", "random", "random"]), ("transsib", ["greedy", "random"])]
    cases.append(("e1894", ["greedy", "random", "random"]))
    games = []
    for title, policies in cases:
        table, updates = play(cluster_lobby, title, policies, seed=17)
        assert updates and updates[-1].finished
        stream = crdb.xrange(keys.log(table.game_id))
        assert [int(f["version"]) for _, f in stream] == [u.version for u in updates]
        assert [f["action"] for _, f in stream] == [u.action_json for u in updates]
        games.append(table)
    deadline = time.monotonic() + 60
    for table in games:  # the lobby records each result from its shard
        while cluster_lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table.table_id)).status != (
            lobby_pb2.TABLE_STATUS_FINISHED
        ):
            assert time.monotonic() < deadline, f"{table.game_id}: the result was not recorded"
            time.sleep(0.2)
    # every group reads every shard to its end (the shards these games used among them)
    used = {keys.lifecycle(t.game_id) for t in games}
    assert used <= set(keys.lifecycle_streams)
    while left := _lag_gone(crdb, keys.lifecycle_streams):
        assert time.monotonic() < deadline, left
        time.sleep(0.2)
    for table in games:  # each game's events are on its shard, in the game's own slot
        shard = keys.lifecycle(table.game_id)
        assert crdb.keyslot(shard) == crdb.keyslot(keys.log(table.game_id))
        events = [f for _, f in crdb.xrange(shard) if f.get("game_id") == table.game_id]
        assert events[0]["type"] == "game_created" and events[-1]["type"] == "game_finished"


def test_no_acknowledged_move_is_lost_when_a_master_dies_mid_play(
    cluster_stack, cluster_lobby, crdb, redis_cluster
):
    keys = cluster_stack.keys
    credentials = DefaultCredentials(internal(cluster_stack.internal_secret, "tests"))
    with grpc.intercept_channel(
        grpc.insecure_channel(cluster_stack.rules_addresses["railbarons"]), credentials
    ) as channel:
        stub = game_pb2_grpc.GameRulesStub(channel)
        game_ids = [
            stub.CreateGame(
                game_pb2.CreateGameRequest(title="railbarons", num_players=3, seed=100 + i)
            ).info.game_id
            for i in range(6)
        ]
        # the victim: the master of the first game's slot (so some games surely live there)
        victim_port = int(crdb.get_node_from_key(keys.log(game_ids[0])).port)
        victim = next(n for n in redis_cluster.nodes if n.port == victim_port)
        on_victim = [g for g in game_ids if crdb.get_node_from_key(keys.log(g)).port == victim_port]
        stop = threading.Event()
        clients = [MoveClient(stub, g, stop, seed=i) for i, g in enumerate(game_ids)]
        bots = cluster_lobby.CreateTable(
            lobby_pb2.CreateTableRequest(title="railbarons", num_players=3, seed=5)
        )
        for seat in range(3):
            cluster_lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=bots.table_id, seat=seat, policy="random")
            )
        bots = cluster_lobby.StartTable(lobby_pb2.StartTableRequest(table_id=bots.table_id))
        for c in clients:
            c.start()
        try:
            _until(lambda: all(len(c.acks) >= 5 for c in clients), 60, "moves before the kill")
            replica = redis_cluster.lag_replica(victim)  # the master's next writes: its own
            time.sleep(LAG_S)
            before = {g: len(c.acks) for g, c in zip(game_ids, clients, strict=True)}
            redis_cluster.kill(victim)
            redis_cluster.resume(replica)
            redis_cluster.wait_failover()
            redis_cluster.restart(victim)  # back as a replica: WAIT can be met again
            _until(
                lambda: all(len(c.acks) >= before[c.game_id] + 5 or c.finished for c in clients),
                90,
                "moves after the failover",
            )
        finally:
            stop.set()
            for c in clients:
                c.join(20)
    assert [c.errors for c in clients] == [[] for _ in clients]
    assert on_victim  # the dead master held some of the games
    assert lost_moves(crdb, keys, clients) == []
    refused = sum((c.refusals for c in clients), start=Counter())
    assert refused["not_replicated"] >= 1, refused  # the lagging replica made WAIT time out
    # the bot game went on through the failover and finished, its log contiguous
    updates = _watch_to_the_end(cluster_lobby, bots.table_id, 300)
    assert updates[-1].finished
    versions = [int(f["version"]) for _, f in crdb.xrange(keys.log(bots.game_id))]
    assert versions == list(range(1, len(versions) + 1)) == [u.version for u in updates]
    assert json.loads(crdb.get(keys.meta(bots.game_id)))["num_players"] == 3


def _watch_to_the_end(lobby, table_id: str, timeout: float) -> list:
    """The table's moves to the game's end, as a client follows them: a watch that ends
    UNAVAILABLE (the game's storage failing over: "try again") is opened again from the
    last version seen, until ``timeout`` seconds have passed."""
    updates: list = []
    deadline = time.monotonic() + timeout
    while True:
        last = updates[-1].version if updates else 0
        request = lobby_pb2.WatchTableRequest(table_id=table_id, from_version=last)
        try:
            for update in lobby.WatchTable(request, timeout=max(1.0, deadline - time.monotonic())):
                updates.append(update)
            return updates
        except grpc.RpcError as err:
            if err.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _until(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
