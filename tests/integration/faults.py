"""The fault suite's harness (issue 13, item 9): bot games on a stack of real
processes with a Redis of its own, and the faults done to it mid-game:

* :func:`kill9`: ``kill -9`` of one process (rules, lobby, dispatcher, worker,
  archiver, accounts), then a restart of it, as Kubernetes would;
* :meth:`FaultRedis.pause`: Redis stopped (SIGSTOP) for a while, then resumed;
* :meth:`FaultRedis.restart_with_lost_tail`: a snapshot, more moves, then a
  Redis crash and a restart from the snapshot (the last moves, events and
  consumer positions are gone: a failover to a lagging replica);
* :meth:`FaultRedis.out_of_memory`: Redis at ``maxmemory`` with
  ``noeviction`` refusing writes for a while, then memory freed.

After each fault every game must finish by itself, and its stream must
replay (engine) to the result the lobby recorded: :func:`finish_and_verify`.
Used by ``tests/integration/test_faults.py`` (one game per fault) and
``benchmarks/bench_faults.py`` (more games, every title).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import grpc
import redis
from tenacity import retry, retry_if_exception, stop_after_delay, wait_fixed

from roundhouse.v1 import lobby_pb2
from services.cli.launcher import Stack, free_port, redis_server_command, wait_for_redis
from services.platform.hotstore import KeySpace
from services.rules.titles import get_game

STACK_ENV = {"ROUNDHOUSE_BOT_STALL_S": "10", "ROUNDHOUSE_TABLES_CREATED_PER_ACCOUNT": "1000/minute"}
"""Settings of the fault stacks: a bot turn whose task was lost without a
heartbeat (Redis refused to record one: out of memory, paused) comes back
after 10 s instead of 60 s, so a game resumes soon after the fault; the one
organiser may create a table per fault quickly."""


@contextlib.contextmanager
def fault_environment():
    """:data:`STACK_ENV` in this process's environment (which a :class:`Stack` passes
    on) for the block, the environment as it was afterwards."""
    saved = {k: os.environ.get(k) for k in STACK_ENV}
    os.environ.update(STACK_ENV)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


PROCESS_KINDS = ("rules", "lobby", "dispatcher", "worker", "archiver", "accounts")


def _unavailable(exc: BaseException) -> bool:
    return isinstance(exc, grpc.RpcError) and exc.code() in (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    )


client_retry = retry(  # what a client is told to do with UNAVAILABLE
    retry=retry_if_exception(_unavailable), stop=stop_after_delay(60), wait=wait_fixed(0.5)
)


class FaultRedis:
    """A private ``redis-server`` that the faults can stop, crash and restart."""

    def __init__(self, workdir: Path, persist: bool = False) -> None:
        """``persist``: an append-only file (fsync every second), so a crash loses at most
        about a second of writes; without, a restart keeps only the last :meth:`snapshot`."""
        self.persist = persist
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        argv = redis_server_command(self.port, self.workdir, persist=self.persist)
        argv += ["--maxmemory-policy", "noeviction"]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_redis(self.url)

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True)

    def pause(self, seconds: float) -> None:
        """SIGSTOP, wait, SIGCONT: every client's calls hang, then go on."""
        self.proc.send_signal(signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            self.proc.send_signal(signal.SIGCONT)

    def snapshot(self) -> None:
        with contextlib.closing(self.client()) as r:
            r.save()

    def crash_and_restart(self) -> None:
        """kill -9, then a restart from the last snapshot (``dump.rdb``) or, ``persist``,
        from the append-only file."""
        self.proc.kill()
        self.proc.wait(10)
        self.start()

    @contextlib.contextmanager
    def out_of_memory(self):
        """While the block runs, Redis refuses every write that may grow memory:
        junk, then ``maxmemory`` under the memory used; afterwards the junk is
        deleted and the limit lifted."""
        with contextlib.closing(self.client()) as r:
            for i in range(32):
                r.set(f"junk:{i}", "x" * 65536)
            r.config_set("maxmemory", int(r.info("memory")["used_memory"]) - 256 * 1024)
            try:
                yield
            finally:
                r.delete(*(f"junk:{i}" for i in range(32)))
                r.config_set("maxmemory", 0)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            self.proc.wait(10)


def kill9(stack: Stack, kind: str, replica: int = 0) -> None:
    """``kill -9`` one process of ``kind`` (``rules`` = the first rules service, or
    ``rules-<title>``; ``replica`` picks which of a kind in replicas: ``lobby-1`` is
    replica 1), then start it again with the same command and settings (its own port
    and consumer name) and wait until it serves (gRPC health, the gateway's HTTP, the
    worker's ready file)."""
    if kind == "rules":
        kind = next(p.name for p in stack.procs if p.name.startswith("rules-"))
    name = kind if replica == 0 else f"{kind}-{replica}"
    proc = next(p for p in stack.procs if p.name == name)
    is_worker = kind == "worker"
    ready = stack.run_dir / f"{name}.ready"
    if is_worker:
        ready.unlink(missing_ok=True)
    os.kill(proc.popen.pid, signal.SIGKILL)
    if not (is_worker and stack.restart_workers):  # else the stack starts it again itself
        proc.popen.wait(10)
        stack.respawn(proc)
    if is_worker:
        stack.wait_for_file(ready, f"the restarted {name}")
    elif kind == "gateway":
        address = stack.gateway_addresses[replica] if stack.replicas > 1 else stack.gateway_address
        stack.wait_http(f"http://{address}/api/openapi.json")
    elif kind in stack.ports:
        address = (
            f"127.0.0.1:{stack.ports[kind][replica]}"
            if stack.replicas > 1
            else {
                "lobby": stack.lobby_address,
                "accounts": stack.accounts_address,
                "archiver": stack.archive_address,
                "tournaments": stack.tournaments_address,
                **{f"rules-{t}": a for t, a in stack.rules_addresses.items()},
            }[kind]
        )
        stack.wait_healthy(address)


@client_retry
def start_bot_game(lobby, title: str, policies: list[str], seed: int) -> str:
    """A started table of hosted bots; its id."""
    table = lobby.CreateTable(
        lobby_pb2.CreateTableRequest(title=title, num_players=len(policies), seed=seed)
    )
    for seat, policy in enumerate(policies):
        lobby.AddBot(lobby_pb2.AddBotRequest(table_id=table.table_id, seat=seat, policy=policy))
    lobby.StartTable(lobby_pb2.StartTableRequest(table_id=table.table_id))
    return table.table_id


@client_retry
def _table(lobby, table_id: str):
    return lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table_id))


@client_retry
def _result(lobby, table_id: str):
    return lobby.GetTableResult(lobby_pb2.GetTableRequest(table_id=table_id))


def wait_for_version(
    r: redis.Redis, prefix: str, title: str, table_id: str, version: int, timeout: float = 60
) -> None:
    """Wait until the game's stream holds ``version`` moves (mid-game)."""
    key = KeySpace(prefix).log(f"{title}-{table_id}")  # the lobby's game id
    deadline = time.monotonic() + timeout
    while r.xlen(key) < version:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the game of {table_id} did not reach version {version}")
        time.sleep(0.05)


def finish_and_verify(
    lobby, r: redis.Redis, prefix: str, table_id: str, timeout: float
) -> tuple[int, float]:
    """Wait until the table is finished (the lobby recorded the result), then
    replay its stream with the engine: same scores, ranks and end. Returns
    the game's length (moves) and the seconds waited."""
    started = time.monotonic()
    while _table(lobby, table_id).status != lobby_pb2.TABLE_STATUS_FINISHED:
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"table {table_id} did not finish within {timeout:.0f} s")
        time.sleep(0.2)
    waited = time.monotonic() - started
    table = _table(lobby, table_id)
    result = _result(lobby, table_id)
    stream = r.xrange(KeySpace(prefix).log(table.game_id))
    meta = json.loads(r.get(KeySpace(prefix).meta(table.game_id)))
    versions = [int(sid.split("-")[0]) for sid, _ in stream]
    assert versions == list(range(1, len(stream) + 1)), "the stream has a gap or a repeat"
    replayed = get_game(table.title).replay(
        meta["num_players"],
        meta["seed"],
        meta["options"],
        [(int(f["seat"]), json.loads(f["action"])) for _, f in stream],
    )
    assert replayed.is_terminal()
    expected = replayed.result()
    by_seat = {s.seat: s for s in result.standings}
    seats = range(table.num_players)
    assert [by_seat[i].score for i in seats] == [int(s) for s in expected.scores]
    assert [by_seat[i].rank for i in seats] == list(expected.ranks)
    assert result.end_reason == expected.end_reason
    return len(stream), waited
