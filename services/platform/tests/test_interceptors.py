"""wrap_handler keeps each handler's kind and style and runs every call inside ``around``."""

from __future__ import annotations

import asyncio
import contextlib
import inspect

import grpc
import pytest

from services.platform.interceptors import wrap_handler


async def _unary(request, context):
    return request * 2


async def _generator(request, context):
    for i in range(request):
        yield i


async def _writer(request, context):
    await context.write(request)


async def _client_stream(requests, context):
    return sum([r async for r in requests])


async def _bidi(requests, context):
    async for r in requests:
        yield r + 1


async def _requests():
    for r in (1, 2, 3):
        yield r


class _Context:
    def __init__(self):
        self.written = []

    async def write(self, item):
        self.written.append(item)


@pytest.mark.parametrize(
    ("factory", "inner", "request_of", "expected"),
    [
        (grpc.unary_unary_rpc_method_handler, _unary, lambda: 4, 8),
        (grpc.unary_stream_rpc_method_handler, _generator, lambda: 3, [0, 1, 2]),
        (grpc.unary_stream_rpc_method_handler, _writer, lambda: 5, None),
        (grpc.stream_unary_rpc_method_handler, _client_stream, _requests, 6),
        (grpc.stream_stream_rpc_method_handler, _bidi, _requests, [2, 3, 4]),
    ],
)
def test_every_kind_and_style_runs_inside_around(factory, inner, request_of, expected):
    events = []

    @contextlib.asynccontextmanager
    async def around(request, context):
        events.append("enter")
        try:
            yield
        finally:
            events.append("exit")

    handler = factory(inner)
    wrapped = wrap_handler(handler, around)
    assert (wrapped.request_streaming, wrapped.response_streaming) == (
        handler.request_streaming,
        handler.response_streaming,
    )
    function = next(
        f
        for f in (wrapped.unary_unary, wrapped.unary_stream, wrapped.stream_unary)
        + (wrapped.stream_stream,)
        if f is not None
    )
    assert inspect.isasyncgenfunction(function) == inspect.isasyncgenfunction(inner)
    context = _Context()

    async def run():
        if inspect.isasyncgenfunction(function):
            return [item async for item in function(request_of(), context)]
        return await function(request_of(), context)

    result = asyncio.run(run())
    assert events == ["enter", "exit"]
    if expected is None:
        assert context.written == [5]
    else:
        assert result == expected


def test_around_sees_the_handlers_exception():
    seen = []

    async def failing(request, context):
        raise KeyError("boom")

    @contextlib.asynccontextmanager
    async def around(request, context):
        try:
            yield
        except KeyError as exc:
            seen.append(exc)
            raise ValueError("mapped") from exc

    wrapped = wrap_handler(grpc.unary_unary_rpc_method_handler(failing), around)
    with pytest.raises(ValueError, match="mapped"):
        asyncio.run(wrapped.unary_unary(1, _Context()))
    assert len(seen) == 1
