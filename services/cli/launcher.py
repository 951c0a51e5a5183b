"""Start and stop the Roundhouse processes (used by ``roundhouse demo`` and the
integration tests).

Every process runs in its own session so it can be stopped as a group:
SIGTERM first (the servers shut down gracefully), SIGKILL after a timeout.
Logs go to one file per process in the run directory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import kombu
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tenacity import (
    RetryError,
    Retrying,
    retry,
    retry_if_exception_type,
    retry_if_result,
    stop_after_delay,
    wait_fixed,
)

from services.bots.celery_app import bot_queue, is_amqp
from services.cli.supervisor import Supervisor
from services.platform.db import upgrade
from services.platform.hotstore import KeySpace, sync_client
from services.platform.reviews import review_queue
from services.platform.settings import BotSettings, CommonSettings

_HANDED_OUT: set[int] = set()
"""Ports :func:`free_port` gave this process: the kernel may offer a port it just freed
again, and two servers of one stack were once handed the same one (the second failed to bind)."""


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now and that this process was not handed
    before (a stack picks all its ports before any server binds one)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def redis_answers(url: str) -> bool:
    """Whether a Redis answers PING at ``url`` (within a second)."""
    try:
        with redis.Redis.from_url(url, socket_connect_timeout=1) as client:
            return bool(client.ping())
    except (redis.ConnectionError, redis.TimeoutError, ValueError):
        return False


class NoRedis(RuntimeError):
    """No Redis answers and none can be started."""


def redis_server_command(
    port: int, workdir: Path | str, tried_url: str = "", persist: bool = False
) -> list[str]:
    """argv of a throwaway ``redis-server`` on 127.0.0.1:``port`` that keeps
    nothing on disk (``persist``: an append-only file in ``workdir``, so the
    games outlive a restart).

    Raises:
        NoRedis: ``redis-server`` is not installed (the message says how to get one).
    """
    server = shutil.which("redis-server")
    if server is None:
        where = f" at {tried_url}" if tried_url else ""
        raise NoRedis(
            f"no Redis answers{where} and redis-server is not installed.\n"
            "Install it (Debian/Ubuntu: sudo apt-get install redis-server; macOS: "
            "brew install redis) or point ROUNDHOUSE_REDIS_URL at a running Redis."
        )
    return [
        server,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "yes" if persist else "no",
        "--dir",
        str(workdir),
    ]


def wait_for_redis(url: str, timeout: float = 10) -> None:
    """Block until Redis at ``url`` answers. Raises TimeoutError."""
    try:
        Retrying(
            stop=stop_after_delay(timeout),
            wait=wait_fixed(0.1),
            retry=retry_if_result(lambda ok: not ok),
        )(redis_answers, url)
    except RetryError:
        raise TimeoutError(f"redis at {url} did not answer within {timeout:.0f} s") from None


def delete_amqp_queue(broker_url: str, queue: str) -> None:
    """Delete ``queue`` (and its exchange) on a RabbitMQ broker; quorum queues outlive their
    consumers, so a finished run removes its own. A broker that does not answer is left as is."""
    with contextlib.suppress(Exception), kombu.Connection(broker_url, connect_timeout=5) as conn:
        channel = conn.channel()
        channel.queue_delete(queue)
        channel.exchange_delete(queue)


@dataclasses.dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    log_path: Path
    extra_env: dict[str, str] = dataclasses.field(default_factory=dict)
    """The settings this process got beyond the stack's (its port, consumer name...):
    :meth:`Stack.respawn` starts it again with them."""


def kind_of(name: str) -> str:
    """The process kind of a stack process's name: ``lobby-1`` -> ``lobby``,
    ``rules-e1894`` -> ``rules-e1894``, ``worker-1`` -> ``worker``."""
    head, _, tail = name.rpartition("-")
    return head if head and tail.isdigit() else name


class Stack:
    """A set of Roundhouse processes sharing one Redis and one key prefix.

    Args:
        titles: the titles whose rules services to start.
        redis_url: the Redis to use; when None, ``ROUNDHOUSE_REDIS_URL`` or the
            default is tried, and if it does not answer a private
            ``redis-server`` is started (if installed).
        private_redis: always start a private Redis (tests).
        workers: Celery worker processes (``--concurrency``).
        worker_replicas: Celery workers of ``workers`` pool processes each, named
            ``worker``, ``worker-1``...: the worker Deployment's replicas.
        database_url: the durable store (``ROUNDHOUSE_DATABASE_URL``); None = a
            fresh embedded SQLite file in the run directory. :meth:`start`
            applies the migrations once, before any process starts.
        gateway: also start the HTTP gateway (``gateway_address``).
        broker_url: the Celery broker of the bot tasks (``ROUNDHOUSE_BROKER_URL``, e.g.
            ``amqp://guest:guest@127.0.0.1:5672//``); None = the Redis. :meth:`stop`
            deletes this stack's bot queue on a RabbitMQ broker.
        replicas: processes of every service kind (rules services, lobby, accounts,
            dispatcher, archiver, tournament service, clock keeper, gateway); the Celery
            worker stays one process of ``workers``. With more than one, each gRPC replica
            listens on its own port (``ROUNDHOUSE_LISTEN_PORT``), the addresses clients use
            name them all (``ipv4:127.0.0.1:p1,127.0.0.1:p2``: the channels spread calls
            round robin), every replica has its own consumer name in the consumer groups,
            and ``gateway_addresses`` lists the gateways. The first replica of a kind is
            named as with one (``lobby``), the others ``lobby-1`` and so on.
        redis_cluster: ``redis_url`` names a node of a Redis Cluster
            (``ROUNDHOUSE_REDIS_CLUSTER=1`` for every process; never a private Redis;
            ``broker_url`` is then required). None: as ``ROUNDHOUSE_REDIS_CLUSTER`` says.
        env: more ``ROUNDHOUSE_*`` settings for every process (e.g.
            ``ROUNDHOUSE_REDIS_WAIT_REPLICAS``).
        restart_workers: start the Celery worker again when it exits by itself, as a
            Kubernetes Deployment would (the fault benchmarks count it in :attr:`restarts`).
            The worker used to exit when its Redis broker died under it (kombu's Redis
            transport raised ``AttributeError`` restoring the unacknowledged messages of
            the lost connection; worked around in :mod:`services.bots.broker`). Off: a
            worker that exits fails :meth:`check_alive` (the tests want to see it).
        supervise: start again every process that exits by itself, the private Redis
            included (``roundhouse up``), with backoff (:mod:`services.cli.supervisor`).
    """

    def __init__(
        self,
        titles: list[str],
        redis_url: str | None = None,
        private_redis: bool = False,
        workers: int = 2,
        worker_replicas: int = 1,
        run_dir: Path | None = None,
        log_level: str = "WARNING",
        database_url: str | None = None,
        gateway: bool = False,
        broker_url: str | None = None,
        replicas: int = 1,
        restart_workers: bool = False,
        redis_cluster: bool | None = None,
        env: dict[str, str] | None = None,
        supervise: bool = False,
    ) -> None:
        if replicas < 1:
            raise ValueError(f"replicas must be 1 or more, not {replicas}")
        from_env = BotSettings()
        self.redis_cluster = from_env.redis_cluster if redis_cluster is None else redis_cluster
        if self.redis_cluster:  # BrokerNotSet: Celery cannot use the cluster
            BotSettings(
                redis_cluster=True, broker_url=broker_url or from_env.broker_url
            ).check_broker()
        self.extra_env = dict(env or {})
        self.replicas = replicas
        self.restart_workers = restart_workers
        self.supervise = supervise
        self.restarts: list[tuple[str, int]] = []  # (process, its exit status) per restart
        self.supervisor: Supervisor | None = None
        self.titles = titles
        self.broker_url = broker_url
        self.own_run_dir = run_dir is None
        self.run_dir = Path(run_dir or tempfile.mkdtemp(prefix="roundhouse-"))
        # logs, the store, the state file: the owner's only (an existing folder is left as is)
        self.run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.procs: list[Proc] = []
        self.prefix = f"rh-{os.urandom(4).hex()}"
        shards = self.extra_env.get("ROUNDHOUSE_LIFECYCLE_SHARDS")
        default = CommonSettings(redis_cluster=self.redis_cluster).lifecycle_shards
        self.shards = int(shards) if shards else default
        self.workers = workers
        if worker_replicas < 1:
            raise ValueError(f"worker_replicas must be 1 or more, not {worker_replicas}")
        self.worker_replicas = worker_replicas
        self.log_level = log_level
        self.private_redis = private_redis
        self.redis_url = redis_url or os.environ.get(
            "ROUNDHOUSE_REDIS_URL", "redis://127.0.0.1:6379/0"
        )
        self.ports: dict[str, list[int]] = {
            kind: [free_port() for _ in range(replicas)]
            for kind in ("lobby", "accounts", "archiver", "tournaments", *map(_rules, titles))
        }
        self.lobby_address = _target(self.ports["lobby"])
        self.accounts_address = _target(self.ports["accounts"])
        # internal calls (bots, dispatcher, archiver) authenticate with this
        self.internal_secret = os.environ.get(
            "ROUNDHOUSE_INTERNAL_SECRET"
        ) or secrets.token_urlsafe(24)
        self.rules_addresses = {t: _target(self.ports[_rules(t)]) for t in titles}
        self.archive_address = _target(self.ports["archiver"])
        self.tournaments_address = _target(self.ports["tournaments"])
        self.gateway = gateway
        self.gateway_addresses = [f"127.0.0.1:{free_port()}" for _ in range(replicas)]
        self.gateway_address = self.gateway_addresses[0]
        self.persist_redis = False
        self.started_redis = False
        self.database_url = database_url or f"sqlite+aiosqlite:///{self.run_dir / 'roundhouse.db'}"

    @property
    def keys(self) -> KeySpace:
        """The names of this stack's game keys and lifecycle streams."""
        return KeySpace(self.prefix, self.shards)

    # ----------------------------------------------------------------- env

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            ROUNDHOUSE_REDIS_URL=self.redis_url,
            ROUNDHOUSE_KEY_PREFIX=self.prefix,
            ROUNDHOUSE_LOBBY_ADDRESS=self.lobby_address,
            ROUNDHOUSE_ACCOUNTS_ADDRESS=self.accounts_address,
            ROUNDHOUSE_INTERNAL_SECRET=self.internal_secret,
            ROUNDHOUSE_RULES_ADDRESSES=json.dumps(self.rules_addresses),
            ROUNDHOUSE_ARCHIVE_ADDRESS=self.archive_address,
            ROUNDHOUSE_TOURNAMENTS_ADDRESS=self.tournaments_address,
            ROUNDHOUSE_GATEWAY_ADDRESS=self.gateway_address,
            ROUNDHOUSE_LOG_LEVEL=self.log_level,
            ROUNDHOUSE_LOG_FORMAT="json",
            ROUNDHOUSE_DATABASE_URL=self.database_url,
            ROUNDHOUSE_REDIS_CLUSTER="1" if self.redis_cluster else "0",
            PYTHONUNBUFFERED="1",
        )
        env.update(self.extra_env)
        if self.broker_url:
            env["ROUNDHOUSE_BROKER_URL"] = self.broker_url
        return env

    # ----------------------------------------------------------------- processes

    def spawn(self, name: str, argv: list[str], extra_env: dict[str, str] | None = None) -> Proc:
        """Start one process with this stack's settings (plus ``extra_env``)."""
        log_path = self.run_dir / f"{name}.log"
        log_file = open(log_path, "ab")  # noqa: SIM115 - closed with the process
        popen = subprocess.Popen(
            argv,
            env={**self.env(), **(extra_env or {})},
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log_file.close()
        proc = Proc(name, popen, log_path, dict(extra_env or {}))
        self.procs.append(proc)
        return proc

    def respawn(self, proc: Proc) -> Proc:
        """Start an exited (or killed) process of this stack again, with the same command
        and settings, as Kubernetes restarts a pod's container; the new process replaces
        ``proc`` in :attr:`procs`. Does not wait for it to be ready."""
        if proc in self.procs:
            self.procs.remove(proc)
        return self.spawn(proc.name, list(proc.popen.args), proc.extra_env)

    def spawn_replicas(self, kind: str, argv: list[str]) -> list[Proc]:
        """Start ``replicas`` processes of one kind: their own gRPC port (kinds in
        ``ports``) or gateway address, and from the second on their own consumer name."""
        procs = []
        for i in range(self.replicas):
            extra: dict[str, str] = {}
            if kind in self.ports and self.replicas > 1:
                extra["ROUNDHOUSE_LISTEN_PORT"] = str(self.ports[kind][i])
            if kind == "gateway" and self.replicas > 1:
                extra["ROUNDHOUSE_GATEWAY_ADDRESS"] = self.gateway_addresses[i]
            if i:
                extra["ROUNDHOUSE_CONSUMER_NAME"] = f"{socket.gethostname()}-{i}"
            procs.append(self.spawn(kind if i == 0 else f"{kind}-{i}", argv, extra))
        return procs

    def ensure_redis(self) -> None:
        """Use the configured Redis if it answers (and no private one is
        asked for); otherwise start a private ``redis-server``. A cluster must answer.

        Raises:
            NoRedis: the cluster's node does not answer.
        """
        if self.redis_cluster:
            if not redis_answers(self.redis_url):
                raise NoRedis(f"no Redis Cluster node answers at {self.redis_url}")
            return
        if not self.private_redis and redis_answers(self.redis_url):
            return
        port = free_port()
        self.spawn(
            "redis",
            redis_server_command(port, self.run_dir, self.redis_url, persist=self.persist_redis),
        )
        self.redis_url = f"redis://127.0.0.1:{port}/0"
        self.started_redis = True
        wait_for_redis(self.redis_url)

    def worker_argv(self, replica: int = 0) -> list[str]:
        """The bot worker's command line (consuming this stack's queue); ``replica``
        picks its node name (each worker process has its own)."""
        node = f"worker-{self.prefix}" if replica == 0 else f"worker-{self.prefix}-{replica}"
        return [
            sys.executable,
            "-m",
            "celery",
            "--quiet",  # a global option: no banner; level and format come from ROUNDHOUSE_*
            "-A",
            "services.bots.celery_app",
            "worker",
            "-Q",
            bot_queue(self.prefix),
            "--concurrency",
            str(self.workers),
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"{node}@%h",
        ]

    def review_worker_argv(self) -> list[str]:
        """The review worker's command line: one process on this stack's review queue
        (:func:`services.platform.reviews.review_queue`), apart from the bot workers, so a
        review (minutes of CPU) never holds a pool process a live bot move waits for."""
        argv = self.worker_argv()
        argv[argv.index("-Q") + 1] = review_queue(self.prefix)
        argv[argv.index("--concurrency") + 1] = "1"
        argv[argv.index("-n") + 1] = f"review-{self.prefix}@%h"
        return argv

    def start(self) -> None:
        """Start Redis (if needed), migrate the store, the rules services, the lobby, the
        dispatcher, the archiver, the tournament service, the clock keeper and one Celery
        worker; wait until all are ready (gRPC health SERVING; the worker's ready file).

        Raises:
            NoRedis: see :class:`NoRedis`.
            TimeoutError: a process did not become ready.
        """
        self.ensure_redis()
        upgrade(self.database_url)
        py = sys.executable
        for title in self.titles:
            self.spawn_replicas(_rules(title), [py, "-m", f"services.{title}.service.server"])
        self.spawn_replicas("lobby", [py, "-m", "services.lobby.server"])
        self.spawn_replicas("accounts", [py, "-m", "services.accounts.server"])
        self.spawn_replicas("dispatcher", [py, "-m", "services.bots.dispatcher"])
        self.spawn_replicas("archiver", [py, "-m", "services.archive.server"])
        self.spawn_replicas("tournaments", [py, "-m", "services.tournaments.service.server"])
        self.spawn_replicas("clocks", [py, "-m", "services.clocks.keeper"])
        if self.gateway:
            self.spawn_replicas("gateway", [py, "-m", "services.web.server"])
        ready_files = []
        for i in range(self.worker_replicas):
            name = "worker" if i == 0 else f"worker-{i}"
            ready_file = self.run_dir / f"{name}.ready"
            ready_file.unlink(missing_ok=True)
            ready_env = {"ROUNDHOUSE_WORKER_READY_FILE": str(ready_file)}
            self.spawn(name, self.worker_argv(i), extra_env=ready_env)
            ready_files.append(ready_file)
        self.spawn("review-worker", self.review_worker_argv())
        for address in self.server_addresses():
            self.wait_healthy(address)
        if self.gateway:
            for address in self.gateway_addresses if self.replicas > 1 else [self.gateway_address]:
                self.wait_http(f"http://{address}/api/openapi.json")
        for ready_file in ready_files:
            self.wait_for_file(ready_file, "the bot worker")
        if self.restart_workers or self.supervise:
            self.supervisor = Supervisor(
                self,
                watch=self.restarted,
                on_restart=lambda name, code: self.restarts.append((name, code)),
            )
            self.supervisor.start()

    def restarted(self, name: str) -> bool:
        """Whether the process ``name`` is started again when it exits by itself
        (``supervise``: every one; ``restart_workers``: the Celery workers)."""
        return self.supervise or (self.restart_workers and name.startswith("worker"))

    def server_addresses(self) -> list[str]:
        """The ``host:port`` of every gRPC server process (one per replica)."""
        if self.replicas == 1:  # the address attributes, which a caller may have set
            return [
                *self.rules_addresses.values(),
                self.lobby_address,
                self.accounts_address,
                self.archive_address,
                self.tournaments_address,
            ]
        return [f"127.0.0.1:{port}" for ports in self.ports.values() for port in ports]

    def wait_healthy(self, address: str, timeout: float = 60) -> None:
        @retry(
            stop=stop_after_delay(timeout),
            wait=wait_fixed(0.2),
            retry=retry_if_exception_type((grpc.RpcError, AssertionError)),
            reraise=True,
        )
        def check() -> None:
            self.check_alive()
            with grpc.insecure_channel(address) as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                response = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                assert response.status == health_pb2.HealthCheckResponse.SERVING

        try:
            check()
        except (grpc.RpcError, AssertionError) as exc:
            raise TimeoutError(f"{address} did not become healthy: {exc}") from None

    def wait_http(self, url: str, timeout: float = 60) -> None:
        """Wait until ``url`` answers 200 (the gateway), failing at once if a process exits."""
        import urllib.error
        import urllib.request

        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            try:
                with urllib.request.urlopen(url, timeout=1) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not answer within {timeout:.0f} s")
            time.sleep(0.2)

    def wait_for_file(self, path: Path, what: str, timeout: float = 60) -> None:
        """Wait until ``path`` exists, failing at once if a process exits.

        Raises:
            RuntimeError: a started process exited (its log tail is in the message).
            TimeoutError: ``path`` did not appear within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while not path.exists():
            self.check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not become ready within {timeout:.0f} s")
            time.sleep(0.1)

    def check_alive(self) -> None:
        """Raise if a started process has exited (but one that is started again:
        ``restart_workers``, ``supervise``)."""
        for p in list(self.procs):
            code = p.popen.poll()
            if code is not None and not self.restarted(p.name):
                tail = p.log_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"process {p.name} exited with {code}:\n{tail}")

    def stop(self, timeout: float = 15) -> None:
        """Stop every process started here (servers first, Redis last); on a
        shared Redis, delete this run's keys afterwards."""
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None
        servers = [p for p in self.procs if p.name != "redis"]
        own_redis = [p for p in self.procs if p.name == "redis"]
        _stop_all(servers, timeout)
        if not own_redis and redis_answers(self.redis_url):
            self._delete_keys(self.redis_url, self.redis_cluster, f"{self.prefix}:*")
        queue = bot_queue(self.prefix)
        broker = self.broker_url or os.environ.get("ROUNDHOUSE_BROKER_URL") or self.redis_url
        if not own_redis and broker.startswith("redis") and redis_answers(broker):
            # the Celery queue, and kombu's bindings of that queue
            cluster = self.redis_cluster and broker == self.redis_url
            self._delete_keys(broker, cluster, f"{queue}*", f"_kombu.binding*.{queue}")
        _stop_all(own_redis, timeout)
        self.procs.clear()
        if self.broker_url and is_amqp(self.broker_url):
            delete_amqp_queue(self.broker_url, bot_queue(self.prefix))

    @staticmethod
    def _delete_keys(url: str, cluster: bool, *patterns: str) -> None:
        """Delete the keys matching ``patterns`` (on a cluster: on every master)."""
        with (
            contextlib.suppress(redis.RedisError, redis.exceptions.RedisClusterException),
            sync_client(url, cluster=cluster) as client,
        ):
            for pattern in patterns:
                for key in client.scan_iter(pattern, count=1000):
                    client.delete(key)

    def remove_logs(self) -> None:
        """Delete the run directory (logs) if this stack created it."""
        if self.own_run_dir:
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def __enter__(self) -> Stack:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _rules(title: str) -> str:
    """The process kind of a title's rules service."""
    return f"rules-{title}"


def _target(ports: list[int]) -> str:
    """The address clients use for the replicas on ``ports`` (one: ``host:port``)."""
    if len(ports) == 1:
        return f"127.0.0.1:{ports[0]}"
    return "ipv4:" + ",".join(f"127.0.0.1:{p}" for p in ports)


def _stop_all(procs: list[Proc], timeout: float) -> None:
    for p in procs:
        _signal(p.popen, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.popen.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal(p.popen, signal.SIGKILL)
            p.popen.wait(5)


def _signal(popen: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(popen.pid, sig)
