"""The gateway's FastAPI application: routers by resource
(:mod:`services.web.accounts`, :mod:`services.web.tables`,
:mod:`services.web.streams`; a new resource adds its own router module and
one line in :data:`ROUTERS`), the error answers, and the guard on request
bodies.

OpenAPI at ``/api/openapi.json``, interactive docs at ``/api/docs``.
"""

from __future__ import annotations

import contextlib
import importlib
import uuid
from urllib.parse import unquote_to_bytes

import grpc
import redis
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.telemetry import TelemetryConfig
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from roundhouse.v1 import accounts_pb2_grpc, lobby_pb2_grpc, tournaments_pb2_grpc
from services.platform.channels import aio_channel
from services.platform.grpc_errors import RETRY_AFTER_S, STORAGE_FULL_RETRY_AFTER_S
from services.platform.hotstore import is_outage
from services.platform.logging import get_logger
from services.platform.server import redis_client, startup_done
from services.platform.settings import GatewaySettings
from services.web.backend import Backends
from services.web.errors import ApiError, validation_error
from services.web.imports import IMPORT_PATHS
from services.web.security import SecurityHeaders
from services.web.session import csrf_key
from services.web.streams_limit import StreamSlots

log = get_logger("gateway")

ROUTERS = (
    "services.web.accounts",
    "services.web.tables",
    "services.web.streams",
    "services.web.tournaments",
    "services.web.oauth",
    "services.web.imports",
    "services.web.reviews",
    "services.web.chat",
    "services.web.pages.accounts",
    "services.web.pages.lobby",
    "services.web.pages.table",
    "services.web.pages.replay",
    "services.web.pages.tournaments",
    "services.web.pages.chat",
)
"""Modules whose ``router`` the app includes, in order (the tournaments add theirs)."""

BODY_METHODS = {"POST", "PUT", "PATCH"}
NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}
"""FastAPI's native OpenTelemetry, off (issue 33, item 6: 3-4% of the gateway's CPU per
request went to checking, request by request, whether a provider was configured)."""


def _error(err: ApiError) -> JSONResponse:
    return JSONResponse(err.body(), status_code=err.status, headers=err.headers)


class BodyGuard:
    """Refuses, before any handler runs, a body larger than ``max_bytes`` (413
    ``body_too_large``; by ``Content-Length``, counted while read, or, chunked, read here first)
    and, under ``/api``, a
    body that is not JSON (415 ``bad_content_type``; the web pages post forms).
    ``routes`` gives a path its own bound instead (the import of a recorded game)."""

    def __init__(self, app: ASGIApp, max_bytes: int, routes: dict[str, int] | None = None) -> None:
        self.app, self.max_bytes, self.routes = app, max_bytes, routes or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        limit = self.routes.get(scope["path"], self.max_bytes)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await _error(self._too_large(limit))(scope, receive, send)
            return
        chunked = "chunked" in headers.get("transfer-encoding", "")
        has_body = chunked or (length is not None and length != "0")
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        api = scope["path"].startswith("/api")
        if api and has_body and kind != "application/json":
            refusal = ApiError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_content_type",
                "request bodies are JSON: send Content-Type: application/json",
                status=415,
                content_type=kind or "(none)",
            )
            await _error(refusal)(scope, receive, send)
            return
        if chunked or length is None:
            # no Content-Length: read the body here, at most max_bytes of it, before any handler
            # runs (a handler's own read would turn the overflow into its parsing error, 400)
            body = await self._read_at_most(receive, limit)
            if body is None:
                await _error(self._too_large(limit))(scope, receive, send)
                return
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if replayed:
                    return await receive()  # http.disconnect
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}

            await self.app(scope, replay, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await _error(self._too_large(limit))(scope, receive, send)

    async def _read_at_most(self, receive: Receive, limit: int) -> bytes | None:
        """The whole body, or None once it passes ``limit`` bytes (the rest is not read)."""
        parts, seen = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(parts)  # the client left: the handler sees an empty body
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > limit:
                return None
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)

    def _too_large(self, limit: int) -> ApiError:
        """413 ``body_too_large`` (made only when it is sent: most requests never need it)."""
        return ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "body_too_large",
            f"request bodies are at most {limit} bytes",
            status=413,
            max_bytes=limit,
        )


class _TooLarge(Exception):
    pass


class Utf8Urls:
    """Refuses a URL whose percent-escapes are not UTF-8 (a lone surrogate ``%ED%A0%80``,
    a stray ``%FF``): 400 ``bad_unicode`` with ``field`` ``path`` or ``query``, before any
    handler runs (the server would otherwise hand the handlers U+FFFD in their place)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for field, raw in (
                ("path", scope.get("raw_path") or b""),
                ("query", scope.get("query_string") or b""),
            ):
                if b"%" in raw or not raw.isascii():
                    try:
                        unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
                    except UnicodeDecodeError:
                        refusal = ApiError(
                            grpc.StatusCode.INVALID_ARGUMENT,
                            "bad_unicode",
                            f"the URL's {field} is not UTF-8 (percent-escapes of UTF-8 text only)",
                            field=field,
                        )
                        await _error(refusal)(scope, receive, send)
                        return
        await self.app(scope, receive, send)


def storage_error(exc: BaseException) -> ApiError | None:
    """The answer to an error of the gateway's own Redis, as the services give it: 503
    ``storage_full`` (out of memory) or ``storage_unavailable`` (down, restarting: the first
    call after a restart meets the old server's dead pooled connections), with
    ``retry_after_s``; None for any other error."""
    if isinstance(exc, redis.exceptions.OutOfMemoryError):
        return ApiError(
            grpc.StatusCode.UNAVAILABLE,
            "storage_full",
            "storage is full and refuses writes; try again later",
            retry_after_s=STORAGE_FULL_RETRY_AFTER_S,
        )
    if is_outage(exc):
        return ApiError(
            grpc.StatusCode.UNAVAILABLE,
            "storage_unavailable",
            "storage is unavailable; try again",
            retry_after_s=RETRY_AFTER_S,
        )
    return None


def create_app(settings: GatewaySettings) -> FastAPI:
    """The gateway for ``settings`` (lobby and accounts addresses, Redis, the
    stream limits). Channels and Redis open with the app's lifespan."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        lobby = aio_channel(settings.lobby_address)
        accounts = aio_channel(settings.accounts_address)
        tournaments = aio_channel(settings.tournaments_address)
        client = redis_client(
            settings.redis_url, settings.redis_max_connections, cluster=settings.redis_cluster
        )
        app.state.backends = Backends(
            lobby_pb2_grpc.LobbyStub(lobby),
            accounts_pb2_grpc.AccountsStub(accounts),
            tournaments=tournaments_pb2_grpc.TournamentsStub(tournaments),
        )
        app.state.keepalive_s = settings.gateway_keepalive_s
        app.state.slots = StreamSlots(
            client,
            settings.key_prefix,
            settings.gateway_streams_per_token,
            3 * settings.gateway_keepalive_s,
        )
        startup_done()
        try:
            yield
        finally:
            await lobby.close()
            await accounts.close()
            await tournaments.close()
            await client.aclose()

    app = FastAPIOffline(  # a FastAPI app whose /api/docs page loads Swagger UI from here
        title="Roundhouse API",
        version="1",
        description="Train games online over HTTP/JSON and NDJSON streams (docs/api.md).",
        openapi_url="/api/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
        static_url="/api/docs-static",
        lifespan=lifespan,
        # no OpenTelemetry here (metrics: Prometheus, services/platform/metrics.py): FastAPI's
        # own would otherwise ask the global providers whether one is set, on every request
        telemetry=NO_TELEMETRY,
    )
    for name in ROUTERS:
        module = importlib.import_module(name)
        app.include_router(module.router)
        if hasattr(module, "api_router"):  # an API part beside the pages (OAuth)
            app.include_router(module.api_router)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        """The process answers (the Kubernetes probes, deploy/k8s/gateway.yaml); the
        backends' own health is theirs: a call they cannot answer is a 503."""
        return {"status": "ok"}

    app.mount("/static", StaticFiles(packages=[("services.web", "static")]), name="static")

    def _page_error(request: Request, err: ApiError):
        if request.url.path.startswith(("/api", "/static")):
            return _error(err)
        from services.web.pages.base import error_page

        return error_page(request, err)

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError):
        answer = _page_error(request, exc)
        return await answer if not isinstance(answer, JSONResponse) else answer

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError):
        return _error(validation_error(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        code, reason = {
            404: (grpc.StatusCode.NOT_FOUND, "no_route"),
            405: (grpc.StatusCode.UNIMPLEMENTED, "method_not_allowed"),
        }.get(exc.status_code, (grpc.StatusCode.INVALID_ARGUMENT, "bad_request"))
        return _error(ApiError(code, reason, str(exc.detail), status=exc.status_code))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception):
        outage = storage_error(exc)
        if outage is not None:  # the gateway's own Redis (stream slots): as the services say
            log.warning("storage unavailable", path=request.url.path, error=repr(exc))
            return _error(outage)
        incident = uuid.uuid4().hex[:12]
        log.exception("gateway bug", incident=incident, path=request.url.path)
        return _error(
            ApiError(grpc.StatusCode.INTERNAL, "internal", "a bug on our side", incident=incident)
        )

    app.add_middleware(
        BodyGuard,
        max_bytes=settings.gateway_max_body_bytes,
        routes=dict.fromkeys(IMPORT_PATHS, settings.gateway_import_max_body_bytes),
    )
    app.add_middleware(Utf8Urls)
    app.add_middleware(SecurityHeaders)  # every answer, refusals of the guards above too
    if settings.trusted_proxies:  # outermost: every later layer sees the real client
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.trusted_proxies)
    app.state.internal_secret = settings.internal_secret
    app.state.settings = settings  # the OAuth store's database (services/web/oauth.py)
    app.state.https = settings.gateway_https
    app.state.csrf_key = csrf_key(settings.internal_secret)
    return app
