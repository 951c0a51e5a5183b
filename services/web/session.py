"""The web pages' sign-in session and their protection against cross-site writes.

* The session is an API token (``Accounts.CreateToken``, the same tokens as the API's) kept
  in the cookie :data:`SESSION_COOKIE` (HttpOnly, SameSite=Lax, path ``/``; ``Secure`` when
  the setting ``gateway_https`` says the site is served over HTTPS). Every page call passes
  it on as ``Authorization: Bearer <token>``, so the lobby and the accounts service judge it
  as they judge any API call. Signing out revokes the token (``Accounts.RevokeToken``) and
  forgets the cookie; the account page lists every token and revokes any.
* Cross-site writes: every page carries a CSRF value in its forms (field :data:`CSRF_FIELD`)
  and in htmx's ``X-CSRF-Token`` header, and a page write whose value is missing or wrong is
  refused with 403 ``csrf_failed`` before anything runs (:func:`check_csrf`). The value is an
  HMAC (keyed with a secret of the gateway's, :func:`csrf_key`) of the session: of the
  session token's fingerprint when signed in, else of a random pre-session value in the
  cookie :data:`CSRF_COOKIE` (HttpOnly, SameSite=Strict). So a value is good for one session
  only: a cookie planted in the browser, or a value taken from another session, does not
  pass.
"""

from __future__ import annotations

import hashlib
import hmac
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


def csrf_key(internal_secret: str) -> bytes:
    """The key of the CSRF values: derived from the internal secret (every gateway replica
    shares it), else random for this process (one gateway: pages from before a restart must
    be reloaded)."""
    if not internal_secret:
        return secrets.token_bytes(32)
    return hmac.new(internal_secret.encode(), b"roundhouse web csrf v1", "sha256").digest()


def session_auth(request: Request) -> str:
    """The ``Authorization`` value of the signed-in session ("" = signed out)."""
    token = request.cookies.get(SESSION_COOKIE, "")
    return f"Bearer {token}" if token else ""


def _binding(request: Request, create: bool) -> str:
    """What the request's CSRF value is bound to ("" = nothing yet and ``create`` is false)."""
    session = request.cookies.get(SESSION_COOKIE, "")
    if session:
        return "session:" + hashlib.sha256(session.encode()).hexdigest()
    pre = request.cookies.get(CSRF_COOKIE, "")
    if not pre and create:
        pre = request.state.__dict__.setdefault("new_csrf", secrets.token_urlsafe(24))
    return "pre-session:" + pre if pre else ""


def _value(request: Request, binding: str) -> str:
    key: bytes = request.app.state.csrf_key
    return hmac.new(key, binding.encode(), "sha256").hexdigest()


def csrf_token(request: Request) -> str:
    """The request's CSRF value (signed out without a pre-session cookie: a new one, which the
    response must then set: :func:`set_csrf_cookie`)."""
    return _value(request, _binding(request, create=True))


def _secure(request: Request) -> bool:
    return bool(getattr(request.app.state, "https", False))


def set_csrf_cookie(request: Request, response: Response) -> None:
    """Sets :data:`CSRF_COOKIE` on ``response`` if :func:`csrf_token` made a new value."""
    new = request.state.__dict__.get("new_csrf")
    if new:
        response.set_cookie(
            CSRF_COOKIE,
            new,
            httponly=True,
            samesite="strict",
            path="/",
            secure=_secure(request),
        )


def set_session(request: Request, response: Response, token: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=SESSION_LIFETIME_S,
        httponly=True,
        samesite="lax",
        path="/",
        secure=_secure(request),
    )


def clear_session(request: Request, response: Response) -> None:
    response.delete_cookie(
        SESSION_COOKIE, path="/", httponly=True, samesite="lax", secure=_secure(request)
    )


def check_csrf(request: Request, form: dict[str, str]) -> None:
    """Refuses a page write without the session's CSRF value.

    Raises:
        ApiError: 403 ``csrf_failed`` (no session or pre-session cookie, or the form field /
            header is not this session's value).
    """
    binding = _binding(request, create=False)
    sent = request.headers.get(CSRF_HEADER) or form.get(CSRF_FIELD, "")
    if (
        not binding
        or not sent
        or not secrets.compare_digest(
            _value(request, binding).encode(), sent.encode("utf-8", "replace")
        )
    ):
        raise ApiError(
            grpc.StatusCode.PERMISSION_DENIED,
            "csrf_failed",
            "this form is stale or came from another site: reload the page and try again",
            status=403,
        )
