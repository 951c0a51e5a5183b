"""Run the gateway: ``roundhouse serve gateway`` (uvicorn on
``ROUNDHOUSE_GATEWAY_ADDRESS``, 127.0.0.1:8080 by default; ``GET /healthz`` for probes;
Prometheus process metrics on ``ROUNDHOUSE_METRICS_PORT`` when set)."""

from __future__ import annotations

import uvicorn

from services.platform.logging import configure_logging, get_logger
from services.platform.metrics import MetricsPortInUse, serve_metrics
from services.platform.server import enter_service_process
from services.platform.settings import GatewaySettings, get_settings
from services.web.app import create_app


def main() -> None:
    settings = get_settings(GatewaySettings)
    configure_logging(settings.log_level, settings.log_format)
    if settings.metrics_port:  # process metrics on ROUNDHOUSE_METRICS_PORT, as every process
        try:
            serve_metrics(settings.metrics_port, settings.bind_host)
        except MetricsPortInUse as exc:
            get_logger("gateway").error("cannot start", server="gateway", error=str(exc))
            raise SystemExit(2) from None
    host, port = settings.gateway_address.rsplit(":", 1)
    app = create_app(settings)
    enter_service_process()  # a long-running process: its start-up heap is frozen
    uvicorn.run(
        app,
        host=host,
        port=int(port),
        log_level=settings.log_level.lower(),
        access_log=False,
        proxy_headers=False,  # the app's own ProxyHeadersMiddleware: trusted_proxies only
        http="httptools",
        timeout_graceful_shutdown=int(settings.grace_seconds),
    )


if __name__ == "__main__":
    main()
