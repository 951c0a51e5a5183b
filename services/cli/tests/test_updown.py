"""``roundhouse up``'s check that its addresses are free (``services/cli/updown.py``)."""

from __future__ import annotations

import socket
import time

from rich.console import Console

from services.cli import updown
from services.cli.updown import FREE, HELD, LISTENING, port_state


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_listening_port_is_taken_and_a_free_one_free():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert port_state(f"127.0.0.1:{listener.getsockname()[1]}") == LISTENING
    assert port_state(f"127.0.0.1:{_free_port()}") == FREE


def _time_wait_port() -> int:
    """A port left by a closed outgoing connection (in TIME-WAIT for a minute)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client = socket.create_connection(listener.getsockname())
        port = client.getsockname()[1]
        accepted, _ = listener.accept()
        client.close()  # the outgoing end closes first: it waits in TIME-WAIT
        accepted.close()
    return port


def test_a_port_held_by_a_closed_outgoing_connection_is_told_apart():
    """What a fresh user hit on a busy machine: nothing listened, yet the port could not be
    bound (a connection in TIME-WAIT on it); `up` said to stop "what uses" it."""
    assert port_state(f"127.0.0.1:{_time_wait_port()}") == HELD


def test_up_waits_for_held_ports_and_refuses_a_listened_one_at_once(monkeypatch, capsys):
    held = f"127.0.0.1:{_time_wait_port()}"
    monkeypatch.setattr(updown, "HELD_WAIT_S", 1.5)
    start = time.monotonic()
    taken = updown._wait_for_ports({"lobby": held}, Console())
    assert time.monotonic() - start >= 1.5  # it waited (the TIME-WAIT outlasts the test)
    assert taken == [f"lobby {held} (held by another connection)"]
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        busy = f"127.0.0.1:{listener.getsockname()[1]}"
        start = time.monotonic()
        taken = updown._wait_for_ports({"lobby": held, "gateway": busy}, Console())
        assert time.monotonic() - start < 1.0
    assert f"gateway {busy} (something listens there)" in taken
