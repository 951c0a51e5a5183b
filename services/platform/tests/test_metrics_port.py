"""A metrics port another process holds gives a clear error naming the port
and the setting (services/platform/metrics.py), and the servers exit with
status 2 and that message instead of a raw OSError traceback."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from services.cli.launcher import Stack
from services.platform.metrics import MetricsPortInUse, serve_metrics


@pytest.fixture
def taken_port():
    """A port some other process listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_serve_metrics_on_a_taken_port_names_the_port_and_the_setting(taken_port):
    with pytest.raises(MetricsPortInUse) as err:
        serve_metrics(taken_port, "127.0.0.1")
    assert err.value.port == taken_port
    assert f"127.0.0.1:{taken_port}" in str(err.value)
    assert "ROUNDHOUSE_METRICS_PORT" in str(err.value)


SERVERS = {
    "lobby": ["-m", "services.lobby.server"],
    "rules": ["-m", "services.railbarons.service.server"],
    "dispatcher": ["-m", "services.bots.dispatcher"],
    "worker": None,  # the Celery bot worker, as the launcher runs it
}


@pytest.mark.integration
@pytest.mark.parametrize("server", sorted(SERVERS))
def test_a_server_on_a_taken_metrics_port_exits_2_with_the_reason(
    server, taken_port, redis_url, tmp_path
):
    stack = Stack(["railbarons"], redis_url=redis_url, run_dir=tmp_path)
    argv = stack.worker_argv() if SERVERS[server] is None else [sys.executable, *SERVERS[server]]
    env = stack.env()
    env.update(ROUNDHOUSE_METRICS_PORT=str(taken_port), ROUNDHOUSE_BIND_HOST="127.0.0.1")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert str(taken_port) in out and "ROUNDHOUSE_METRICS_PORT" in out
    assert "Traceback" not in out
