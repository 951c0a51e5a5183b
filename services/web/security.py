"""Security headers on every answer of the gateway (pages, API, static files).

:class:`SecurityHeaders` is a pure ASGI middleware that adds, to every HTTP response that
does not set them itself:

* ``Content-Security-Policy`` (:data:`CSP`): scripts, styles, images and connections from the
  site itself only, no inline script and no inline style (the pages' scripts are the static
  files ``/static/htmx.min.js`` and ``/static/live.js``; htmx's own indicator style is off,
  ``base.html``), no plugins, and ``frame-ancestors 'none'``: no other site may frame a page
  (clickjacking). The API's interactive docs (``/api/docs``, Swagger UI served from here, and
  its OAuth 2 redirect page ``/docs/oauth2-redirect``) each start with one inline script: that
  page's policy allows exactly that script by its SHA-256 (:func:`inline_script_hashes`),
  nothing else inline.
* ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY`` (older browsers'
  frame-ancestors), ``Referrer-Policy: same-origin`` (an outside site never learns a table's or
  an OAuth page's address) and ``Cross-Origin-Opener-Policy: same-origin``.

Sources: the CSP Level 3 specification (``script-src``, ``frame-ancestors``, hash sources) and
OWASP's HTTP Headers Cheat Sheet.
"""

from __future__ import annotations

import base64
import hashlib
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP_DIRECTIVES: dict[str, str] = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "connect-src": "'self'",
    "font-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "frame-ancestors": "'none'",
}
"""The Content-Security-Policy of every answer, directive -> sources. No ``form-action``:
the OAuth consent form's answer is a redirect to the app's own ``redirect_uri``, which
browsers check against ``form-action`` too."""


def policy(script_hashes: tuple[str, ...] = ()) -> str:
    """The CSP header value; ``script_hashes`` (``sha256-...``) are inline scripts allowed."""
    directives = dict(CSP_DIRECTIVES)
    if script_hashes:
        directives["script-src"] += "".join(f" '{h}'" for h in script_hashes)
    return "; ".join(f"{name} {value}" for name, value in directives.items())


CSP = policy()

HEADERS: dict[str, str] = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
}
"""Header (lower case) -> value, sent on every answer."""

HASHED_PAGES = ("/api/docs", "/docs/oauth2-redirect")
"""Pages of a library (Swagger UI and its OAuth 2 redirect page, FastAPI's default address)
whose inline scripts are allowed by hash."""

_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S | re.I)


def inline_script_hashes(html: bytes) -> tuple[str, ...]:
    """``sha256-<base64>`` of each inline ``<script>`` (one without ``src``) of ``html``."""
    return tuple(
        "sha256-" + base64.b64encode(hashlib.sha256(m.group(1)).digest()).decode()
        for m in _SCRIPT.finditer(html)
    )


class SecurityHeaders:
    """Adds :data:`HEADERS` to every HTTP response (a header the handler set is kept)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._raw = [(k.encode(), v.encode()) for k, v in HEADERS.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] in HASHED_PAGES:
            await self._hashed(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = self._merged(message.get("headers", []), self._raw)
            await send(message)

        await self.app(scope, receive, send_with_headers)

    @staticmethod
    def _merged(
        headers: list[tuple[bytes, bytes]], extra: list[tuple[bytes, bytes]]
    ) -> list[tuple[bytes, bytes]]:
        present = {k.lower() for k, _ in headers}
        return list(headers) + [(k, v) for k, v in extra if k not in present]

    async def _hashed(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A small library page, read whole: its policy names its inline scripts' hashes."""
        start: Message = {}
        parts: list[bytes] = []

        async def collect(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                parts.append(message.get("body", b""))

        await self.app(scope, receive, collect)
        body = b"".join(parts)
        raw = [
            (
                k.encode(),
                (
                    policy(inline_script_hashes(body)) if k == "content-security-policy" else v
                ).encode(),
            )
            for k, v in HEADERS.items()
        ]
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({**start, "headers": self._merged(headers, raw)})
        await send({"type": "http.response.body", "body": body, "more_body": False})
