"""gRPC errors, the standard way: a status code, a message for humans and a
``google.rpc.ErrorInfo`` detail (grpcio-status) whose ``reason`` is the
machine-readable rule code (``not_your_turn``, ``dial_in_red``, ...) and whose
``metadata`` carries the numbers a client needs to act on the error without
parsing the message: ``current_version`` and ``expected_version`` of a stale
or future version, ``min_seat``/``max_seat`` of a bad seat, ``max_length``,
``max_watchers``, ``retry_after_s`` of UNAVAILABLE or RESOURCE_EXHAUSTED,
``action_id`` of a divergent import, ... (``docs/api.md`` lists them). Values
are strings (ErrorInfo's type); numbers are written in decimal.

Servers call :func:`abort`; clients read the code with :func:`error_reason`.
:class:`ErrorMapping` is a server interceptor that turns anything unexpected
into UNAVAILABLE (Redis down or failing over: ``storage_unavailable``; a write
that WAIT did not see on enough replicas: ``not_replicated``; the database down:
``database_unavailable``, see :func:`services.platform.db.is_unavailable`) or
INTERNAL (a bug, logged with an incident id) instead of leaking internals as
UNKNOWN.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections.abc import Mapping
from typing import NoReturn

import grpc
import redis.exceptions
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from services.platform.db import is_unavailable as database_unavailable
from services.platform.hotstore import NotReplicated, is_outage
from services.platform.interceptors import WrappedHandlers, wrap_handler
from services.platform.logging import get_logger

log = get_logger("grpc")

DOMAIN = "roundhouse"

GAME_ID_MAX = 64
GAME_ID_RE = re.compile(rf"^[A-Za-z0-9_.-]{{1,{GAME_ID_MAX}}}$")
GAME_ID_RULE = f"game_id must be 1-{GAME_ID_MAX} characters of A-Z a-z 0-9 _ . -"

RETRY_AFTER_S = 1
"""Seconds a client is told to wait (``retry_after_s`` metadata) before it
retries a call refused as UNAVAILABLE or RESOURCE_EXHAUSTED; a hint, not a
promise (an outage may last longer)."""

STORAGE_FULL_RETRY_AFTER_S = 5
"""``retry_after_s`` of UNAVAILABLE ``storage_full``: Redis reached its
``maxmemory`` (policy ``noeviction``) and refuses writes until an operator
or the expiry of finished games frees memory; reads still work."""


MAX_MESSAGE_CHARS = 1000
"""Longest error message (and ErrorInfo metadata value) sent, in characters.
Messages may echo client input; gRPC sends them in a header, and past about
5-8 KB the header limit turns the status into RESOURCE_EXHAUSTED. Longer
text is cut and says how much was left out."""


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` safe to send: at most ``limit`` characters (the rest replaced
    by ``"... (N more characters)"``) and valid UTF-8 (a lone surrogate
    becomes its ``\\udXXX`` escape)."""
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} more characters)"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class ServiceError(Exception):
    """An error raised below the handlers that the interceptor maps to a status.

    Attributes: ``code`` (grpc.StatusCode), ``reason`` (machine code), ``message``,
    ``metadata`` (the ErrorInfo metadata, e.g. ``{"max_seat": 3}``).
    """

    def __init__(
        self, code: grpc.StatusCode, reason: str, message: str, **metadata: object
    ) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.metadata = metadata


def status(code: grpc.StatusCode, reason: str, message: str, **metadata: object) -> grpc.Status:
    """A ``grpc.Status`` carrying an ``ErrorInfo(reason, domain, metadata)`` detail
    (metadata values are written as strings: ``3`` becomes ``"3"``). The
    message and the values are :func:`bounded`, since they may echo input."""
    message = bounded(message)
    info = error_details_pb2.ErrorInfo(
        reason=reason,
        domain=DOMAIN,
        metadata={k: bounded(str(v)) for k, v in metadata.items()},
    )
    detail = any_pb2.Any()
    detail.Pack(info)
    return rpc_status.to_status(
        status_pb2.Status(code=code.value[0], message=message, details=[detail])
    )


async def abort(
    context: grpc.aio.ServicerContext,
    code: grpc.StatusCode,
    reason: str,
    message: str,
    **metadata: object,
) -> NoReturn:
    """End the call with ``code``, ``message`` and an ``ErrorInfo`` detail
    whose reason is ``reason``. Never returns."""
    await context.abort_with_status(status(code, reason, message, **metadata))
    raise AssertionError("unreachable")  # pragma: no cover


async def require_game_id(context: grpc.aio.ServicerContext, game_id: str) -> str:
    """``game_id`` if well formed, else INVALID_ARGUMENT ``bad_game_id``."""
    if not GAME_ID_RE.match(game_id or ""):
        await abort(
            context,
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_game_id",
            GAME_ID_RULE,
            length=len(game_id or ""),
            max_length=GAME_ID_MAX,
        )
    return game_id


def error_info(err: grpc.RpcError) -> error_details_pb2.ErrorInfo | None:
    """The ``ErrorInfo`` detail of a failed call (sync or asyncio), if any."""
    for key, value in err.trailing_metadata() or ():
        if key == rpc_status.GRPC_DETAILS_METADATA_KEY:
            st = status_pb2.Status.FromString(value)
            for detail in st.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    return info
    return None


def error_reason(err: grpc.RpcError) -> str:
    """The machine-readable reason of a failed call (``""`` when there is none)."""
    info = error_info(err)
    return info.reason if info else ""


async def relay(context: grpc.aio.ServicerContext, err: grpc.aio.AioRpcError) -> NoReturn:
    """Pass a downstream service's error on to our caller: the same code, message
    and details; an unreachable service becomes UNAVAILABLE, and an internal
    error's text is not passed on."""
    code = err.code()
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        await abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            "rules_unavailable",
            "the rules service is unavailable; try again",
            retry_after_s=RETRY_AFTER_S,
        )
    if code in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.DATA_LOSS):
        info = error_info(err)
        await abort(
            context,
            code,
            info.reason if info else "internal",
            f"the rules service failed ({code.name})",
        )
    info = error_info(err)
    if info is None:
        await abort(context, code, "", err.details() or "")
    await abort(context, code, info.reason, err.details() or "", **dict(info.metadata))


class ErrorMapping(grpc.aio.ServerInterceptor):
    """Maps exceptions that escape a handler: :class:`ServiceError` to its own
    status, Redis and database connection problems to UNAVAILABLE, Redis out
    of memory to UNAVAILABLE ``storage_full``, anything else to INTERNAL with
    an incident id (logged with the traceback).

    Args:
        message_bytes: method (``/package.Service/Method``) -> largest request
            in bytes; a larger one is refused INVALID_ARGUMENT
            ``message_too_large`` (metadata ``max_bytes``, ``bytes``) before it
            is parsed (see :mod:`services.platform.bounds`).
        default_message_bytes: the bound of the other methods (None = only
            the server's own maximum).
    """

    def __init__(
        self,
        message_bytes: Mapping[str, int] | None = None,
        default_message_bytes: int | None = None,
    ) -> None:
        self.message_bytes = dict(message_bytes or {})
        self.default_message_bytes = default_message_bytes
        self._wrapped = WrappedHandlers()

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        return self._wrapped.get(method, handler, lambda: self._wrap(method, handler))

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        max_bytes = self.message_bytes.get(method, self.default_message_bytes)

        @contextlib.asynccontextmanager
        async def mapped(request, context):
            await _refuse_undecodable(request, context)
            try:
                yield
            except (grpc.aio.AbortError, asyncio.CancelledError):
                raise
            except Exception as exc:  # noqa: BLE001 - mapped, never leaked
                await _map(exc, context, method)

        lenient = (
            None if handler.request_streaming else _lenient(handler.request_deserializer, max_bytes)
        )
        return wrap_handler(handler, mapped, request_deserializer=lenient)


class _Undecodable:
    """Stands for a request whose bytes do not parse (e.g. a string field that
    is not UTF-8), or that are more than its method takes; the handler wrapper
    refuses it as INVALID_ARGUMENT."""

    __slots__ = ("error", "size", "max_bytes")

    def __init__(self, error: str, size: int = 0, max_bytes: int | None = None) -> None:
        self.error, self.size, self.max_bytes = error, size, max_bytes


def _lenient(deserializer, max_bytes: int | None = None):
    """``deserializer`` that returns :class:`_Undecodable` instead of raising
    (grpc would answer UNKNOWN with the parser's exception text), and for
    requests over ``max_bytes`` without parsing them."""
    if deserializer is None:
        return None

    def decode(data: bytes):
        if max_bytes is not None and len(data) > max_bytes:
            return _Undecodable("too large", len(data), max_bytes)
        try:
            return deserializer(data)
        except DecodeError as exc:
            return _Undecodable(str(exc))

    return decode


async def _refuse_undecodable(request, context: grpc.aio.ServicerContext) -> None:
    if not isinstance(request, _Undecodable):
        return
    if request.max_bytes is not None:
        await abort(
            context,
            grpc.StatusCode.INVALID_ARGUMENT,
            "message_too_large",
            f"this method takes requests of at most {request.max_bytes} bytes, got {request.size}",
            max_bytes=request.max_bytes,
            bytes=request.size,
        )
    await abort(
        context,
        grpc.StatusCode.INVALID_ARGUMENT,
        "bad_request",
        f"the request does not parse: {request.error} (string fields must be UTF-8)",
    )


async def _map(exc: Exception, context: grpc.aio.ServicerContext, method: str) -> NoReturn:
    if isinstance(exc, ServiceError):
        await abort(context, exc.code, exc.reason, exc.message, **exc.metadata)
    if isinstance(exc, redis.exceptions.OutOfMemoryError):
        log.warning("storage full", method=method, error=str(exc))
        await abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            "storage_full",
            "game storage is full and refuses writes; try again later",
            retry_after_s=STORAGE_FULL_RETRY_AFTER_S,
        )
    if isinstance(exc, NotReplicated):
        log.warning("write not replicated in time", method=method, error=str(exc))
        await abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            "not_replicated",
            "the change was stored but not yet copied to enough replicas, so it could still be "
            "lost in a failover; retry with the same idempotency key (you get its answer if it "
            "was kept, else it is applied afresh)",
            retry_after_s=RETRY_AFTER_S,
            replicas=exc.replicas,
            wanted_replicas=exc.wanted,
        )
    if is_outage(exc):
        log.warning("storage unavailable", method=method, error=str(exc))
        await abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            "storage_unavailable",
            "game storage is unavailable; try again",
            retry_after_s=RETRY_AFTER_S,
        )
    if database_unavailable(exc):
        log.warning("database unavailable", method=method, error=repr(exc))
        await abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            "database_unavailable",
            "the database is unavailable; try again",
        )
    incident = uuid.uuid4().hex[:12]
    log.exception("internal error", method=method, incident=incident)
    await abort(
        context,
        grpc.StatusCode.INTERNAL,
        "internal",
        f"internal error {incident}",
        incident=incident,
    )
