"""Errors of the HTTP API: ``{"code", "message", "details"}``.

``code`` is the reason code of the gRPC ``ErrorInfo`` (``not_your_turn``,
``stale_version``, ...), ``details`` its metadata (strings) plus
``grpc_status``, the gRPC status name. The HTTP status follows the gRPC
status by one table, :data:`HTTP_STATUS` (the mapping of ``google.rpc.Code``
to HTTP). A few errors exist only in HTTP (``bad_json``, ``bad_content_type``,
``body_too_large``, ``no_route``, ``method_not_allowed``, ``out_of_range``): they
have their own status and a ``grpc_status`` of the nearest gRPC code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import grpc
from pydantic import BaseModel, Field

from services.platform.grpc_errors import error_info

HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
}
"""gRPC status -> HTTP status, for every error of the API."""


class ErrorBody(BaseModel):
    """The body of every error answer."""

    code: str = Field(description="machine-readable reason, as in gRPC's ErrorInfo")
    message: str = Field(description="for people; never parse it")
    details: dict[str, str] = Field(
        description="the numbers the error is about (strings, decimal), and grpc_status"
    )


class ApiError(Exception):
    """An error answer. ``status`` is the HTTP status (from :data:`HTTP_STATUS`
    unless the error is HTTP-only)."""

    def __init__(
        self,
        grpc_status: grpc.StatusCode,
        code: str,
        message: str,
        status: int | None = None,
        headers: dict[str, str] | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message)
        self.status = status or HTTP_STATUS[grpc_status]
        self.code, self.message = code, message
        self.details = {"grpc_status": grpc_status.name}
        self.headers = headers or {}
        self.add_details(details)

    def add_details(self, details: dict[str, Any]) -> None:
        """More ``details`` (values as text; ``retry_after_s``, seconds with fractions, also
        sets ``Retry-After``, whole seconds rounded up as HTTP has them). Any name is taken,
        ``status`` and ``headers`` too (ErrorInfo metadata of ``not_open`` names the table's
        ``status``)."""
        self.details.update({k: str(v) for k, v in details.items() if k != "grpc_status"})
        if "retry_after_s" in self.details and "Retry-After" not in self.headers:
            wait = math.ceil(float(self.details["retry_after_s"]))
            self.headers["Retry-After"] = str(max(1, wait))

    @classmethod
    def from_grpc(cls, err: grpc.aio.AioRpcError) -> ApiError:
        """The same error as the lobby's or the accounts' gRPC answer."""
        info = error_info(err)
        code = err.code()
        if info is None:  # no ErrorInfo: a transport failure, not one of our servers' answers
            reason = "backend_unavailable" if code == grpc.StatusCode.UNAVAILABLE else "internal"
            return cls(code, reason, err.details() or code.name.lower())
        error = cls(code, info.reason, err.details() or "")
        error.add_details(dict(info.metadata))  # not as keywords: "status" is one of them
        return error

    def body(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


BOUND_KINDS = {
    "greater_than_equal": "min",
    "less_than_equal": "max",
    "greater_than": "above",
    "less_than": "below",
}
"""pydantic's errors of a bounded number -> the detail naming the bound."""


def validation_error(errors: Sequence[Any]) -> ApiError:
    """The first problem of a request (or a model built from a form) that does not validate,
    with its reason: ``bad_json`` (the body does not parse), ``unknown_field``,
    ``missing_field``, ``out_of_range`` (a number past its bound: ``min`` or ``max``; an
    integer must fit its protobuf field), ``bad_unicode`` (a lone surrogate) or ``bad_field``
    (a wrong type or value). ``field`` names where, never echoing the value."""
    problem: dict[str, Any] = dict(errors[0]) if errors else {}
    kind = problem.get("type", "")
    where = [str(p) for p in problem.get("loc", ()) if p != "body"]
    field = ".".join(where) or "body"
    message = str(problem.get("msg", "invalid request"))
    context = problem.get("ctx") or {}
    if kind == "json_invalid":
        return ApiError(
            grpc.StatusCode.INVALID_ARGUMENT, "bad_json", f"the body is not valid JSON: {message}"
        )
    if kind == "bad_unicode":
        return ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_unicode",
            message + "; send UTF-8 text",
            field=".".join([*where, str(context.get("field", ""))]).strip(".") or "body",
        )
    if kind in BOUND_KINDS:
        (bound,) = context.values() if len(context) == 1 else (None,)
        return ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "out_of_range",
            f"{field}: {message}",
            field=field,
            **({BOUND_KINDS[kind]: bound} if bound is not None else {}),
        )
    reason = {"extra_forbidden": "unknown_field", "missing": "missing_field"}.get(kind, "bad_field")
    if field == "body" and kind in ("model_attributes_type", "dict_type"):
        reason, message = "bad_json", "the body must be a JSON object"
    return ApiError(
        grpc.StatusCode.INVALID_ARGUMENT, reason, f"{field}: {message}", field=field, problem=kind
    )


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in (
        (400, "bad input (INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE)"),
        (401, "no token, or a wrong, expired or revoked one"),
        (403, "a missing scope; another account's seat or table"),
        (404, "unknown table or account"),
        (409, "a stale expected_version (ABORTED), a taken name (ALREADY_EXISTS)"),
        (413, "body larger than the gateway reads"),
        (415, "a body that is not application/json"),
        (
            429,
            "a rate or quota spent: move_rate (moves per account; a refused move counts too), "
            "table_rate, too_many_tables, watch_rate, too_many_streams, too_many_failures "
            "(sign-ins); wait details.retry_after_s (seconds, with fractions) or Retry-After "
            "(whole seconds)",
        ),
        (503, "a service behind the gateway is unavailable"),
    )
}
"""The error answers documented on every operation (OpenAPI)."""
