"""The lobby with token auth replaced by a trusted caller id: for the auth
benchmark only (``benchmarks/bench_lobby_auth.py``), never deployed.

Production runs ``services.lobby.server``, which always authenticates; no
setting turns that off. This program runs the same lobby with one
difference: instead of :class:`services.accounts.auth.AuthInterceptor`
(parse ``authorization``, SHA-256 the token, look it up in the verifier's
cache or the store, check expiry and revocation), an interceptor takes the
caller's account id from the metadata ``x-bench-account`` as it is. So the
two lobbies differ by exactly the cost of token auth.

Run (by the benchmark): ``python -m benchmarks.lobby_without_auth``.
"""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from services.accounts import auth
from services.accounts.auth import Principal

BENCH_ACCOUNT = "x-bench-account"
SCOPES = frozenset({"play", "tables:write"})


class TrustedCaller(grpc.aio.ServerInterceptor):
    """Sets the caller to the human account named in ``x-bench-account``."""

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        account = dict(handler_call_details.invocation_metadata or ()).get(BENCH_ACCOUNT, "")
        principal = Principal(kind="human", account_id=account, username=account, scopes=SCOPES)

        def enter():
            return auth._principal.set(principal if account else None)

        def leave(token) -> None:
            with contextlib.suppress(ValueError):
                auth._principal.reset(token)

        if handler.unary_unary is not None:
            inner = handler.unary_unary

            async def unary(request, context):
                token = enter()
                try:
                    return await inner(request, context)
                finally:
                    leave(token)

            return grpc.unary_unary_rpc_method_handler(
                unary,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            async def stream(request, context):
                token = enter()
                try:
                    async for item in inner_stream(request, context):
                        yield item
                finally:
                    leave(token)

            return grpc.unary_stream_rpc_method_handler(
                stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


def main() -> None:
    from services.lobby.server import serve

    asyncio.run(serve(interceptors=lambda verifier, settings: [TrustedCaller()]))


if __name__ == "__main__":
    main()
