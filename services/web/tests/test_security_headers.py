"""Every GET route of the gateway, pages and API, read from the app itself (so a new page is
covered without editing this test), answers with the security headers of
services/web/security.py: the Content-Security-Policy with no inline script and
``frame-ancestors 'none'``, ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy``;
signed in and signed out, successes, redirects and refusals alike; and no page carries an
inline script or an inline event handler (Swagger UI's two pages: only the scripts their
policy names by hash)."""

from __future__ import annotations

import re

from services.platform.settings import GatewaySettings
from services.web.app import create_app
from services.web.security import CSP, HASHED_PAGES, inline_script_hashes, policy
from services.web.tests.test_pages import _browser, _signed_up

_INLINE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=", re.I)
"""An inline script (a ``<script>`` without ``src``) or an inline handler (``onclick=``)."""


def get_routes() -> list[str]:
    """The path template of every GET route of the gateway's app (included routers too)."""
    app = create_app(GatewaySettings(internal_secret="x" * 32))
    paths: list[str] = []

    def walk(routes) -> None:
        for route in routes:
            inner = getattr(route, "original_router", None)
            if inner is not None:
                walk(inner.routes)
            elif "GET" in (getattr(route, "methods", None) or ()):
                paths.append(route.path)

    walk(app.routes)
    return sorted(set(paths))


def _filled(path: str, table_id: str) -> str:
    path = path.replace("{table_id}", table_id).replace("{title}", "railbarons")
    return re.sub(r"\{[^}]+\}", "no-such-id", path)


def test_every_get_route_sends_the_security_headers(gateway_env):
    paths = get_routes()
    assert {"/", "/signin", "/tables/{table_id}", "/account", "/ratings/{title}"} <= set(paths)
    assert "'unsafe-inline'" not in CSP and "frame-ancestors 'none'" in CSP

    async def body(env):
        async with _signed_up(env, "hana") as (person, csrf), _browser(env) as (anon, _):
            r = await person.post(
                "/tables",
                data={"csrf": csrf, "title": "railbarons", "num_players": "3", "bots": "0"},
            )
            assert r.status_code == 303, r.text
            table_id = r.headers["location"].rsplit("/", 1)[1]
            seen = 0
            for client in (person, anon):
                for template in paths:
                    path = _filled(template, table_id)
                    async with client.stream("GET", path) as answer:
                        h = answer.headers
                        kind = h.get("content-type", "")
                        if template in HASHED_PAGES:  # exactly its own inline scripts
                            page = await answer.aread()
                            assert inline_script_hashes(page), path
                            want = policy(inline_script_hashes(page))
                        else:
                            want = CSP
                        assert h.get("content-security-policy") == want, path
                        assert "'unsafe-inline'" not in want, path
                        assert h.get("x-content-type-options") == "nosniff", path
                        assert h.get("referrer-policy") == "same-origin", path
                        assert h.get("x-frame-options") == "DENY", path
                        if kind.startswith("text/html") and template not in HASHED_PAGES:
                            page = (await answer.aread()).decode()
                            assert not _INLINE.search(page), (path, _INLINE.search(page))
                    seen += 1
            assert seen == 2 * len(paths)

    gateway_env(body)
