"""gRPC bootstrap shared by every server: the standard health service, server
reflection, a Prometheus ``/metrics`` endpoint, structured logs and graceful
shutdown (stop accepting, finish in-flight calls within the grace period,
then exit) on SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Iterable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from prometheus_client import start_http_server

from services.common.logging import get_logger

log = get_logger("server")


class GrpcServer:
    """An asyncio gRPC server with health, reflection and metrics.

    Args:
        name: a short process name for logs.
        service_names: full names of the services registered by ``add``
            (for health and reflection).
        add: callback adding the servicers to the ``grpc.aio.Server`` (it may
            append to ``service_names``).
        address: ``host:port`` to listen on; port 0 picks a free port.
        metrics_port: Prometheus port; 0 = none.
        grace_seconds: time in-flight calls get at shutdown.
    """

    def __init__(
        self,
        name: str,
        service_names: Iterable[str],
        add: Callable[[grpc.aio.Server], None],
        address: str,
        metrics_port: int = 0,
        grace_seconds: float = 5.0,
        on_stop: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.name = name
        self.address = address
        self.metrics_port = metrics_port
        self.grace_seconds = grace_seconds
        self.on_stop = on_stop
        self.server = grpc.aio.server(
            options=[
                ("grpc.so_reuseport", 0),
                ("grpc.max_receive_message_length", 32 * 1024 * 1024),
                ("grpc.max_send_message_length", 32 * 1024 * 1024),
            ]
        )
        add(self.server)
        self.service_names = list(service_names)  # read after add(): it may register more
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection(
            [*self.service_names, health.SERVICE_NAME, reflection.SERVICE_NAME], self.server
        )
        self.port = self.server.add_insecure_port(address)
        if self.port == 0:
            raise OSError(f"{name}: cannot listen on {address}")
        self._stopped = asyncio.Event()

    async def start(self) -> None:
        if self.metrics_port:
            start_http_server(self.metrics_port)
        await self.server.start()
        for svc in ["", *self.service_names]:
            await self.health.set(svc, health_pb2.HealthCheckResponse.SERVING)
        log.info("listening", server=self.name, port=self.port, metrics_port=self.metrics_port)

    async def stop(self) -> None:
        """Graceful stop: report NOT_SERVING, finish in-flight calls, close."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        log.info("shutting down", server=self.name, grace_seconds=self.grace_seconds)
        await self.health.enter_graceful_shutdown()
        await self.server.stop(self.grace_seconds)
        if self.on_stop is not None:
            await self.on_stop()
        log.info("stopped", server=self.name)

    async def run_until_signal(self) -> None:
        """Start, then serve until SIGTERM/SIGINT, then stop gracefully."""
        await self.start()
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await self.stop()
