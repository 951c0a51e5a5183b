"""The gRPC bootstrap (services/platform/server.py) and its error interceptor on a
real server: grpc health's ``Watch`` (a coroutine that calls
``context.write``) streams, and server-streaming handlers of both grpc.aio
styles get their escaping errors mapped."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.platform.grpc_errors import ServiceError, error_info, error_reason
from services.platform.server import GrpcServer

SERVICE = "roundhouse.test.Streams"


async def _writer_stream(request: bytes, context) -> None:
    """A coroutine-style streaming handler: two writes, then a ServiceError."""
    await context.write(b"one")
    await context.write(b"two")
    raise ServiceError(grpc.StatusCode.FAILED_PRECONDITION, "writer_refused", "no third")


async def _generator_stream(request: bytes, context):
    """A generator-style streaming handler: one yield, then a ServiceError."""
    yield b"one"
    raise ServiceError(grpc.StatusCode.FAILED_PRECONDITION, "generator_refused", "no second")


def _add_streams(server: grpc.aio.Server) -> None:
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                SERVICE,
                {
                    "Writer": grpc.unary_stream_rpc_method_handler(_writer_stream),
                    "Generator": grpc.unary_stream_rpc_method_handler(_generator_stream),
                },
            )
        ]
    )


async def _with_server(check) -> None:
    server = GrpcServer("test", [SERVICE], _add_streams, "127.0.0.1:0", grace_seconds=0.1)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            await check(server, channel)
    finally:
        await server.stop()


def test_health_watch_streams_the_status_and_its_changes():
    async def check(server, channel):
        stub = health_pb2_grpc.HealthStub(channel)
        call = stub.Watch(health_pb2.HealthCheckRequest(service=SERVICE), timeout=10)
        first = await call.read()
        assert first.status == health_pb2.HealthCheckResponse.SERVING
        await server._set_health(False)
        second = await call.read()
        assert second.status == health_pb2.HealthCheckResponse.NOT_SERVING
        call.cancel()

    asyncio.run(_with_server(check))


@pytest.mark.parametrize(
    ("method", "sent", "reason"),
    [("Writer", [b"one", b"two"], "writer_refused"), ("Generator", [b"one"], "generator_refused")],
)
def test_a_streaming_handler_of_either_style_gets_its_error_mapped(method, sent, reason):
    async def check(server, channel):
        call = channel.unary_stream(f"/{SERVICE}/{method}")(b"", timeout=10)
        received = []
        with pytest.raises(grpc.aio.AioRpcError) as err:
            async for item in call:
                received.append(item)
        assert received == sent
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert error_reason(err.value) == reason

    asyncio.run(_with_server(check))


def test_a_request_over_its_bound_is_refused_with_a_reason_and_past_the_read_limit_without():
    """Between a method's bound and ``read_bytes`` the refusal is INVALID_ARGUMENT
    ``message_too_large`` with the bound; past ``read_bytes`` gRPC's core stops
    reading and answers RESOURCE_EXHAUSTED itself, before any of our code runs,
    so that answer has no ErrorInfo (``docs/api.md`` says so; such a refusal
    is not one to retry)."""

    async def echo(request: bytes, context) -> bytes:
        return request

    def add(server: grpc.aio.Server) -> None:
        server.add_generic_rpc_handlers(
            [
                grpc.method_handlers_generic_handler(
                    SERVICE,
                    {
                        "Echo": grpc.unary_unary_rpc_method_handler(
                            echo, request_deserializer=bytes, response_serializer=bytes
                        )
                    },
                )
            ]
        )

    async def main():
        server = GrpcServer(
            "test",
            [SERVICE],
            add,
            "127.0.0.1:0",
            grace_seconds=0.1,
            message_bytes={f"/{SERVICE}/Echo": 1024},
            default_message_bytes=1024,
            read_bytes=64 * 1024,
        )
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                call = channel.unary_unary(f"/{SERVICE}/Echo")
                assert await call(b"x" * 1024, timeout=10) == b"x" * 1024
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await call(b"x" * 1025, timeout=10)
                assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert error_reason(err.value) == "message_too_large"
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await call(b"x" * (64 * 1024 + 1), timeout=10)
                assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert error_info(err.value) is None  # no ErrorInfo: the core answered
                assert "Received message larger than max (65537 vs. 65536)" in err.value.details()
        finally:
            await server.stop()

    asyncio.run(main())


def test_calls_past_max_concurrent_rpcs_are_refused_before_they_are_read():
    """Issue 13, item 3: a cap on concurrent calls per server (back-pressure), so a
    burst of large requests cannot grow the process without bound."""
    release = asyncio.Event()
    entered = []

    async def hold(request: bytes, context) -> bytes:
        entered.append(request)
        await release.wait()
        return request

    def add(server: grpc.aio.Server) -> None:
        server.add_generic_rpc_handlers(
            [
                grpc.method_handlers_generic_handler(
                    SERVICE,
                    {
                        "Hold": grpc.unary_unary_rpc_method_handler(
                            hold, request_deserializer=bytes, response_serializer=bytes
                        )
                    },
                )
            ]
        )

    async def main():
        server = GrpcServer(
            "test", [SERVICE], add, "127.0.0.1:0", grace_seconds=0.1, max_concurrent_rpcs=2
        )
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                call = channel.unary_unary(f"/{SERVICE}/Hold")
                held = [asyncio.ensure_future(call(b"a", timeout=30)) for _ in range(2)]
                while len(entered) < 2:
                    await asyncio.sleep(0.01)
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await call(b"b", timeout=30)
                assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert entered == [b"a", b"a"]  # the third never reached the handler
                release.set()
                assert await asyncio.gather(*held) == [b"a", b"a"]
        finally:
            await server.stop()

    asyncio.run(main())


def test_a_service_process_freezes_its_start_up_heap_and_a_test_process_does_not():
    """``run_service``/the gateway mark a service process: its start-up heap is frozen
    (``gc.freeze``) before serving and again once a server serves, so full collections
    skip it; an in-process server (this test's process) changes nothing."""
    import gc
    import subprocess
    import sys
    import textwrap

    before = gc.get_freeze_count()
    asyncio.run(_with_server(lambda server, channel: asyncio.sleep(0)))
    assert gc.get_freeze_count() == before

    probe = textwrap.dedent(
        """
        import asyncio, gc
        from services.platform import server
        assert gc.get_freeze_count() == 0
        server.enter_service_process()
        at_entry = gc.get_freeze_count()
        built = [[i] for i in range(5000)]  # start-up state made after the entry
        async def main():
            s = server.GrpcServer("probe", [], lambda g: None, "127.0.0.1:0", grace_seconds=0.1)
            await s.start()
            await s.stop()
        asyncio.run(main())
        print(at_entry, gc.get_freeze_count())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    at_entry, after_start = map(int, out.stdout.strip().splitlines()[-1].split())
    assert at_entry > 10_000  # the imports: modules, classes, descriptors
    assert after_start >= at_entry + 5000  # what start-up built is frozen too
