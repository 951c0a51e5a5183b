"""``roundhouse up`` / ``roundhouse down``: the whole platform on this machine,
in the background.

``up`` starts every process (the rules services of every title, accounts,
the lobby, the archiver, the bot dispatcher, the clock keeper, one Celery
worker and the HTTP gateway) with the standard addresses (gateway http://127.0.0.1:8080, lobby
127.0.0.1:50060, accounts 50064, rules 50061-50063, archive 50065; each
overridable by its ``ROUNDHOUSE_*_ADDRESS``), on the Redis at
``ROUNDHOUSE_REDIS_URL`` if one answers, else a private ``redis-server``
keeping an append-only file in the data folder, and on the store named by
``ROUNDHOUSE_DATABASE_URL``, else the embedded SQLite file there. It waits
until every process is ready, writes what it started to
``<data dir>/run/platform.json`` (pids, addresses, the internal secret; mode
0600), prints the addresses and how to sign in, and returns. Logs:
``<data dir>/run/*.log``.

``down`` stops every process named in that file (SIGTERM to each process
group, SIGKILL after a grace time; a pid whose process start time differs,
i.e. reused by another program, is left alone) and removes the file.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path

import psutil
from rich.console import Console

from services.cli import program
from services.cli.launcher import NoRedis, Stack, redis_answers
from services.platform.db import database_url
from services.platform.settings import DEFAULT_RULES_PORTS, StoreSettings, get_settings
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


def up(console: Console | None = None) -> int:
    console = console or Console()
    folder = run_dir()
    state_path = folder / STATE_FILE
    if state_path.exists():
        console.print(
            f"[yellow]already up ({state_path}); `roundhouse down` stops it first[/yellow]"
        )
        return 1
    settings = get_settings(StoreSettings)
    env = os.environ
    stack = Stack(
        sorted(TITLE_MODULES),
        run_dir=folder,
        log_level=settings.log_level,
        database_url=database_url(settings),
        gateway=True,
    )
    stack.prefix = settings.key_prefix
    stack.persist_redis = True
    stack.internal_secret = settings.internal_secret or secrets.token_urlsafe(24)
    stack.gateway_address = settings.gateway_address
    stack.lobby_address = settings.lobby_address
    stack.accounts_address = settings.accounts_address
    stack.archive_address = settings.archive_address
    if "ROUNDHOUSE_RULES_ADDRESSES" in env:
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
    taken = _wait_for_ports(addresses, console)
    if taken:
        console.print(
            f"[red]addresses in use: {', '.join(taken)}; set ROUNDHOUSE_*_ADDRESS "
            "(docs/api.md) or stop what listens there[/red]"
        )
        return 1
    console.print("starting the platform (logs in " + str(folder) + ") ...")
    try:
        stack.start()
    except (NoRedis, TimeoutError, RuntimeError) as exc:
        console.print(f"[red]{exc}[/red]")
        stack.stop()
        return 1
    processes = [
        {"name": p.name, "pid": p.popen.pid, "started": psutil.Process(p.popen.pid).create_time()}
        for p in stack.procs
    ]
    state = {
        "processes": processes,
        "addresses": addresses,
        "redis_url": stack.redis_url,
        "own_redis": stack.started_redis,
        "database_url": stack.database_url,
        "key_prefix": stack.prefix,
        "internal_secret": stack.internal_secret,
    }
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(state_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(state, f, indent=2)
    console.print("[green]Roundhouse is up[/green]")
    console.print(f"  web pages    http://{stack.gateway_address}/  (sign up, play, watch)")
    console.print(f"  HTTP API     http://{stack.gateway_address}/api  (docs: /api/docs)")
    console.print(f"  gRPC lobby   {stack.lobby_address}")
    console.print(f"  gRPC accounts {stack.accounts_address}, archive {stack.archive_address}")
    redis_note = " (private, started by up)" if stack.started_redis else ""
    console.print(f"  Redis        {stack.redis_url}{redis_note}")
    console.print(f"  store        {_safe(stack.database_url)}")
    print(sign_in_help(stack.gateway_address), flush=True)  # one line per command, unwrapped
    console.print(f"  key prefix   {stack.prefix}  (set ROUNDHOUSE_KEY_PREFIX to share a Redis)")
    console.print(f"Stop everything with: {program()} down")
    return 0


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def down(console: Console | None = None, timeout_s: float = 15.0) -> int:
    console = console or Console()
    state_path = run_dir() / STATE_FILE
    if not state_path.exists():
        console.print("nothing to stop (roundhouse up was not run, or down already was)")
        return 0
    state = json.loads(state_path.read_text())
    ours = []
    for p in state["processes"]:
        try:
            proc = psutil.Process(p["pid"])
            if abs(proc.create_time() - p["started"]) < 1.0:
                ours.append((p["name"], proc))
        except psutil.NoSuchProcess:
            pass
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
    state_path.unlink()
    console.print(f"stopped {len(ours)} processes")
    if not state.get("own_redis") and redis_answers(state["redis_url"]):
        console.print(f"(the shared Redis at {state['redis_url']} keeps the games)")
    return 0


def _killpg(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def main_up(args) -> int:
    return up()


def main_down(args) -> int:
    return down()


if __name__ == "__main__":
    sys.exit(up() if sys.argv[1:] == ["up"] else down())
