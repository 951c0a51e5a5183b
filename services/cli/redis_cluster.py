"""A local Redis Cluster of ``redis-server`` processes, for the tests and the benchmarks.

:class:`LocalRedisCluster` starts ``masters * (1 + replicas)`` servers in cluster mode on free
ports (nothing persisted but each node's cluster configuration file, so a node restarted after a
kill rejoins as what the cluster says it is now), joins them with ``redis-cli --cluster create
... --cluster-replicas N --cluster-yes`` and waits for ``cluster_state:ok`` on every node. A
short ``cluster-node-timeout`` (``node_timeout_ms``) makes a failover take seconds: a master
that stops answering for that long is marked failing, and its replica is elected in its place.

Faults: :meth:`kill` (SIGKILL) a node, :meth:`wait_failover` until a replica took over its slots,
:meth:`restart` it (it comes back as a replica of the node that replaced it, and resyncs);
:meth:`lag_replica` makes a master's replica fall behind (stopped, its link full), so that the
master's next writes exist only in the master's memory until :meth:`resume`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import redis
from redis.crc import key_slot

from services.cli.launcher import NoRedis, free_port, wait_for_redis


@dataclasses.dataclass
class Node:
    """One ``redis-server`` of the cluster."""

    port: int
    bus_port: int
    workdir: Path
    proc: subprocess.Popen | None = None
    stopped: bool = False  # SIGSTOPped (lag_replica)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def client(self) -> redis.Redis:
        """A plain client of this node alone (``CLUSTER ...``, ``INFO``, ``ROLE``)."""
        return redis.Redis(port=self.port, decode_responses=True, socket_timeout=5)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and not self.stopped


class LocalRedisCluster:
    """Args:
    masters: master nodes (at least 3: Redis Cluster's own minimum for a majority).
    replicas: replicas per master.
    node_timeout_ms: ``cluster-node-timeout`` (a failover takes about twice this, plus the
        replica's election delay of 0.5-1 s).
    workdir: where each node keeps its files (one folder per node); None = a temporary
        folder removed by :meth:`stop`.
    """

    def __init__(
        self,
        masters: int = 3,
        replicas: int = 1,
        node_timeout_ms: int = 1000,
        workdir: Path | None = None,
    ) -> None:
        if masters < 3:
            raise ValueError("a Redis Cluster needs at least 3 masters")
        for tool in ("redis-server", "redis-cli"):
            if shutil.which(tool) is None:
                raise NoRedis(
                    f"{tool} is not installed (Debian/Ubuntu: sudo apt-get install redis-server)"
                )
        self.masters, self.replicas, self.node_timeout_ms = masters, replicas, node_timeout_ms
        self.own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="rh-cluster-"))
        self._masters_before: set[int] = set()
        self.nodes = [
            Node(port, free_port(), self.workdir / str(port))
            for port in (free_port() for _ in range(masters * (1 + replicas)))
        ]

    @property
    def url(self) -> str:
        """The URL of one node (``ROUNDHOUSE_REDIS_URL``: a cluster client finds the others)."""
        return self.nodes[0].url

    # ------------------------------------------------------------ processes

    def _spawn(self, node: Node) -> None:
        node.workdir.mkdir(parents=True, exist_ok=True)
        argv = [
            str(shutil.which("redis-server")),
            "--port",
            str(node.port),
            "--bind",
            "127.0.0.1",
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-port",  # its own free port: port + 10000 may be taken, or past 65535
            str(node.bus_port),
            "--cluster-node-timeout",
            str(self.node_timeout_ms),
            # a replica may be elected however long it was cut off (the tests kill masters)
            "--cluster-replica-validity-factor",
            "0",
            "--save",
            "",
            "--repl-diskless-sync",  # a (re)joining replica copies its master's data at once
            "yes",
            "--repl-diskless-sync-delay",
            "0",
            "--appendonly",
            "no",
            "--dir",
            str(node.workdir),
        ]
        log = open(node.workdir / "redis.log", "ab")  # noqa: SIM115 - closed below
        node.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        wait_for_redis(node.url)

    def start(self) -> LocalRedisCluster:
        """Start every node, create the cluster and wait until it serves every slot.

        Raises:
            RuntimeError: ``redis-cli --cluster create`` failed (its output in the message).
            TimeoutError: the cluster did not reach ``cluster_state:ok`` in 30 s.
        """
        try:
            for node in self.nodes:
                self._spawn(node)
        except BaseException:
            self.stop()
            raise
        create = subprocess.run(
            [
                str(shutil.which("redis-cli")),
                "--cluster",
                "create",
                *(n.address for n in self.nodes),
                "--cluster-replicas",
                str(self.replicas),
                "--cluster-yes",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if create.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{create.stdout[-2000:]}")
        self.wait_ok()
        return self

    def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL) and remove a temporary work folder."""
        for node in self.nodes:
            if node.stopped:
                self.resume(node)
            if node.alive():
                node.proc.terminate()
        for node in self.nodes:
            if node.proc is not None:
                try:
                    node.proc.wait(10)
                except subprocess.TimeoutExpired:
                    node.proc.kill()
                    node.proc.wait(5)
        if self.own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> LocalRedisCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ state

    def info(self, node: Node) -> dict[str, str]:
        """``CLUSTER INFO`` of one node."""
        with contextlib.closing(node.client()) as r:
            text = r.execute_command("CLUSTER", "INFO")
        if isinstance(text, dict):
            return {k: str(v) for k, v in text.items()}
        return dict(line.split(":", 1) for line in str(text).splitlines() if ":" in line)

    def role(self, node: Node) -> str:
        """``master`` or ``slave`` (Redis's word), as the node itself says."""
        with contextlib.closing(node.client()) as r:
            return str(r.execute_command("ROLE")[0])

    def live_masters(self) -> list[Node]:
        """The running nodes that say they are masters and own slots."""
        out = []
        for node in self.nodes:
            if not node.alive():
                continue
            with contextlib.suppress(redis.RedisError):
                if self.role(node) == "master" and self._owns_slots(node):
                    out.append(node)
        return out

    def _owns_slots(self, node: Node) -> bool:
        with contextlib.closing(node.client()) as r:
            for line in r.execute_command("CLUSTER", "NODES").splitlines():
                parts = line.split()
                if "myself" in parts[2]:
                    return len(parts) > 8
        return False

    def wait_ok(self, timeout: float = 30) -> None:
        """Wait until every running node says ``cluster_state:ok``, every slot is served and
        every running replica's link to its master is up (its copy complete).

        Raises:
            TimeoutError: not within ``timeout`` seconds (the last state in the message).
        """
        deadline = time.monotonic() + timeout
        last = ""
        while True:
            states = []
            for node in self.nodes:
                if not node.alive():
                    continue
                try:
                    info = self.info(node)
                except redis.RedisError as exc:
                    states.append(f"{node.port}: {exc}")
                    continue
                ok = info.get("cluster_state") == "ok" and info.get("cluster_slots_ok") == "16384"
                if ok:
                    with contextlib.closing(node.client()) as r:
                        repl = r.info("replication")
                    ok = repl.get("role") == "master" or repl.get("master_link_status") == "up"
                states.append("" if ok else f"{node.port}: {info.get('cluster_state')}")
            last = "; ".join(s for s in states if s)
            if not last:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cluster is not ok after {timeout:.0f} s: {last}")
            time.sleep(0.1)

    # ------------------------------------------------------------ faults

    def kill(self, node: Node) -> None:
        """SIGKILL one node (it loses whatever its replica had not received)."""
        self._masters_before = set(n.port for n in self.live_masters())
        if node.proc is not None:
            node.proc.send_signal(signal.SIGKILL)
            node.proc.wait(10)

    def wait_failover(self, timeout: float = 30) -> Node:
        """After :meth:`kill` of a master: wait until its replica took over (every slot
        served again, by running masters only); returns the new master.

        Raises:
            TimeoutError: no failover within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(TimeoutError):
                self.wait_ok(timeout=max(0.1, min(1.0, deadline - time.monotonic())))
                masters = self.live_masters()
                promoted = [m for m in masters if m.port not in self._masters_before]
                if len(masters) == self.masters and promoted:
                    return promoted[0]
            if time.monotonic() > deadline:
                raise TimeoutError(f"no replica took over in {timeout:.0f} s")
            time.sleep(0.1)

    def replica_of(self, master: Node) -> Node:
        """The running replica of ``master``."""
        with contextlib.closing(master.client()) as r:
            replicas = r.info("replication")
        ports = {int(v["port"]) for k, v in replicas.items() if k.startswith("slave")}
        return next(n for n in self.nodes if n.port in ports and n.alive())

    def lag_replica(self, master: Node, junk_bytes: int = 24 << 20) -> Node:
        """Make ``master``'s replica fall behind, as a stalled replica or a saturated link
        would: SIGSTOP it, then write ``junk_bytes`` to a key of the master's, which fills
        the socket buffers of their link; the master's next writes then wait in its own
        output buffer (lost if it dies now). Returns the replica (:meth:`resume` it)."""
        replica = self.replica_of(master)
        replica.proc.send_signal(signal.SIGSTOP)
        replica.stopped = True
        with contextlib.closing(master.client()) as r:
            mine = {
                slot
                for start, end, owner, *_ in r.execute_command("CLUSTER", "SLOTS")
                if int(owner[1]) == master.port
                for slot in range(int(start), int(end) + 1)
            }
            junk = (f"junk-{n}" for n in itertools.count())
            key = next(k for k in junk if key_slot(k.encode()) in mine)
            r.set(key, b"x" * junk_bytes, px=60_000)
        return replica

    def resume(self, node: Node) -> None:
        """SIGCONT a node :meth:`lag_replica` stopped."""
        if node.proc is not None and node.proc.poll() is None:
            node.proc.send_signal(signal.SIGCONT)
        node.stopped = False

    def restart(self, node: Node, timeout: float = 30) -> None:
        """Start a killed node again with its cluster configuration: it rejoins as a replica
        of the node that replaced it and copies its data (full resync); waits until its
        replication link is up and the cluster is ok.

        Raises:
            TimeoutError: it did not rejoin within ``timeout`` seconds.
        """
        self._spawn(node)
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(redis.RedisError), contextlib.closing(node.client()) as r:
                repl = r.info("replication")
                if repl.get("role") == "slave" and repl.get("master_link_status") == "up":
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{node.address} did not rejoin as a replica in {timeout:.0f} s")
            time.sleep(0.1)
        self.wait_ok(max(1.0, deadline - time.monotonic()))
