"""Typed exceptions for the Roundhouse HTTP API.

Every refusal of the API is a JSON body ``{"code": "...", "message": "...", "details": {...}}``
with an HTTP status that matches the gRPC status of the same refusal (``docs/api.md``). The
client raises one :class:`ApiError` subclass per HTTP status, carrying the machine-readable
``code`` (the ErrorInfo reason on gRPC: ``not_your_turn``, ``stale_version``, ...), so callers can
branch on the class for the kind of failure and on ``code`` for the rule.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A refusal from the API.

    Attributes: ``status`` (HTTP status, int), ``code`` (reason code, str; ``""`` when the body
    was not the API's error JSON), ``message`` (for humans), ``details`` (dict of the reason's
    numbers and names, e.g. ``current_version``, ``retry_after_s``).
    """

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(f"{status} {code}: {message}" if code else f"{status}: {message}")
        self.status, self.code, self.message = status, code, message
        self.details: dict[str, Any] = dict(details or {})


class InvalidRequest(ApiError):
    """400: the request or the move breaks a rule (``code`` names the rule)."""


class Unauthenticated(ApiError):
    """401: no token, or a wrong, expired or revoked one."""


class PermissionDenied(ApiError):
    """403: the token lacks a scope, or the caller may not act on this table or seat."""


class NotFound(ApiError):
    """404: no such table, account, version or event."""


class Conflict(ApiError):
    """409: someone moved first (``stale_version``; re-read and try again), or the thing exists."""

    @property
    def current_version(self) -> int | None:
        """The game's version now, when the server said (``stale_version``)."""
        value = self.details.get("current_version")
        return int(value) if value is not None else None


class PayloadTooLarge(ApiError):
    """413: the body is over the documented limit."""


class UnsupportedMediaType(ApiError):
    """415: the body is not ``application/json``."""


class RateLimited(ApiError):
    """429: over a quota or a rate limit; wait ``retry_after`` seconds."""

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before trying again (from ``details`` or the Retry-After header)."""
        value = self.details.get("retry_after_s")
        return float(value) if value is not None else None


class ServerError(ApiError):
    """5xx: the platform failed; safe to retry a move with the same idempotency key."""


class Unavailable(ServerError):
    """503: a service is down or overloaded; retry later."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequest,
    401: Unauthenticated,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    412: InvalidRequest,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: InvalidRequest,
    429: RateLimited,
    503: Unavailable,
}


def error_from_response(status: int, body: Any, retry_after: str | None = None) -> ApiError:
    """The exception for an HTTP error response.

    ``body`` is the decoded JSON (or anything else, for a non-API answer such as a proxy's);
    ``retry_after`` the Retry-After header, used when the body carries no ``retry_after_s``.
    """
    code, message, details = "", "", {}
    if isinstance(body, dict):
        code = str(body.get("code") or "")
        message = str(body.get("message") or "")
        raw = body.get("details")
        details = dict(raw) if isinstance(raw, dict) else {}
    elif body is not None:
        message = str(body)[:500]
    if retry_after is not None and "retry_after_s" not in details:
        try:
            details["retry_after_s"] = float(retry_after)
        except ValueError:
            pass
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else ApiError)
    return cls(status, code, message or f"HTTP {status}", details)
