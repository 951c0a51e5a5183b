"""OAuth 2 refresh tokens, refusals and app registration (services/web/oauth.py): rotation,
a replayed refresh token ending the grant, revocation by the app and by the person, and every
refusal leaving the account's tokens as they were (docs/api.md, "OAuth 2 for apps")."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from urllib.parse import parse_qs, urlsplit

from services.accounts.tests.conftest import PASSWORD

REDIRECT = "http://127.0.0.1:9/callback"


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


class App:
    """A registered app and a person ("player") who signs in on the consent page."""

    def __init__(self, env, client_id: str, person: dict) -> None:
        self.env, self.client_id, self.person = env, client_id, person
        self.verifier = secrets.token_urlsafe(48)

    @classmethod
    async def make(
        cls, env, owner: str = "appmaker", name: str = "Tiny app", person: dict | None = None
    ) -> App:
        maker = await env.person(owner)
        r = await env.http.post(
            "/api/oauth/clients", headers=maker, json={"name": name, "redirect_uris": [REDIRECT]}
        )
        assert r.status_code == 201, r.text
        person = person or await env.person("player")
        app = cls(env, r.json()["client_id"], person)
        app.maker = maker
        return app

    def query(self, scope: str = "read play", **over: str) -> dict[str, str]:
        return {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": REDIRECT,
            "scope": scope,
            "state": "s1",
            "code_challenge": _challenge(self.verifier),
            "code_challenge_method": "S256",
            **over,
        }

    async def code(self, scope: str = "read play") -> str:
        http = self.env.http
        page = await http.get("/oauth/authorize", params=self.query(scope))
        assert page.status_code == 200, page.text
        url = "/oauth/authorize?" + page.url.query.decode()
        if "act as" not in page.text:
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
        r = await http.post(url, data={"csrf": _csrf(page.text), "decision": "allow"})
        assert r.status_code == 303, r.text
        return parse_qs(urlsplit(r.headers["location"]).query)["code"][0]

    async def exchange(self, code: str, **over: str):
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": self.client_id,
            "code_verifier": self.verifier,
            **over,
        }
        return await self.env.http.post("/oauth/token", data=form)

    async def tokens(self) -> dict[str, str]:
        """Token pair of a fresh grant."""
        r = await self.exchange(await self.code())
        assert r.status_code == 200, r.text
        return r.json()

    async def refresh(self, refresh_token: str, **over: str):
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        return await self.env.http.post(
            "/oauth/token", data={**form, "client_id": self.client_id, **over}
        )

    async def works(self, access: str) -> bool:
        r = await self.env.http.get("/api/account", headers={"Authorization": f"Bearer {access}"})
        assert r.status_code in (200, 401), r.text
        return r.status_code == 200

    async def app_tokens(self) -> list[tuple[str, bool]]:
        """The person's tokens the app was given: (token_id, revoked) in order."""
        r = await self.env.http.get("/api/tokens", headers=self.person)
        assert r.status_code == 200, r.text
        return [
            (t["token_id"], t["revoked_at"] is not None)
            for t in r.json()["tokens"]
            if t["label"].startswith(f"oauth {self.client_id}")
        ]


def test_a_refresh_rotates_the_pair_and_a_replay_ends_the_grant(gateway_env):
    async def body(env):
        app = await App.make(env)
        first = await app.tokens()
        assert first["refresh_token"].startswith("rhr_") and first["expires_in"] == 3600
        assert first["scope"] == "read play"
        second = (await app.refresh(first["refresh_token"])).json()
        assert second["refresh_token"] != first["refresh_token"]
        assert second["access_token"] != first["access_token"]
        assert await app.works(second["access_token"]) and await app.works(first["access_token"])
        me = await env.http.get(
            "/api/account", headers={"Authorization": f"Bearer {second['access_token']}"}
        )
        assert me.json()["username"] == "player" and me.json()["scopes"] == ["play"]
        # a narrower scope on refresh is allowed
        third = await app.refresh(second["refresh_token"], scope="read")
        assert third.status_code == 200 and third.json()["scope"] == "read"
        third = third.json()
        # the used second token again: someone kept a copy, so the whole grant ends
        replay = await app.refresh(second["refresh_token"])
        assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
        for token in (first, second, third):
            assert not await app.works(token["access_token"])
        late = await app.refresh(third["refresh_token"])
        assert late.status_code == 400 and late.json()["error"] == "invalid_grant"
        assert all(revoked for _, revoked in await app.app_tokens())
        # another grant of the same app is not touched
        other = await app.tokens()
        assert (await app.refresh(other["refresh_token"])).status_code == 200

    gateway_env(body)


def test_refused_refreshes_change_nothing(gateway_env):
    async def body(env):
        app = await App.make(env)
        pair = await app.tokens()
        before = await app.app_tokens()
        other = await App.make(env, owner="othermaker", name="Other app", person=app.person)
        for refused, error in (
            (await app.refresh(pair["refresh_token"], client_id=other.client_id), "invalid_grant"),
            (await app.refresh(pair["refresh_token"], scope="read tables:write"), "invalid_scope"),
            (await app.refresh("rhr_" + "x" * 43), "invalid_grant"),
            (await app.refresh(pair["refresh_token"], client_id="nosuchclient"), "invalid_client"),
        ):
            assert refused.status_code in (400, 401), refused.text
            assert refused.json()["error"] == error, refused.text
        assert await app.app_tokens() == before
        # the refresh token still works: none of those used it up
        assert (await app.refresh(pair["refresh_token"])).status_code == 200

    gateway_env(body)


def test_refused_codes_give_no_token(gateway_env, monkeypatch):
    async def body(env):
        app = await App.make(env)
        http = env.http
        # a redirect_uri the app did not register: shown here, never sent there, no code
        page = await http.get(
            "/oauth/authorize",
            params=app.query(redirect_uri="http://127.0.0.1:9/elsewhere"),
            follow_redirects=False,
        )
        assert page.status_code == 400 and "location" not in page.headers
        assert "oauth_invalid_request" in page.text and "not supported" in page.text
        # wrong verifier; wrong redirect at the token endpoint; a code used twice
        code = await app.code()
        wrong = await app.exchange(code, code_verifier="y" * 50)
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
        code = await app.code()
        wrong = await app.exchange(code, redirect_uri="http://127.0.0.1:9/elsewhere")
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
        code = await app.code()
        assert (await app.exchange(code)).status_code == 200
        before = await app.app_tokens()
        again = await app.exchange(code)
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
        assert len(before) == 1 and await app.app_tokens() == before
        # a code past its lifetime
        monkeypatch.setattr("services.web.oauth.CODE_LIFETIME_S", -1)
        late = await app.exchange(await app.code())
        assert late.status_code == 400 and late.json()["error"] == "invalid_grant"
        assert await app.app_tokens() == before

    gateway_env(body)


def test_revoking_ends_the_grant_for_the_app_and_for_the_person(gateway_env):
    async def body(env):
        app = await App.make(env)
        http = env.http
        # the app revokes its refresh token: the pair stops working
        pair = await app.tokens()
        r = await http.post(
            "/oauth/revoke",
            data={
                "token": pair["refresh_token"],
                "token_type_hint": "refresh_token",
                "client_id": app.client_id,
            },
        )
        assert r.status_code == 200, r.text
        assert not await app.works(pair["access_token"])
        refused = await app.refresh(pair["refresh_token"])
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
        # the app revokes its access token: its refresh token ends too
        pair = await app.tokens()
        r = await http.post(
            "/oauth/revoke", data={"token": pair["access_token"], "client_id": app.client_id}
        )
        assert r.status_code == 200 and not await app.works(pair["access_token"])
        assert (await app.refresh(pair["refresh_token"])).status_code == 400
        # the person revokes the app's token over the API: no refresh either
        pair = await app.tokens()
        token_id = (await app.app_tokens())[-1][0]
        r = await http.delete(f"/api/tokens/{token_id}", headers=app.person)
        assert r.status_code == 200, r.text
        assert not await app.works(pair["access_token"])
        assert (await app.refresh(pair["refresh_token"])).status_code == 400
        # another app cannot revoke this app's tokens
        pair = await app.tokens()
        other = await App.make(env, owner="othermaker", name="Other", person=app.person)
        r = await http.post(
            "/oauth/revoke", data={"token": pair["refresh_token"], "client_id": other.client_id}
        )
        assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
        assert await app.works(pair["access_token"])
        assert (await app.refresh(pair["refresh_token"])).status_code == 200

    gateway_env(body)


def test_an_owner_lists_and_deletes_apps_and_their_tokens_stop(gateway_env):
    async def body(env):
        app = await App.make(env)
        http = env.http
        pair = await app.tokens()
        listed = await http.get("/api/oauth/clients", headers=app.maker)
        assert [c["client_id"] for c in listed.json()["clients"]] == [app.client_id]
        # only the owner deletes it
        r = await http.delete(f"/api/oauth/clients/{app.client_id}", headers=app.person)
        assert r.status_code == 404 and r.json()["code"] == "unknown_client"
        assert await app.works(pair["access_token"])
        r = await http.delete(f"/api/oauth/clients/{app.client_id}", headers=app.maker)
        assert r.status_code == 204, r.text
        assert (await http.get("/api/oauth/clients", headers=app.maker)).json()["clients"] == []
        assert not await app.works(pair["access_token"])
        refused = await app.refresh(pair["refresh_token"])
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_client"
        page = await http.get("/oauth/authorize", params=app.query())
        assert page.status_code == 400

    gateway_env(body)


def test_the_apps_page_registers_lists_and_deletes(gateway_env):
    async def body(env):
        await env.person("maker")
        http = env.http
        page = await http.get("/signin")
        r = await http.post(
            "/signin",
            data={"csrf": _csrf(page.text), "username": "maker", "password": PASSWORD},
        )
        assert r.status_code == 303, r.text
        page = await http.get("/account/apps")
        assert page.status_code == 200 and "none yet" in page.text
        bad = await http.post(
            "/account/apps",
            data={"csrf": _csrf(page.text), "name": "X", "redirect_uris": "http://example.com/"},
        )
        assert "bad_redirect_uri" in bad.text and "none yet" in bad.text
        made = await http.post(
            "/account/apps",
            data={
                "csrf": _csrf(page.text),
                "name": "Board <b>helper</b>",
                "redirect_uris": f"{REDIRECT}\nhttps://app.example/cb",
            },
        )
        client_id = re.search(r'id="new-client-id">([0-9a-f]{24})<', made.text).group(1)
        assert "Board &lt;b&gt;helper&lt;/b&gt;" in made.text
        assert "https://app.example/cb" in made.text
        r = await http.post(f"/account/apps/{client_id}/delete", data={"csrf": _csrf(made.text)})
        assert r.status_code == 303
        page = await http.get("/account/apps")
        assert client_id not in page.text and "none yet" in page.text

    gateway_env(body)
