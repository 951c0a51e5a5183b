"""Bounded resources under attack (issue 13, items 1-3), on a stack of real
processes with a private Redis (``maxmemory`` 256 MB, ``noeviction``):

* ``lobby_rss_64_max_size``: 64 concurrent ``SubmitMove`` calls of the
  largest size the lobby takes (``services/platform/bounds.py``), and 64 of
  1 MiB (refused while they are read), 20 rounds; the lobby's resident
  memory: peak over baseline (bar 100 MB) and 5 s after (bar 20 MB over).
* ``one_client_attack``: one account does what filled Redis before: options
  padded with whitespace, a flood of tables (created and started, games of
  bots), 500 watches; the Redis memory it added, what it got (tables,
  watches) and whether another client still watches.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent import futures
from pathlib import Path

import grpc
import redis

from benchmarks.common import Measurement
from roundhouse.v1 import lobby_pb2, lobby_pb2_grpc
from services.cli.launcher import Stack
from services.platform import bounds
from services.platform.grpc_errors import error_reason
from tests.integration.faults import FaultRedis
from tests.integration.signin import lobby_stub, signed_in_lobby

ROUNDS = 20
SMALL = int(os.environ.get("ROUNDHOUSE_BENCH_RSS_SMALL", "1"))
HUGE = int(os.environ.get("ROUNDHOUSE_BENCH_RSS_HUGE", "1"))


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class _Peak:
    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss_mb(self.pid))
            time.sleep(0.02)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.thread.join()


def _stack(tmp: Path):
    fault_redis = FaultRedis(tmp / "redis")
    with redis.Redis.from_url(fault_redis.url) as r:
        r.config_set("maxmemory", 256 * 1024 * 1024)
    return fault_redis, Stack(["railbarons"], redis_url=fault_redis.url, workers=1, run_dir=tmp)


def _max_size_move(table_id: str) -> lobby_pb2.SubmitMoveRequest:
    limit = bounds.LOBBY_MESSAGE_BYTES["/roundhouse.v1.Lobby/SubmitMove"]
    move = lobby_pb2.SubmitMoveRequest(
        table_id=table_id,
        seat=0,
        expected_version=0,
        idempotency_key="k" * bounds.IDEMPOTENCY_KEY_MAX,
        action_json='{"type":"pass","x":"' + "y" * (bounds.ACTION_JSON_MAX - 40) + '"}',
    )
    assert move.ByteSize() <= limit
    return move


def lobby_rss_64_max_size() -> Measurement:
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="rh-bench-limits-"))
    fault_redis, stack = _stack(tmp)
    try:
        with stack, signed_in_lobby(stack) as (people, lobby):
            pid = next(p.popen.pid for p in stack.procs if p.name == "lobby")
            create = lobby_pb2.CreateTableRequest(title="railbarons", num_players=2)
            table = lobby.CreateTable(create)
            lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=0))
            lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=1, policy="random"))
            lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
            small = _max_size_move(table.table_id)
            huge = lobby_pb2.SubmitMoveRequest(
                table_id=table.table_id, seat=0, action_json="[" + " " * (1 << 20) + "]"
            )
            time.sleep(2)
            base = _rss_mb(pid)
            codes: dict[str, int] = {}
            with _Peak(pid) as peak, futures.ThreadPoolExecutor(128) as pool:
                for _ in range(ROUNDS):
                    calls = [pool.submit(_call, lobby, small) for _ in range(64 * SMALL)]
                    calls += [pool.submit(_call, lobby, huge) for _ in range(64 * HUGE)]
                    for c in calls:
                        codes[c.result()] = codes.get(c.result(), 0) + 1
            time.sleep(5)
            after = _rss_mb(pid)
    finally:
        fault_redis.stop()
    rise = peak.peak - base
    return Measurement(
        "lobby RSS rise, 64 concurrent max-size requests",
        rise,
        "MB",
        100,
        higher_is_better=False,
        detail=f"baseline {base:.1f} MB, peak {peak.peak:.1f} MB, 5 s after {after:.1f} MB "
        f"({after - base:+.1f} MB, bar +20); {ROUNDS} rounds of 64 x {small.ByteSize()} B "
        f"+ 64 x 1 MiB; answers {codes}",
    )


def _call(lobby, request) -> str:
    try:
        lobby.SubmitMove(request, timeout=30)
        return "OK"
    except grpc.RpcError as err:
        return f"{err.code().name}:{error_reason(err)}"


def one_client_attack() -> Measurement:
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="rh-bench-attack-"))
    fault_redis, stack = _stack(tmp)
    try:
        with stack, signed_in_lobby(stack) as (people, lobby):
            r = redis.Redis.from_url(fault_redis.url)
            mallory = people.sign_up("mallory")
            with grpc.insecure_channel(stack.lobby_address) as channel:
                attacker = lobby_stub(channel, mallory)
                before = r.info("memory")["used_memory"]
                padded = "{" + " " * (bounds.OPTIONS_JSON_MAX - 2) + "}"
                too_big = "{" + " " * (1 << 20) + "}"
                outcomes: dict[str, int] = {}
                created = []
                for options in [padded, too_big] + [""] * 60:
                    try:
                        t = attacker.CreateTable(
                            lobby_pb2.CreateTableRequest(
                                title="railbarons", num_players=2, options_json=options
                            )
                        )
                        created.append(t)
                        outcomes["created"] = outcomes.get("created", 0) + 1
                    except grpc.RpcError as err:
                        key = error_reason(err) or err.code().name
                        outcomes[key] = outcomes.get(key, 0) + 1
                stored_options = sum(len(t.options_json) for t in created)
                for t in created:  # every flood table becomes a game of bots
                    for seat in (0, 1):
                        attacker.AddBot(
                            lobby_pb2.AddBotRequest(table_id=t.table_id, seat=seat, policy="random")
                        )
                    attacker.StartTable(lobby_pb2.StartTableRequest(table_id=t.table_id))
                time.sleep(3)
                games_memory = r.info("memory")["used_memory"] - before
                watch = lobby_pb2.WatchTableRequest(table_id=created[0].table_id)
                calls = [
                    attacker.WatchTable(watch, timeout=20) for _ in range(500)
                ]  # one connection, one account
                admitted = refused = 0
                time.sleep(3)
                for c in calls:
                    if c.done() and c.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                        refused += 1
                    else:
                        admitted += 1
                with grpc.insecure_channel(
                    stack.lobby_address, options=[("grpc.use_local_subchannel_pool", 1)]
                ) as other:
                    theirs = lobby_pb2_grpc.LobbyStub(other).WatchTable(watch, timeout=20)
                    first = next(iter(theirs), None)
                    other_ok = first is not None
                for c in calls:
                    c.cancel()
                after = r.info("memory")["used_memory"] - before
    finally:
        fault_redis.stop()
    return Measurement(
        "Redis memory added by one client at its limits",
        after / 1024 / 1024,
        "MB",
        256 * 0.05,
        higher_is_better=False,
        detail=f"tables: {outcomes}; options stored {stored_options} chars in all; "
        f"Redis after the games {games_memory / 1024:.0f} KB; watches admitted {admitted}, "
        f"refused {refused}; another client watches: {other_ok}; bar: 5% of maxmemory 256 MB",
    )


BENCHMARKS = [lobby_rss_64_max_size, one_client_attack]
