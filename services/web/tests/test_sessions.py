"""Sessions that end (issue 33, item 4): signing out revokes the session's token, the account
page and the API list tokens and revoke any, cookies are Secure over HTTPS, and a CSRF value
is good for its own session only."""

from __future__ import annotations

import contextlib
import re

import httpx

from services.accounts.tests.conftest import PASSWORD


@contextlib.asynccontextmanager
async def _closing(http: httpx.AsyncClient):
    try:
        yield http
    finally:
        await http.aclose()


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


async def _signed_in(env, name: str) -> tuple[httpx.AsyncClient, str]:
    """A browser (cookie jar) signed up and in as ``name``; its page's CSRF value."""
    http = httpx.AsyncClient(base_url=env.base_url, timeout=20)
    page = await http.get("/signup")
    r = await http.post(
        "/signup", data={"csrf": _csrf(page.text), "username": name, "password": PASSWORD}
    )
    assert r.status_code == 303 and "rh_session" in http.cookies, r.text
    page = await http.get("/account")
    return http, _csrf(page.text)


def test_signing_out_revokes_the_sessions_token(gateway_env):
    async def body(env):
        http, csrf = await _signed_in(env, "ada")
        async with _closing(http):
            bearer = {"Authorization": f"Bearer {http.cookies['rh_session']}"}
            assert (await env.http.get("/api/account", headers=bearer)).status_code == 200
            r = await http.post("/signout", data={"csrf": csrf})
            assert r.status_code == 303 and "rh_session" not in http.cookies
            r = await env.http.get("/api/account", headers=bearer)
            assert (r.status_code, r.json()["code"]) == (401, "token_revoked"), r.text

    gateway_env(body)


def test_the_account_page_lists_and_revokes_tokens(gateway_env):
    async def body(env):
        http, csrf = await _signed_in(env, "bea")
        async with _closing(http):
            r = await env.http.post(
                "/api/tokens",
                json={"username": "bea", "password": PASSWORD, "label": "laptop script"},
            )
            script = {"Authorization": f"Bearer {r.json()['token']}"}
            token_id = r.json()["token_id"]
            page = (await http.get("/account")).text
            assert "laptop script" in page and f"/account/tokens/{token_id}/revoke" in page
            assert "(this session)" in page
            r = await http.post(f"/account/tokens/{token_id}/revoke", data={"csrf": csrf})
            assert r.status_code == 303
            r = await env.http.get("/api/account", headers=script)
            assert (r.status_code, r.json()["code"]) == (401, "token_revoked")
            assert "revoked" in (await http.get("/account")).text
            # revoking the session's own token signs the browser out
            me = (await env.http.get("/api/account", headers=_bearer(http))).json()
            r = await http.post(f"/account/tokens/{me['token_id']}/revoke", data={"csrf": csrf})
            assert r.status_code == 303 and r.headers["location"] == "/signin"
            assert "rh_session" not in http.cookies
            # another account's token: refused with the reason, nothing revoked
            http2, csrf2 = await _signed_in(env, "cyd")
            async with _closing(http2):
                other = await env.person("dot")
                dot_id = (await env.http.get("/api/account", headers=other)).json()["token_id"]
                r = await http2.post(f"/account/tokens/{dot_id}/revoke", data={"csrf": csrf2})
                assert "not_owner" in r.text
                assert (await env.http.get("/api/account", headers=other)).status_code == 200

    gateway_env(body)


def _bearer(http: httpx.AsyncClient) -> dict:
    return {"Authorization": f"Bearer {http.cookies['rh_session']}"}


def test_tokens_over_http(gateway_env):
    async def body(env):
        ada = await env.person("ada")
        r = await env.http.post(
            "/api/tokens", json={"username": "ada", "password": PASSWORD, "label": "ci"}
        )
        second = {"Authorization": f"Bearer {r.json()['token']}"}
        listed = await env.http.get("/api/tokens", headers=ada)
        assert listed.status_code == 200, listed.text
        tokens = listed.json()["tokens"]
        assert len(tokens) == 2 and {t["label"] for t in tokens} == {"", "ci"}
        assert all("token" not in t and t["revoked_at"] is None for t in tokens)
        ci = next(t for t in tokens if t["label"] == "ci")
        r = await env.http.delete(f"/api/tokens/{ci['token_id']}", headers=ada)
        assert r.status_code == 200 and r.json()["revoked_at"], r.text
        r = await env.http.get("/api/account", headers=second)
        assert (r.status_code, r.json()["code"]) == (401, "token_revoked")
        # signing out over the API: revoke the token used
        me = (await env.http.get("/api/account", headers=ada)).json()
        bea = await env.person("bea")
        r = await env.http.delete(f"/api/tokens/{me['token_id']}", headers=bea)
        assert (r.status_code, r.json()["code"]) == (403, "not_owner")
        r = await env.http.delete("/api/tokens/nope", headers=ada)
        assert (r.status_code, r.json()["code"]) == (400, "bad_token_id")
        r = await env.http.delete(f"/api/tokens/{'0' * 32}", headers=ada)
        assert (r.status_code, r.json()["code"]) == (404, "unknown_token")
        r = await env.http.delete(f"/api/tokens/{me['token_id']}", headers=ada)
        assert r.status_code == 200
        assert (await env.http.get("/api/tokens", headers=ada)).status_code == 401

    gateway_env(body)


def test_cookies_are_secure_over_https(gateway_env):
    async def body(env):
        async with httpx.AsyncClient(base_url=env.base_url, timeout=20) as http:
            page = await http.get("/signup")
            assert "secure" in page.headers["set-cookie"].lower()  # the CSRF cookie
            pre = page.headers["set-cookie"].split(";")[0]  # not sent back over http://
            r = await http.post(
                "/signup",
                data={"csrf": _csrf(page.text), "username": "eve", "password": PASSWORD},
                headers={"Cookie": pre},
            )
            session = [c for c in r.headers.get_list("set-cookie") if "rh_session" in c]
            assert session and "secure" in session[0].lower(), r.headers

    gateway_env(body, gateway_https=True)


def test_a_csrf_value_is_good_for_its_own_session_only(gateway_env):
    """Double submit alone passed any cookie/field pair that matched: a value (and cookie)
    from the attacker's own session passed in the victim's."""

    async def body(env):
        attacker, attacker_csrf = await _signed_in(env, "mallory")
        victim, victim_csrf = await _signed_in(env, "victim")
        async with _closing(attacker), _closing(victim):
            planted = httpx.AsyncClient(base_url=env.base_url, timeout=20)
            async with planted:
                planted.cookies.set("rh_session", victim.cookies["rh_session"])
                if "rh_csrf" in attacker.cookies:
                    planted.cookies.set("rh_csrf", attacker.cookies["rh_csrf"])
                form = {"csrf": attacker_csrf, "username": "victim-bot", "policy": "greedy"}
                r = await planted.post("/account/bots", data=form)
                assert r.status_code == 403 and "csrf_failed" in r.text
                r = await env.http.get("/api/bots", headers=_bearer(victim))
            # the victim's own value works
            r = await victim.post("/account/bots", data={**form, "csrf": victim_csrf})
            assert r.status_code == 303, r.text
            # and a signed-out page's value is not the signed-in session's
            anon = httpx.AsyncClient(base_url=env.base_url, timeout=20)
            async with anon:
                pre = _csrf((await anon.get("/signin")).text)
                anon.cookies.set("rh_session", victim.cookies["rh_session"])
                r = await anon.post("/signout", data={"csrf": pre})
                assert r.status_code == 403 and "csrf_failed" in r.text

    gateway_env(body)
