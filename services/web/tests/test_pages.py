"""The web pages over HTTP (no browser): sign-up and sign-in through the forms, the
double-submit check on every write, escaping of user strings, a played move, a refused move
(the server's reason shown, nothing changed) and a stale page (refreshed, not failed).

The real-browser tests are in tests/integration/test_web_browser.py."""

from __future__ import annotations

import contextlib
import json
import re

import httpx

from roundhouse.v1 import lobby_pb2
from services.accounts.tests.conftest import PASSWORD

HOSTILE_NAME = "<script>"  # not a legal username: the refusal must not echo it raw
HOSTILE_OPTION = '"><img src=x onerror=alert(1)>'


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


@contextlib.asynccontextmanager
async def _browser(env):
    """A fresh cookie jar with the double-submit cookie (as a browser after one GET)."""
    async with httpx.AsyncClient(base_url=env.base_url, timeout=20) as http:
        page = await http.get("/signin")
        assert page.status_code == 200
        yield http, _csrf(page.text)


@contextlib.asynccontextmanager
async def _signed_up(env, name: str):
    async with _browser(env) as (http, csrf):
        r = await http.post("/signup", data={"csrf": csrf, "username": name, "password": PASSWORD})
        assert r.status_code == 303, r.text
        assert "rh_session" in http.cookies
        # the CSRF value is bound to the session: the signed-in pages carry a new one
        yield http, _csrf((await http.get("/account")).text)


def test_sign_up_sign_in_and_errors_that_reveal_nothing(gateway_env):
    async def body(env):
        async with _signed_up(env, "alice") as (http, csrf):
            lobby = await http.get("/")
            assert 'id="me">alice<' in lobby.text
            r = await http.get("/account")
            assert "web session" in r.text
        async with _browser(env) as (anon, csrf):
            wrong = await anon.post(
                "/signin", data={"csrf": csrf, "username": "alice", "password": "not it at all"}
            )
            nobody = await anon.post(
                "/signin", data={"csrf": csrf, "username": "nobody-here", "password": "x" * 9}
            )
            assert wrong.status_code == nobody.status_code == 401
            for r in (wrong, nobody):
                assert "wrong username or password" in r.text
                assert "rh_session" not in r.headers.get("set-cookie", "")
            ok = await anon.post(
                "/signin", data={"csrf": csrf, "username": "alice", "password": PASSWORD}
            )
            assert ok.status_code == 303 and "rh_session" in anon.cookies

    gateway_env(body)


def test_every_page_write_needs_the_double_submit_value(gateway_env):
    async def body(env):
        async with _signed_up(env, "bob") as (http, csrf):
            before = await env.lobby.lobby.ListTables(lobby_pb2.ListTablesRequest())
            form = {"title": "railbarons", "num_players": "3", "bots": "0", "play": "on"}
            for sent in ({}, {"csrf": "forged"}):
                r = await http.post("/tables", data={**form, **sent})
                assert r.status_code == 403 and "csrf_failed" in r.text
            # a cross-site form carries the browser's cookies but cannot know the value
            r = await http.post("/signout", data={})
            assert r.status_code == 403
            after = await env.lobby.lobby.ListTables(lobby_pb2.ListTablesRequest())
            assert len(after.tables) == len(before.tables)
            r = await http.post("/tables", data={**form, "csrf": csrf})
            assert r.status_code == 303

    gateway_env(body)


def test_user_strings_are_escaped(gateway_env):
    async def body(env):
        async with _signed_up(env, "carol") as (http, csrf):
            r = await http.post(
                "/signup", data={"csrf": csrf, "username": HOSTILE_NAME, "password": PASSWORD}
            )
            assert r.status_code == 400 and "bad_username" in r.text
            assert "<script>" not in r.text.split("</head>")[1].replace("<script src", "")
            assert "&lt;script&gt;" in r.text
            options = {"note": HOSTILE_OPTION}
            r = await http.post(
                "/tables",
                data={
                    "csrf": csrf,
                    "title": "railbarons",
                    "num_players": "3",
                    "bots": "0",
                    "options": json.dumps(options),
                },
            )
            # refused or not, the value comes back only escaped (in the form's value attribute)
            assert HOSTILE_OPTION not in r.text
            assert "<img" not in r.text
            assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in r.text

    gateway_env(body)


async def _started(env, http, csrf) -> str:
    """A 3-seat Chicago Express table: the page's person in seat 0, two more people
    joined over the API; started. Its id."""
    r = await http.post(
        "/tables",
        data={"csrf": csrf, "title": "railbarons", "num_players": "3", "bots": "0", "play": "on"},
    )
    assert r.status_code == 303, r.text
    table_id = r.headers["location"].rsplit("/", 1)[1]
    async with _signed_up(env, "p1") as (other, other_csrf):  # joins on the table page
        seats = await other.get(f"/tables/{table_id}")
        assert f'action="/tables/{table_id}/seats/1/join"' in seats.text
        j = await other.post(f"/tables/{table_id}/seats/1/join", data={"csrf": other_csrf})
        assert j.status_code == 303, j.text
    auth = await env.person("p2")  # and one over the API
    j = await env.http.post(f"/api/tables/{table_id}/seats/2/join", headers=auth)
    assert j.status_code == 200, j.text
    r = await http.post(f"/tables/{table_id}/start", data={"csrf": csrf})
    assert r.status_code == 303, r.text
    return table_id


def _forms(html: str) -> list[dict[str, str]]:
    forms = []
    for block in re.findall(r'<form class="move".*?</form>', html, re.S):
        fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', block))
        fields["action"] = fields["action"].replace("&#34;", '"')
        forms.append(fields)
    return forms


def test_a_move_a_refused_move_and_a_stale_page(gateway_env):
    async def body(env):
        async with _signed_up(env, "dora") as (http, csrf):
            table_id = await _started(env, http, csrf)
            page = await http.get(f"/tables/{table_id}")
            assert page.status_code == 200
            assert "<svg" in page.text and 'id="seat-2"' in page.text
            forms = _forms(page.text)
            assert forms, "seat 0 (the page's person) makes Chicago Express's first bid"
            version = int(forms[0]["expected_version"])
            bad = {**forms[0], "action": json.dumps({"type": "no-such-move"})}
            r = await http.post(f"/tables/{table_id}/move", data=bad)
            assert r.status_code == 200
            assert 'id="move-error"' in r.text
            assert f'data-version="{version}"' in r.text  # nothing changed
            stale = {**forms[0], "expected_version": str(version - 1 if version else 0)}
            if version:
                r = await http.post(f"/tables/{table_id}/move", data=stale)
                assert "Someone moved first" in r.text
            r = await http.post(f"/tables/{table_id}/move", data=forms[0])
            assert r.status_code == 200, r.text
            assert f'data-version="{version + 1}"' in r.text
            assert 'id="move-error"' not in r.text
            # a spectator (signed out) sees the same table, no move forms
            async with _browser(env) as (anon, _):
                seen = await anon.get(f"/tables/{table_id}")
                assert f'data-version="{version + 1}"' in seen.text
                assert 'class="move"' not in seen.text

    gateway_env(body)


def test_russian_railroads_says_what_is_provisional(gateway_env):
    """Issue 27: while any Russian Railroads component is provisional, the lobby's title
    list and the table page say so in one sentence built from the data file's tags."""
    import html as html_lib

    from services.transsib.engine.provenance import provisional_sentence

    sentence = provisional_sentence()
    assert sentence.startswith("Provisional in this version: ")

    async def body(env):
        async with _signed_up(env, "erin") as (http, csrf):
            lobby = await http.get("/")
            assert sentence in html_lib.unescape(lobby.text)
            r = await http.post(
                "/tables",
                data={
                    "csrf": csrf,
                    "title": "transsib",
                    "num_players": "2",
                    "bots": "0",
                    "play": "on",
                },
            )
            assert r.status_code == 303, r.text
            table_id = r.headers["location"].rsplit("/", 1)[1]
            page = await http.get(f"/tables/{table_id}")
            assert 'id="title-note"' in page.text
            assert sentence in html_lib.unescape(page.text)
            other = await http.post(
                "/tables",
                data={"csrf": csrf, "title": "railbarons", "num_players": "3", "bots": "0"},
            )
            other_id = other.headers["location"].rsplit("/", 1)[1]
            assert 'id="title-note"' not in (await http.get(f"/tables/{other_id}")).text

    gateway_env(body, titles=("railbarons", "transsib"))
