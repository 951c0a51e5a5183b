"""The Prometheus ``/metrics`` endpoint of a process (prometheus_client).

One port per process: ``ROUNDHOUSE_METRICS_PORT`` (0 = no endpoint). A port
another process already holds is a configuration error, reported as
:class:`MetricsPortInUse` naming the port and the setting; the process
entry points turn it into a logged error and exit status 2 (no traceback).

prometheus_client is imported only when an endpoint starts: the bot worker
must set up its multiprocess mode before the library is first imported
(:mod:`services.bots.worker_metrics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

SETTING = "ROUNDHOUSE_METRICS_PORT"


class MetricsPortInUse(RuntimeError):
    """The metrics endpoint cannot listen on its port (taken, or not allowed).

    Attributes: ``host``, ``port``.
    """

    def __init__(self, host: str, port: int, why: str) -> None:
        super().__init__(
            f"cannot serve metrics on {host}:{port} ({why}); another process may hold the "
            f"port: give each process its own {SETTING}, or {SETTING}=0 for no metrics"
        )
        self.host, self.port = host, port


def serve_metrics(port: int, host: str, registry: CollectorRegistry | None = None) -> None:
    """Serve ``registry`` (default: the process's default registry) on
    ``http://host:port/metrics`` from a daemon thread.

    Raises:
        MetricsPortInUse: the port cannot be bound (e.g. another process holds it).
    """
    from prometheus_client import REGISTRY, start_http_server

    registry = REGISTRY if registry is None else registry
    try:
        start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise MetricsPortInUse(host, port, exc.strerror or str(exc)) from None
