"""OAuth 2 with PKCE through the gateway (services/web/oauth.py) and the security headers of
every page (services/web/security.py)."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from urllib.parse import parse_qs, urlsplit

from services.accounts.tests.conftest import PASSWORD
from services.web.security import CSP

REDIRECT = "http://127.0.0.1:9/callback"


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def test_every_page_sends_the_security_headers(gateway_env):
    async def body(env):
        for path in (
            "/",
            "/signin",
            "/signup",
            "/tournaments",
            "/api/tables",
            "/no-such-page",
            "/static/site.css",
        ):
            r = await env.http.get(path)
            assert r.headers["content-security-policy"] == CSP, path
            assert "frame-ancestors 'none'" in CSP and "'unsafe-inline'" not in CSP
            assert r.headers["x-content-type-options"] == "nosniff", path
            assert r.headers["referrer-policy"] == "same-origin", path
        docs = await env.http.get("/api/docs")
        assert "'sha256-" in docs.headers["content-security-policy"]
        page = (await env.http.get("/signin")).text
        assert "<script>" not in page and "onclick" not in page

    gateway_env(body)


def test_an_app_gets_a_scoped_token_with_pkce_and_revokes_it(gateway_env):
    async def body(env):
        owner = await env.person("appmaker")
        r = await env.http.post(
            "/api/oauth/clients",
            headers=owner,
            json={"name": "Tiny app", "redirect_uris": [REDIRECT]},
        )
        assert r.status_code == 201, r.text
        client_id = r.json()["client_id"]
        bad = await env.http.post(
            "/api/oauth/clients",
            headers=owner,
            json={"name": "x", "redirect_uris": ["http://example.com/cb"]},
        )
        assert bad.status_code == 400 and bad.json()["code"] == "bad_redirect_uri"
        await env.person("player")  # the account that grants the app access
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "scope": "read",
            "state": "s1",
            "code_challenge": challenge.decode().rstrip("="),
            "code_challenge_method": "S256",
        }
        http = env.http
        page = await http.get("/oauth/authorize", params=query)
        assert page.status_code == 200, page.text
        assert "Tiny app" in page.text
        url = "/oauth/authorize?" + page.url.query.decode()
        r = await http.post(
            url,
            data={
                "csrf": _csrf(page.text),
                "decision": "signin",
                "username": "player",
                "password": PASSWORD,
            },
        )
        assert r.status_code == 303, r.text
        page = await http.get(url)
        assert "act as <b>player</b>" in page.text
        r = await http.post(url, data={"csrf": _csrf(page.text), "decision": "allow"})
        assert r.status_code == 303, r.text
        back = parse_qs(urlsplit(r.headers["location"]).query)
        assert back["state"] == ["s1"]
        code = back["code"][0]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": client_id,
        }
        wrong = await http.post("/oauth/token", data={**form, "code_verifier": "x" * 50})
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
        # the code was used by that attempt: a code works once, whoever sends it
        again = await http.post("/oauth/token", data={**form, "code_verifier": verifier})
        assert again.status_code == 400
        # a fresh consent, the right verifier
        page = await http.get(url)
        r = await http.post(url, data={"csrf": _csrf(page.text), "decision": "allow"})
        code = parse_qs(urlsplit(r.headers["location"]).query)["code"][0]
        token = await http.post(
            "/oauth/token", data={**form, "code": code, "code_verifier": verifier}
        )
        assert token.status_code == 200, token.text
        access = token.json()["access_token"]
        assert access.startswith("rh_") and token.json()["scope"] == "read"
        auth = {"Authorization": f"Bearer {access}"}
        me = await http.get("/api/account", headers=auth)
        assert me.json()["username"] == "player" and me.json()["scopes"] == []
        write = await http.post(
            "/api/tables",
            headers=auth,
            json={"title": "railbarons", "num_players": 3, "options": {}},
        )
        assert write.status_code == 403 and write.json()["code"] == "scope_missing"
        gone = await http.post("/oauth/revoke", data={"token": access, "client_id": client_id})
        assert gone.status_code == 200
        assert (await http.get("/api/account", headers=auth)).status_code == 401
        # denied: the app hears access_denied and gets no code
        page = await http.get(url)
        r = await http.post(url, data={"csrf": _csrf(page.text), "decision": "deny"})
        assert "error=access_denied" in r.headers["location"]
        # no PKCE: refused
        plain = {k: v for k, v in query.items() if not k.startswith("code_challenge")}
        r = await http.get("/oauth/authorize", params=plain, follow_redirects=False)
        assert "error=invalid_request" in r.headers.get("location", "")

    gateway_env(body)
