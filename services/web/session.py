"""The web pages' sign-in session and their protection against cross-site writes.

* The session is an API token (``Accounts.CreateToken``, the same tokens as the API's) kept
  in the cookie :data:`SESSION_COOKIE` (HttpOnly, SameSite=Lax, path ``/``); signing out
  forgets it. Every page call passes it on as ``Authorization: Bearer <token>``, so the
  lobby and the accounts service judge it as they judge any API call.
* Cross-site writes: a double-submit token. :data:`CSRF_COOKIE` (HttpOnly, SameSite=Strict)
  holds a random value; every page carries it in its forms (field :data:`CSRF_FIELD`) and in
  htmx's ``X-CSRF-Token`` header. A page write whose value is missing or differs is refused
  with 403 ``csrf_failed`` before anything runs (:func:`check_csrf`).
"""

from __future__ import annotations

import secrets

import grpc
from fastapi import Request
from fastapi.responses import Response

from services.web.errors import ApiError

SESSION_COOKIE = "rh_session"
CSRF_COOKIE = "rh_csrf"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
SESSION_SCOPES = ("play", "tables:write", "bots:write", "tournament:write")
"""The scopes of a web session's token (a person's: ``services/accounts/rules.py``)."""
SESSION_LIFETIME_S = 7 * 24 * 3600
"""A web session's token expires after a week (seconds)."""


def session_auth(request: Request) -> str:
    """The ``Authorization`` value of the signed-in session ("" = signed out)."""
    token = request.cookies.get(SESSION_COOKIE, "")
    return f"Bearer {token}" if token else ""


def csrf_token(request: Request) -> str:
    """The request's double-submit value (a new one when the browser has none yet; the
    response must then set it: :func:`set_csrf_cookie`)."""
    token = request.cookies.get(CSRF_COOKIE, "")
    if not token:
        token = request.state.__dict__.setdefault("new_csrf", secrets.token_urlsafe(24))
    return token


def set_csrf_cookie(request: Request, response: Response) -> None:
    """Sets :data:`CSRF_COOKIE` on ``response`` if :func:`csrf_token` made a new value."""
    new = request.state.__dict__.get("new_csrf")
    if new:
        response.set_cookie(CSRF_COOKIE, new, httponly=True, samesite="strict", path="/")


def set_session(response: Response, token: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=SESSION_LIFETIME_S,
        httponly=True,
        samesite="lax",
        path="/",
    )


def clear_session(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")


def check_csrf(request: Request, form: dict[str, str]) -> None:
    """Refuses a page write without the double-submit value.

    Raises:
        ApiError: 403 ``csrf_failed`` (no cookie, or the form field / header differs).
    """
    cookie = request.cookies.get(CSRF_COOKIE, "")
    sent = request.headers.get(CSRF_HEADER) or form.get(CSRF_FIELD, "")
    if not cookie or not sent or not secrets.compare_digest(cookie.encode(), sent.encode()):
        raise ApiError(
            grpc.StatusCode.PERMISSION_DENIED,
            "csrf_failed",
            "this form is stale or came from another site: reload the page and try again",
            status=403,
        )
