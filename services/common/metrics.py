"""The Prometheus ``/metrics`` endpoint of a process (prometheus_client).

One port per process: ``ROUNDHOUSE_METRICS_PORT`` (0 = no endpoint). A port
another process already holds is a configuration error, reported as
:class:`MetricsPortInUse` naming the port and the setting; the process
entry points turn it into a logged error and exit status 2 (no traceback).
"""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, start_http_server

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


def serve_metrics(port: int, host: str, registry: CollectorRegistry = REGISTRY) -> None:
    """Serve ``registry`` on ``http://host:port/metrics`` from a daemon thread.

    Raises:
        MetricsPortInUse: the port cannot be bound (e.g. another process holds it).
    """
    try:
        start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise MetricsPortInUse(host, port, exc.strerror or str(exc)) from None
