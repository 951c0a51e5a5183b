"""gRPC bootstrap shared by every server: the standard health service, server
reflection, a Prometheus ``/metrics`` endpoint, structured logs and graceful
shutdown (stop accepting, finish in-flight calls within the grace period,
then exit) on SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import gc
import signal
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any

import grpc
import redis.asyncio as aioredis
import uvloop
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from services.platform.bounds import ServiceBounds
from services.platform.grpc_errors import ErrorMapping
from services.platform.hotstore import async_client
from services.platform.logging import get_logger
from services.platform.metrics import MetricsPortInUse, serve_metrics
from services.platform.supervise import Supervisor

log = get_logger("server")


def run_service(main: Coroutine[Any, Any, None]) -> None:
    """Run a service's ``main`` coroutine to the end on uvloop's event loop (libuv): the same
    asyncio API, with less CPU per wake-up, per socket read and write and per timer than the
    standard library's loop, which every call and every Redis command pays several of."""
    enter_service_process()
    uvloop.run(main)


_service_process = False


def enter_service_process() -> None:
    """Mark this process as a long-running service (:func:`run_service`, the gateway's
    ``serve``) and freeze its heap (:func:`freeze_heap`): its imports are done. From then on
    :func:`startup_done` freezes again what start-up built. In-process servers (the tests)
    never call it and keep the collector's defaults."""
    global _service_process
    _service_process = True
    freeze_heap()


def startup_done() -> None:
    """Start-up is over (a :class:`GrpcServer` serves; the gateway's lifespan has opened
    its clients): in a service process (:func:`enter_service_process`), freeze what it
    built (:func:`freeze_heap`); elsewhere nothing."""
    if _service_process:
        freeze_heap()


def freeze_heap() -> None:
    """Collect garbage once, then freeze every object alive now (``gc.freeze``, Python's
    ``gc`` module): the modules, classes, protobuf descriptors, servers and clients a
    process builds at start-up move to the collector's permanent generation, which its full
    (generation 2) collections no longer traverse.

    Why: start-up leaves a few hundred thousand long-lived container objects, and every
    full collection walked all of them: 80-150 ms of CPU each in the lobby, the gateway, the
    rules service and the bench's load generator (``gc.callbacks`` under ``bench_gateway``,
    docs/benchmarks.md), time in which the process answers nothing, in the tail of the move
    latency. Frozen objects are never collected by the cyclic collector (nothing built at
    start-up is meant to die; reference counting still frees what it can); garbage made
    later is collected as before.
    """
    gc.collect()
    gc.freeze()


def redis_client(
    url: str, max_connections: int, timeout_s: float = 5.0, *, cluster: bool = False
) -> aioredis.Redis:
    """An asyncio Redis client whose pool holds at most ``max_connections``;
    a call waits up to ``timeout_s`` for a free connection, then fails (the
    error interceptor turns that into UNAVAILABLE) instead of opening more.
    ``cluster`` (``redis_cluster``): a Redis Cluster client, ``url`` naming any
    node, at most ``max_connections`` per node
    (:func:`services.platform.hotstore.async_client`)."""
    return async_client(url, max_connections, timeout_s, cluster=cluster)  # type: ignore[return-value]


KEEPALIVE_OPTIONS = (
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_ping_strikes", 0),
)
"""Server options accepting the clients' keepalive pings
(``services/platform/channels.py``: every 30 s, even on a connection only waiting
on a stream); without them gRPC answers the pings with GOAWAY
``too_many_pings`` and drops the connection."""


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
        on_stop: awaited after the server stopped (close clients here).
        ready: awaited every few seconds; while it fails or returns False the
            health service reports NOT_SERVING (e.g. Redis unreachable).
        supervisor: the process's background tasks; while one of them is down
            (:attr:`Supervisor.healthy`) health is NOT_SERVING too.
        max_message_bytes: largest message sent, and accepted when no
            ``message_bytes`` are given.
        message_bytes: method -> largest request accepted (bytes), checked
            before parsing (:mod:`services.platform.bounds`); gRPC itself
            refuses, while reading, anything over the largest of these and
            ``default_message_bytes``.
        default_message_bytes: the bound of methods ``message_bytes`` does
            not name (None = ``max_message_bytes``).
        read_bytes: largest request gRPC reads at all (None = the largest
            bound); one over its method's bound but within this gets the clear
            INVALID_ARGUMENT ``message_too_large``, one over this gRPC's own
            RESOURCE_EXHAUSTED without a reason, so make it a few times the
            largest bound.
        max_concurrent_rpcs: calls (streams included) served at once; gRPC
            refuses more with RESOURCE_EXHAUSTED before reading them, which
            bounds the memory of a burst (back-pressure); None = no cap.
        metrics_host: interface of the metrics endpoint.
        interceptors: more server interceptors (e.g.
            :class:`services.platform.auth.AuthInterceptor`), run inside the
            error interceptor, so what they raise is mapped too.
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
        ready: Callable[[], Awaitable[object]] | None = None,
        max_message_bytes: int = 4 * 1024 * 1024,
        metrics_host: str = "0.0.0.0",
        readiness_interval_s: float = 5.0,
        interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
        supervisor: Supervisor | None = None,
        message_bytes: Mapping[str, int] | None = None,
        default_message_bytes: int | None = None,
        max_concurrent_rpcs: int | None = None,
        read_bytes: int | None = None,
    ) -> None:
        self.name = name
        self.address = address
        self.metrics_port = metrics_port
        self.grace_seconds = grace_seconds
        self.on_stop = on_stop
        self.ready = ready
        self.metrics_host = metrics_host
        self.readiness_interval_s = readiness_interval_s
        self.supervisor = supervisor
        self._readiness: asyncio.Task | None = None
        receive_bytes = max_message_bytes
        if message_bytes:
            receive_bytes = max(
                [*message_bytes.values(), default_message_bytes or max_message_bytes]
            )
        if default_message_bytes is not None:
            receive_bytes = max(receive_bytes, default_message_bytes)
        if read_bytes is not None:
            receive_bytes = max(receive_bytes, read_bytes)
        self.max_concurrent_rpcs = max_concurrent_rpcs
        self.server = grpc.aio.server(
            interceptors=[ErrorMapping(message_bytes, default_message_bytes), *interceptors],
            maximum_concurrent_rpcs=max_concurrent_rpcs,
            options=[
                ("grpc.so_reuseport", 0),
                ("grpc.max_receive_message_length", receive_bytes),
                ("grpc.max_send_message_length", max_message_bytes),
                # clients reconnect now and then, so new replicas get traffic; no grace
                # limit, so a long WatchGame stream is never cut (only new calls move)
                ("grpc.max_connection_age_ms", 5 * 60 * 1000),
                *KEEPALIVE_OPTIONS,
                # back-pressure: no window growth by bandwidth probing, so a client
                # streaming an oversized request is held at the initial 64 KiB window
                # per stream instead of being read (and buffered) at full speed
                ("grpc.http2.bdp_probe", 0),
            ],
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
        """Serve metrics, then gRPC.

        Raises:
            MetricsPortInUse: the metrics port cannot be bound (nothing started).
        """
        if self.metrics_port:
            serve_metrics(self.metrics_port, self.metrics_host)
        await self.server.start()
        await self._set_health(True)
        startup_done()
        if self.ready is not None or self.supervisor is not None:
            self._readiness = asyncio.create_task(self._watch_readiness())
        log.info("listening", server=self.name, port=self.port, metrics_port=self.metrics_port)

    async def _set_health(self, serving: bool) -> None:
        state = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for svc in ["", *self.service_names]:
            await self.health.set(svc, state)

    async def _watch_readiness(self) -> None:
        serving = True
        while not self._stopped.is_set():
            await asyncio.sleep(self.readiness_interval_s)
            try:
                ok = self.ready is None or (await self.ready()) is not False
            except Exception:  # noqa: BLE001 - any failure means not ready
                ok = False
            if self.supervisor is not None and not self.supervisor.healthy:
                ok = False
            if ok != serving and not self._stopped.is_set():
                serving = ok
                await self._set_health(ok)
                down = self.supervisor.down() if self.supervisor is not None else []
                log.warning("readiness changed", server=self.name, serving=ok, tasks_down=down)

    async def stop(self) -> None:
        """Graceful stop: report NOT_SERVING, finish in-flight calls, close."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self._readiness is not None:
            self._readiness.cancel()
        log.info("shutting down", server=self.name, grace_seconds=self.grace_seconds)
        await self.health.enter_graceful_shutdown()
        await self.server.stop(self.grace_seconds)
        if self.on_stop is not None:
            await self.on_stop()
        log.info("stopped", server=self.name)

    async def run_until_signal(self) -> None:
        """Start, then serve until SIGTERM/SIGINT, then stop gracefully. A
        metrics port in use ends the process with status 2 and a logged error
        naming the port and the setting."""
        try:
            await self.start()
        except MetricsPortInUse as exc:
            log.error("cannot start", server=self.name, error=str(exc))
            raise SystemExit(2) from None
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await self.stop()


def service_server(
    name: str,
    settings,
    service_names: Iterable[str],
    add: Callable[[grpc.aio.Server], None],
    address: str,
    bounds: ServiceBounds,
    *,
    on_stop: Callable[[], Awaitable[None]] | None = None,
    ready: Callable[[], Awaitable[object]] | None = None,
    interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
    supervisor: Supervisor | None = None,
    metrics_port: int | None = None,
) -> GrpcServer:
    """The one bootstrap of every service's :class:`GrpcServer`: metrics port and
    interface, grace period, message sizes and the concurrent-call cap from
    ``settings`` (:class:`services.platform.settings.CommonSettings`), and the service's own
    ``bounds`` (:mod:`services.platform.bounds`: per-method request sizes, checked
    before parsing, INVALID_ARGUMENT ``message_too_large``; past ``read_bytes``
    gRPC's RESOURCE_EXHAUSTED; ``max_concurrent_rpcs`` plus the service's streams).

    Args:
        metrics_port: None = the setting ``metrics_port`` (the rules launcher gives
            each title its own).
    """
    return GrpcServer(
        name,
        service_names,
        add,
        address,
        settings.metrics_port if metrics_port is None else metrics_port,
        settings.grace_seconds,
        on_stop=on_stop,
        ready=ready,
        max_message_bytes=bounds.max_send_bytes or settings.max_message_bytes,
        metrics_host=settings.bind_host,
        interceptors=interceptors,
        supervisor=supervisor,
        message_bytes=bounds.message_bytes or None,
        default_message_bytes=bounds.default_message_bytes,
        max_concurrent_rpcs=settings.max_concurrent_rpcs + bounds.streams,
        read_bytes=bounds.read_bytes,
    )
