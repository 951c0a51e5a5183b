"""``roundhouse up`` / ``roundhouse down``: the whole platform on this machine,
in the background.

``up`` starts a supervisor process in the background (``python -m
services.cli.updown supervise``, log ``<data dir>/run/supervisor.log``), which
starts every process (the rules services of every title, accounts,
the lobby, the archiver, the bot dispatcher, the clock keeper, one Celery
worker and the HTTP gateway) with the standard addresses (gateway http://127.0.0.1:8080, lobby
127.0.0.1:50060, accounts 50064, rules 50061-50063, archive 50065; each
overridable by its ``ROUNDHOUSE_*_ADDRESS``), on the Redis at
``ROUNDHOUSE_REDIS_URL`` if one answers, else a private ``redis-server``
keeping an append-only file in the data folder, and on the store named by
``ROUNDHOUSE_DATABASE_URL``, else the embedded SQLite file there, and then keeps
them running: a process that exits is started again with backoff
(:mod:`services.cli.supervisor`; each restart is logged). The supervisor keeps
``<data dir>/run/platform.json`` current (its own pid, each process's pid, state,
restarts and start time, the addresses, the internal secret; mode 0600). ``up``
waits until every process is ready, prints the addresses and how to sign in, and
returns. Logs: ``<data dir>/run/*.log``.

``status`` shows each process from that file: name, pid, state, restarts, uptime.

``down`` stops the supervisor, which stops every process (SIGTERM to each process
group, SIGKILL after a grace time, Redis last), then any process the file still
names that runs (a pid whose process start time differs, i.e. reused by another
program, is left alone), and removes the file.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
from rich.console import Console
from rich.table import Table

from services.cli import program
from services.cli.launcher import NoRedis, Stack, redis_answers
from services.platform.db import database_url
from services.platform.logging import configure_logging
from services.platform.settings import (
    DEFAULT_RULES_PORTS,
    CommonSettings,
    StoreSettings,
    get_settings,
)
from services.rules.titles import TITLE_MODULES

STATE_FILE = "platform.json"


def run_dir() -> Path:
    settings = get_settings(StoreSettings)
    from services.platform.db import default_data_dir

    base = Path(settings.data_dir) if settings.data_dir else default_data_dir()
    return base / "run"


FREE, LISTENING, HELD = "free", "listening", "held"

HELD_WAIT_S = 70.0
"""How long ``up`` waits for a port held by a closing connection (Linux keeps
one in TIME-WAIT for 60 s)."""


def port_state(address: str) -> str:
    """Whether a server could listen on ``address`` ("host:port") now.

    Returns:
        ``FREE``; ``LISTENING`` when something answers there (another server);
        ``HELD`` when nothing listens but the port cannot be bound: the local end
        of an outgoing connection, or one in TIME-WAIT (the default ports lie in
        Linux's range of outgoing ports), which frees itself within a minute.
    """
    import socket

    host, port = address.rsplit(":", 1)
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC and uvicorn bind
        try:
            s.bind((host, int(port)))
            return FREE
        except OSError:
            pass
    try:
        with socket.create_connection((host, int(port)), timeout=0.5):
            return LISTENING
    except OSError:
        return HELD


def _wait_for_ports(addresses: dict[str, str], console: Console) -> list[str]:
    """Wait up to :data:`HELD_WAIT_S` for held ports; the addresses still not
    free, as ``"name host:port (why)"`` (at once for one something listens on)."""
    deadline = time.monotonic() + HELD_WAIT_S
    told = False
    while True:
        states = {name: port_state(a) for name, a in addresses.items()}
        held = [n for n, st in states.items() if st == HELD]
        if any(st == LISTENING for st in states.values()) or not held:
            break
        if time.monotonic() > deadline:
            break
        if not told:
            console.print(
                "[yellow]waiting for ports held by closing connections (TIME-WAIT, up to a "
                f"minute): {', '.join(addresses[n] for n in held)}[/yellow]"
            )
            told = True
        time.sleep(1.0)
    why = {LISTENING: "something listens there", HELD: "held by another connection"}
    return [f"{n} {addresses[n]} ({why[st]})" for n, st in states.items() if st != FREE]


def sign_in_help(gateway: str) -> str:
    base = f"http://{gateway}"
    return (
        "Sign up and sign in over the HTTP API (docs/api.md), e.g.:\n"
        f"  curl -s -X POST {base}/api/accounts -H 'Content-Type: application/json' "
        """-d '{"username": "ada", "password": "correct horse battery"}'\n"""
        f"  curl -s -X POST {base}/api/tokens -H 'Content-Type: application/json' "
        """-d '{"username": "ada", "password": "correct horse battery", """
        """"scopes": ["play", "tables:write", "bots:write"]}'\n"""
        f"Interactive API docs: {base}/api/docs"
    )


def build_stack() -> tuple[Stack, dict[str, str]]:
    """The stack ``up`` runs, from the settings (standard addresses unless overridden),
    and the addresses its servers listen on, by process kind. Starts nothing."""
    settings = get_settings(StoreSettings)
    stack = Stack(
        sorted(TITLE_MODULES),
        run_dir=run_dir(),
        log_level=settings.log_level,
        database_url=database_url(settings),
        gateway=True,
        supervise=True,
    )
    stack.prefix = settings.key_prefix
    stack.persist_redis = True
    stack.internal_secret = settings.internal_secret or secrets.token_urlsafe(24)
    stack.gateway_address = settings.gateway_address
    stack.lobby_address = settings.lobby_address
    stack.accounts_address = settings.accounts_address
    stack.archive_address = settings.archive_address
    if "ROUNDHOUSE_RULES_ADDRESSES" in os.environ:
        stack.rules_addresses = dict(settings.rules_addresses)
    else:
        stack.rules_addresses = {t: f"127.0.0.1:{DEFAULT_RULES_PORTS[t]}" for t in stack.titles}
    addresses = {
        "gateway": stack.gateway_address,
        "lobby": stack.lobby_address,
        "accounts": stack.accounts_address,
        "archive": stack.archive_address,
        **{f"rules-{t}": a for t, a in stack.rules_addresses.items()},
    }
    return stack, addresses


UP_TIMEOUT_S = 600.0
"""How long ``up`` waits for the supervisor to report every process ready."""


def up(console: Console | None = None) -> int:
    """Start the supervisor process (:func:`supervise`) in the background, wait until it
    reports the platform up, print the addresses. Returns the exit status (1: already up,
    an address taken, or a process did not start; the reason is printed)."""
    console = console or Console()
    folder = run_dir()
    state_path = folder / STATE_FILE
    if state_path.exists():
        console.print(
            f"[yellow]already up ({state_path}); `roundhouse down` stops it first[/yellow]"
        )
        return 1
    _, addresses = build_stack()
    taken = _wait_for_ports(addresses, console)
    if taken:
        console.print(
            f"[red]addresses in use: {', '.join(taken)}; set ROUNDHOUSE_*_ADDRESS "
            "(docs/api.md) or stop what listens there[/red]"
        )
        return 1
    console.print("starting the platform (logs in " + str(folder) + ") ...")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    log_path = folder / "supervisor.log"
    with open(log_path, "ab") as log_file:
        supervisor = subprocess.Popen(
            [sys.executable, "-m", "services.cli.updown", "supervise"],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives this command and its terminal
        )
    deadline = time.monotonic() + UP_TIMEOUT_S
    state: dict = {}
    while time.monotonic() < deadline:
        state = read_state(state_path) or {}
        if state.get("phase") in ("up", "failed") or supervisor.poll() is not None:
            break
        time.sleep(0.2)
    if state.get("phase") != "up":
        if supervisor.poll() is None:
            _killpg(supervisor.pid, signal.SIGTERM)
            supervisor.wait(60)
        reason = state.get("error") or log_path.read_text(errors="replace")[-2000:]
        console.print(f"[red]{reason or 'the platform did not start'}[/red]")
        state_path.unlink(missing_ok=True)
        return 1
    console.print("[green]Roundhouse is up[/green]")
    gateway = state["addresses"]["gateway"]
    console.print(f"  web pages    http://{gateway}/  (sign up, play, watch)")
    console.print(f"  HTTP API     http://{gateway}/api  (docs: /api/docs)")
    console.print(f"  gRPC lobby   {state['addresses']['lobby']}")
    console.print(
        f"  gRPC accounts {state['addresses']['accounts']}, archive {state['addresses']['archive']}"
    )
    redis_note = " (private, started by up)" if state["own_redis"] else ""
    console.print(f"  Redis        {state['redis_url']}{redis_note}")
    console.print(f"  store        {_safe(state['database_url'])}")
    print(sign_in_help(gateway), flush=True)  # one line per command, unwrapped
    console.print(
        f"  key prefix   {state['key_prefix']}  (set ROUNDHOUSE_KEY_PREFIX to share a Redis)"
    )
    console.print(f"Every process is supervised: {program()} status shows them")
    console.print(f"Stop everything with: {program()} down")
    return 0


def read_state(path: Path) -> dict | None:
    """The state file's contents; None when there is none (or it is being replaced)."""
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def write_state(path: Path, state: dict) -> None:
    """Replace the state file at once (mode 0600: it holds the internal secret)."""
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(state, f, indent=2)
    os.replace(tmp, path)


class _Stop(Exception):
    """SIGTERM reached the supervisor."""


def _raise_stop(signum: int, frame: object) -> None:
    raise _Stop


def supervise(every_s: float = 0.5) -> int:
    """The supervisor process ``up`` starts: start the stack with every process supervised
    (restarted with backoff when it exits, :mod:`services.cli.supervisor`), keep the state
    file current (phase ``starting`` / ``up`` / ``failed``; each process's pid, state,
    restarts and start time), and on SIGTERM stop every process, Redis last, and remove
    the state file. Returns 0, or 1 when the platform did not start."""
    settings = get_settings(CommonSettings)
    configure_logging(settings.log_level, "json", sys.stdout)
    signal.signal(signal.SIGTERM, _raise_stop)
    stack, addresses = build_stack()
    state_path = stack.run_dir / STATE_FILE
    me = psutil.Process()
    state: dict = {
        "phase": "starting",
        "supervisor": {"pid": me.pid, "started": me.create_time()},
        "processes": [],
        "addresses": addresses,
        "key_prefix": stack.prefix,
        "internal_secret": stack.internal_secret,
        "database_url": stack.database_url,
    }
    write_state(state_path, state)
    try:
        try:
            stack.start()
        except (NoRedis, TimeoutError, RuntimeError) as exc:
            write_state(state_path, {**state, "phase": "failed", "error": str(exc)})
            return 1
        state.update(redis_url=stack.redis_url, own_redis=stack.started_redis, phase="up")
        assert stack.supervisor is not None
        while True:
            processes = stack.supervisor.status()
            if processes != state["processes"]:
                state["processes"] = processes
                write_state(state_path, state)
            time.sleep(every_s)
    except _Stop:
        return 0
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one stop at a time
        stack.stop()
        if state["phase"] != "failed":
            state_path.unlink(missing_ok=True)


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _alive(entry: dict) -> psutil.Process | None:
    """The process a state file entry names, if it still runs (a pid whose start time
    differs was reused by another program: None)."""
    try:
        proc = psutil.Process(entry["pid"])
        if abs(proc.create_time() - entry["started"]) < 1.0 and proc.status() != "zombie":
            return proc
    except psutil.NoSuchProcess:
        pass
    return None


def down(console: Console | None = None, timeout_s: float = 15.0) -> int:
    """Stop the supervisor (it stops every process, Redis last), then any process the
    state file names that still runs (SIGTERM to its group, SIGKILL after
    ``timeout_s`` seconds); remove the state file. Returns 0."""
    console = console or Console()
    state_path = run_dir() / STATE_FILE
    state = read_state(state_path)
    if state is None:
        console.print("nothing to stop (roundhouse up was not run, or down already was)")
        return 0
    supervisor = _alive(state["supervisor"]) if "supervisor" in state else None
    if supervisor is not None:
        _killpg(supervisor.pid, signal.SIGTERM)
        try:
            supervisor.wait(2 * timeout_s + 30)  # it gives servers, then Redis, timeout_s each
        except psutil.TimeoutExpired:
            _killpg(supervisor.pid, signal.SIGKILL)
            console.print("[yellow]the supervisor did not stop in time: killed[/yellow]")
    state = read_state(state_path) or state  # the last word on the processes
    ours = [(p["name"], proc) for p in state["processes"] if (proc := _alive(p)) is not None]
    servers = [(n, p) for n, p in ours if n != "redis"]
    redis_procs = [(n, p) for n, p in ours if n == "redis"]
    for group in (servers, redis_procs):  # Redis last: the servers flush to it on the way out
        for _, proc in group:
            _killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        for name, proc in group:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except psutil.TimeoutExpired:
                _killpg(proc.pid, signal.SIGKILL)
                console.print(f"[yellow]{name} did not stop in time: killed[/yellow]")
    state_path.unlink(missing_ok=True)
    stopped = len(state["processes"]) + (supervisor is not None)
    console.print(f"stopped {stopped} processes")
    redis_url = state.get("redis_url")
    if redis_url and not state.get("own_redis") and redis_answers(redis_url):
        console.print(f"(the shared Redis at {redis_url} keeps the games)")
    return 0


def status(console: Console | None = None) -> int:
    """Print each process ``up`` started (the supervisor first): name, pid, state
    (``running``; ``backoff``: exited, to be started again; ``dead``: not running and
    nobody will start it), restarts and uptime. Returns 0, or 1 when nothing is up."""
    console = console or Console()
    state = read_state(run_dir() / STATE_FILE)
    if state is None:
        console.print("nothing is up (roundhouse up starts the platform)")
        return 1
    supervisor = state.get("supervisor", {})
    supervised = bool(supervisor) and _alive(supervisor) is not None
    table = Table("name", "pid", "state", "restarts", "uptime", "last exit")
    now = time.time()
    rows = [{"name": "supervisor", "restarts": 0, "state": "running", **supervisor}]
    for row in rows + state["processes"]:
        alive = _alive(row) is not None
        shown = row["state"] if alive or row["state"] != "running" else "dead"
        if not supervised and shown != "running":
            shown = "dead"
        if row["name"] == "supervisor" and not supervised:
            shown = "dead"
        uptime = _duration(now - row["started"]) if alive and shown == "running" else "-"
        last = row.get("last_exit")
        table.add_row(
            row["name"],
            str(row["pid"]),
            shown,
            str(row["restarts"]),
            uptime,
            "-" if last is None else str(last),
        )
    console.print(f"phase: {state.get('phase', '?')}")
    console.print(table)
    return 0


def _duration(seconds: float) -> str:
    """``seconds`` as ``1h02m03s`` / ``2m03s`` / ``3s``."""
    s = int(max(0, seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m{sec:02d}s"
    return f"{m}m{sec:02d}s" if m else f"{sec}s"


def _killpg(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def main_up(args) -> int:
    return up()


def main_down(args) -> int:
    return down()


def main_status(args) -> int:
    return status()


if __name__ == "__main__":
    command = sys.argv[1:2]
    if command == ["supervise"]:
        sys.exit(supervise())
    sys.exit(up() if command == ["up"] else down())
