"""Failovers of the Redis Cluster under play: acknowledged moves lost with and without
``WAIT``, and what ``WAIT`` costs a move (issue 17, item 1; bar: 0 lost with WAIT over at
least 20 failovers).

A local Redis Cluster of 3 masters and 3 replicas (``cluster-node-timeout`` 1 s,
:class:`services.cli.redis_cluster.LocalRedisCluster`) and two Chicago Express rules
services on it, side by side: one acknowledges a move only once ``WAIT`` saw it on a replica
(``redis_wait_replicas=1``, ``redis_wait_timeout_ms=100``), the other at once (WAIT off).
Each has ``ROUNDHOUSE_BENCH_FAILOVER_GAMES`` (default 8) games played at once by clients
(:class:`tests.integration.failover.MoveClient`: random legal moves, an idempotency key per
move, UNAVAILABLE retried with the same key); a finished game is replaced by a new one.

1. **Latency**, both services in the same minutes: ``ROUNDHOUSE_BENCH_FAILOVER_QUIET_S``
   (default 20) seconds of play without faults; the p50 and p99 of the acknowledged moves
   (the client's round trip to the rules service).
2. **Failovers**: ``ROUNDHOUSE_BENCH_FAILOVERS`` (default 20) times: play
   ``ROUNDHOUSE_BENCH_FAILOVER_PLAY_S`` (2) seconds; take the next master (round robin);
   make its replica lag for 0.5 s (stopped, its link full: the master's last writes exist
   only in its memory, as behind a slow or saturated link; ``ROUNDHOUSE_BENCH_FAILOVER_LAG=0``
   for plain kills); SIGKILL the master; wait until its replica took over; start the killed
   node again (it rejoins as a replica and copies its master's data).
3. Every acknowledged move of both services is looked up in the logs
   (:func:`tests.integration.failover.lost_moves`: the entry at its version, with its action,
   appended while the move was in flight).
4. **The longest stall a player saw** during the failovers: the longest time from a move's
   first send to its acknowledgement (its retries through UNAVAILABLE and ``not_replicated``
   included), and the longest gap between two acknowledged moves of one game.

Run: ``nice -n 5 .venv/bin/python -m benchmarks.run bench_failover`` (about 3-4 minutes).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from benchmarks.common import Measurement
from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.cli.launcher import free_port
from services.cli.redis_cluster import LocalRedisCluster
from services.platform.auth import internal
from services.platform.db import upgrade
from services.platform.hotstore import KeySpace, sync_client
from tests.integration.failover import MoveClient, lost_moves, percentile
from tests.integration.signin import DefaultCredentials

TITLE = "railbarons"
SECRET = "bench-failover"
LAG_S = 0.5


class RulesService:
    """One rules service process on the cluster, and the clients playing its games."""

    def __init__(self, name: str, cluster: LocalRedisCluster, workdir: Path, wait: bool) -> None:
        self.name, self.wait = name, wait
        self.keys = KeySpace(f"bench-failover-{name}-{os.urandom(3).hex()}")
        self.port = free_port()
        database = f"sqlite+aiosqlite:///{workdir / f'{name}.db'}"
        upgrade(database)
        env = {
            **os.environ,
            "ROUNDHOUSE_REDIS_URL": cluster.url,
            "ROUNDHOUSE_REDIS_CLUSTER": "1",
            "ROUNDHOUSE_KEY_PREFIX": self.keys.prefix,
            "ROUNDHOUSE_LIFECYCLE_SHARDS": str(self.keys.shards),
            "ROUNDHOUSE_REDIS_WAIT_REPLICAS": "1" if wait else "0",
            "ROUNDHOUSE_REDIS_WAIT_TIMEOUT_MS": "100",
            "ROUNDHOUSE_INTERNAL_SECRET": SECRET,
            "ROUNDHOUSE_LISTEN_PORT": str(self.port),
            "ROUNDHOUSE_DATABASE_URL": database,
            "ROUNDHOUSE_LOG_LEVEL": "WARNING",
            "ROUNDHOUSE_LOG_FORMAT": "json",
        }
        log = open(workdir / f"{name}.log", "ab")  # noqa: SIM115 - closed below
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"services.{TITLE}.service.server"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self.channel = grpc.intercept_channel(
            grpc.insecure_channel(f"127.0.0.1:{self.port}"),
            DefaultCredentials(internal(SECRET, "bench")),
        )
        self.stub = game_pb2_grpc.GameRulesStub(self.channel)
        self.clients: list[MoveClient] = []
        self.stop = threading.Event()
        self._seed = 0

    def wait_healthy(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        with grpc.insecure_channel(f"127.0.0.1:{self.port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.name} exited with {self.proc.returncode}")
                with contextlib.suppress(grpc.RpcError):
                    answer = health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if answer.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.name} did not become healthy")
                time.sleep(0.2)

    def keep_playing(self, games: int) -> None:
        """Start games until ``games`` clients play (a finished one is replaced)."""
        playing = [c for c in self.clients if c.is_alive()]
        for _ in range(games - len(playing)):
            self._seed += 1
            try:
                created = self.stub.CreateGame(
                    game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=self._seed),
                    timeout=30,
                )
            except grpc.RpcError as err:
                if err.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                return  # a failover under way: the next round starts it
            client = MoveClient(self.stub, created.info.game_id, self.stop, seed=self._seed)
            self.clients.append(client)
            client.start()

    def acks(self, since: float = 0.0) -> list:
        return [a for c in self.clients for a in c.acks if a.sent_ms >= since * 1000]

    def refusals(self) -> Counter[str]:
        return sum((c.refusals for c in self.clients), start=Counter())

    def close(self) -> None:
        self.stop.set()
        for c in self.clients:
            c.join(15)
        self.channel.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, 15)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)


def failover_bench() -> Measurement:
    failovers = int(os.environ.get("ROUNDHOUSE_BENCH_FAILOVERS", "20"))
    games = int(os.environ.get("ROUNDHOUSE_BENCH_FAILOVER_GAMES", "8"))
    quiet_s = float(os.environ.get("ROUNDHOUSE_BENCH_FAILOVER_QUIET_S", "20"))
    play_s = float(os.environ.get("ROUNDHOUSE_BENCH_FAILOVER_PLAY_S", "2"))
    lag = os.environ.get("ROUNDHOUSE_BENCH_FAILOVER_LAG", "1") != "0"
    console = Console()
    workdir = Path(tempfile.mkdtemp(prefix="rh-bench-failover-"))
    took: list[float] = []
    with LocalRedisCluster(masters=3, replicas=1, node_timeout_ms=1000) as cluster:
        services = [
            RulesService("wait", cluster, workdir, wait=True),
            RulesService("nowait", cluster, workdir, wait=False),
        ]
        try:
            for s in services:
                s.wait_healthy()
            with Progress(console=console) as progress:
                quiet = progress.add_task("latency, no faults (s)", total=quiet_s)
                started = time.time()
                while time.time() - started < quiet_s:
                    for s in services:
                        s.keep_playing(games)
                    time.sleep(0.5)
                    progress.update(quiet, completed=min(quiet_s, time.time() - started))
                latency = {
                    s.name: [
                        a.latency_s
                        for a in s.acks(started)
                        if a.acked_ms < (started + quiet_s) * 1000
                    ]
                    for s in services
                }
                faults_from_ms = time.time() * 1000
                bar = progress.add_task("failovers", total=failovers)
                for n in range(failovers):
                    t_end = time.monotonic() + play_s
                    while time.monotonic() < t_end:
                        for s in services:
                            s.keep_playing(games)
                        time.sleep(0.2)
                    masters = sorted(cluster.live_masters(), key=lambda m: m.port)
                    victim = masters[n % len(masters)]
                    t0 = time.monotonic()
                    if lag:
                        replica = cluster.lag_replica(victim)
                        time.sleep(LAG_S)
                    cluster.kill(victim)
                    if lag:
                        cluster.resume(replica)
                    cluster.wait_failover()
                    took.append(time.monotonic() - t0 - (LAG_S if lag else 0))
                    cluster.restart(victim)
                    refused = services[0].refusals()["not_replicated"]
                    progress.update(
                        bar,
                        advance=1,
                        description=f"failovers (last {took[-1]:.1f} s; with WAIT "
                        f"{len(services[0].acks())} acked, {refused} not_replicated; "
                        f"without {len(services[1].acks())} acked)",
                    )
        finally:
            for s in services:
                s.close()
        with contextlib.closing(sync_client(cluster.url, cluster=True, decode_responses=True)) as r:
            lost = {s.name: lost_moves(r, s.keys, s.clients) for s in services}
            for game_id, ack in lost["wait"]:  # what was lost, to look into
                at = f"{ack.version}-0"
                now = r.xrange(services[0].keys.log(game_id), min=at, max=at)
                console.print(f"lost with WAIT: {game_id} {ack}; the log now: {now}")
    errors = [e for s in services for c in s.clients for e in c.errors]
    stall = {s.name: stalls(s, faults_from_ms) for s in services}
    for error in errors:
        console.print(f"client error: {error}")
    table = Table(title=f"{failovers} failovers ({'lagging replica' if lag else 'plain kill'})")
    for col in (
        "",
        "acknowledged",
        "lost",
        "not_replicated",
        "unavailable",
        "p50 ms",
        "p99 ms",
        "longest move s",
        "longest gap s",
    ):
        table.add_column(col)
    for s in services:
        refused = s.refusals()
        table.add_row(
            "WAIT 1 replica, 100 ms" if s.wait else "no WAIT",
            str(len(s.acks())),
            str(len(lost[s.name])),
            str(refused["not_replicated"]),
            str(refused["storage_unavailable"]),
            f"{percentile(latency[s.name], 0.5) * 1000:.1f}",
            f"{percentile(latency[s.name], 0.99) * 1000:.1f}",
            f"{stall[s.name][0]:.1f}",
            f"{stall[s.name][1]:.1f}",
        )
    console.print(table)
    wait, nowait = services
    return Measurement(
        f"acknowledged moves lost over {failovers} failovers, with WAIT",
        len(lost["wait"]) + len(errors),
        "moves",
        0,
        higher_is_better=False,
        detail=f"with WAIT {len(wait.acks())} acknowledged, "
        f"{wait.refusals()['not_replicated']} refused not_replicated (retried); without WAIT "
        f"{len(lost['nowait'])} lost of {len(nowait.acks())}; move p50/p99 with WAIT "
        f"{percentile(latency['wait'], 0.5) * 1000:.1f}/"
        f"{percentile(latency['wait'], 0.99) * 1000:.1f} ms, without "
        f"{percentile(latency['nowait'], 0.5) * 1000:.1f}/"
        f"{percentile(latency['nowait'], 0.99) * 1000:.1f} ms ({quiet_s:.0f} s side by side, "
        f"no faults); failover {percentile(took, 0.5):.1f} s median, longest "
        f"{max(took, default=0):.1f} s; longest stall a player saw with WAIT: a move "
        f"{stall['wait'][0]:.1f} s from first send to acknowledgement, "
        f"{stall['wait'][1]:.1f} s between two moves of a game; {len(errors)} client "
        f"errors {errors[:3]}; load average {os.getloadavg()[0]:.1f}",
    )


def stalls(service: RulesService, from_ms: float) -> tuple[float, float]:
    """The longest a player of ``service`` waited during the failovers (s): for one move,
    from its first send to its acknowledgement; and between two acknowledged moves of one
    game (a game's client; the gaps of a client that ended its game are not counted)."""
    longest_move = max((a.latency_s for a in service.acks() if a.sent_ms >= from_ms), default=0.0)
    longest_gap = 0.0
    for client in service.clients:
        times = [a.acked_ms for a in client.acks if a.acked_ms >= from_ms]
        gaps = [(b - a) / 1000 for a, b in zip(times, times[1:], strict=False)]
        longest_gap = max([longest_gap, *gaps])
    return longest_move, longest_gap


BENCHMARKS = [failover_bench]
