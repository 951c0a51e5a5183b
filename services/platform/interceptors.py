"""Running code around every gRPC handler, for server interceptors.

grpc.aio hands an interceptor a method handler of one of four kinds (unary or streaming request,
unary or streaming response), and a streaming response handler in one of two styles: an async
generator (``yield`` the responses) or a coroutine that calls ``context.write`` (grpc health's
``Watch``). grpc.aio picks how to drive a handler by its style, so a wrapper must keep it.
:func:`wrap_handler` does that once for every interceptor of ours: the error mapping
(``grpc_errors.ErrorMapping``), authentication (``services.platform.auth.AuthInterceptor``) and the
benchmarks' trusted-caller interceptor.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import grpc

#: ``around(request, context)`` -> an async context manager that the call runs inside. For a
#: streaming request, ``request`` is the request iterator. Exceptions of the handler reach its
#: ``__aexit__``, so it may map them (by raising another, e.g. through ``context.abort``).
Around = Callable[[Any, grpc.aio.ServicerContext], AbstractAsyncContextManager[Any]]

_FACTORIES = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


class WrappedHandlers:
    """An interceptor's wrapped handlers, made once per method and kept.

    grpc.aio asks every interceptor for the handler of every call; the handler it is given for
    a method is the same object each time (the servicer's, or the next interceptor's kept
    one), so the wrapper made for it can be too: building it anew per call (closures, a
    handler tuple, an ``inspect`` check) cost each call about as much as the wrapper's work.
    A wrapper kept here must therefore depend on nothing but the method and the handler
    (what varies per call comes from the call's ``context``). Unknown methods have no handler
    and are never kept; the known ones are a fixed set.
    """

    def __init__(self) -> None:
        self._kept: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def get(
        self,
        method: str,
        handler: grpc.RpcMethodHandler,
        make: Callable[[], grpc.RpcMethodHandler],
    ) -> grpc.RpcMethodHandler:
        """The kept wrapper of ``handler`` for ``method``, made by ``make()`` the first time."""
        kept = self._kept.get(method)
        if kept is not None and kept[0] is handler:
            return kept[1]
        wrapped = make()
        self._kept[method] = (handler, wrapped)
        return wrapped


def wrap_handler(
    handler: grpc.RpcMethodHandler,
    around: Around,
    request_deserializer: Callable[[bytes], Any] | None = None,
) -> grpc.RpcMethodHandler:
    """``handler`` with each call run inside ``around(request, context)``.

    The kind and style of ``handler`` are kept; ``request_deserializer`` replaces the handler's
    own when given (the error mapping's lenient decoding).
    """
    kind = (handler.request_streaming, handler.response_streaming)
    inner = {
        (False, False): handler.unary_unary,
        (False, True): handler.unary_stream,
        (True, False): handler.stream_unary,
        (True, True): handler.stream_stream,
    }[kind]

    if inspect.isasyncgenfunction(inner):

        async def generator(request, context):
            async with around(request, context):
                async for item in inner(request, context):
                    yield item

        wrapped = generator
    else:

        async def coroutine(request, context):
            async with around(request, context):
                return await inner(request, context)

        wrapped = coroutine
    return _FACTORIES[kind](
        wrapped,
        request_deserializer=request_deserializer or handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )
