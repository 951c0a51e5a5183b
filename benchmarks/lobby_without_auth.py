"""The lobby with token auth replaced by a trusted caller id: for the auth
benchmark only (``benchmarks/bench_lobby_auth.py``), never deployed.

Production runs ``services.lobby.server``, which always authenticates; no
setting turns that off. This program runs the same lobby with one
difference: instead of :class:`services.platform.auth.AuthInterceptor`
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

from services.platform import auth
from services.platform.auth import Principal
from services.platform.interceptors import wrap_handler

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

        @contextlib.asynccontextmanager
        async def trusted(request, context):
            token = auth._principal.set(principal if account else None)
            try:
                yield
            finally:
                with contextlib.suppress(ValueError):
                    auth._principal.reset(token)

        return wrap_handler(handler, trusted)


def main() -> None:
    from services.lobby.server import serve

    asyncio.run(serve(interceptors=lambda verifier, settings: [TrustedCaller()]))


if __name__ == "__main__":
    main()
