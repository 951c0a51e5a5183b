"""Failed sign-ins over HTTP count per client, not per gateway (issue 33, item 1): the
accounts service used to see only the gateway's address, so 30 failures from one client
locked every user out, and 5 wrong passwords from anyone locked the owner out."""

from __future__ import annotations

from services.accounts.tests.conftest import PASSWORD

ATTACKER = {"X-Forwarded-For": "203.0.113.7"}
OWNER = {"X-Forwarded-For": "198.51.100.9"}


def sign_in(env, name: str, headers: dict, password: str = PASSWORD):
    return env.http.post(
        "/api/tokens", json={"username": name, "password": password}, headers=headers
    )


def test_someone_elses_wrong_passwords_do_not_lock_the_owner_out(gateway_env):
    async def body(env):
        await env.person("ada")
        await env.person("bea")
        for _ in range(5):
            r = await sign_in(env, "ada", ATTACKER, password="wrong-password")
            assert (r.status_code, r.json()["code"]) == (401, "bad_credentials"), r.text
        # the attacker's address now waits for this username (a backoff, with its limit)...
        r = await sign_in(env, "ada", ATTACKER)
        assert (r.status_code, r.json()["code"]) == (429, "too_many_failures"), r.text
        assert int(r.headers["Retry-After"]) >= 1 and r.json()["details"]["limit"]
        # ...but the owner, from her own address, signs in
        r = await sign_in(env, "ada", OWNER)
        assert r.status_code == 201, r.text
        # one address trying many usernames spends its own budget, nobody else's
        for i in range(6):
            r = await sign_in(env, f"ghost{i}", ATTACKER)
            assert r.status_code in (401, 429), r.text
        r = await sign_in(env, "bea", ATTACKER)
        assert (r.status_code, r.json()["code"]) == (429, "too_many_failures"), r.text
        r = await sign_in(env, "bea", OWNER)
        assert r.status_code == 201, r.text

    gateway_env(
        body,
        trusted_proxies=["127.0.0.1/32"],
        accounts_options={"per_pair": "5/5minute;10/hour", "per_peer": "10/5minute"},
    )


def test_a_forwarded_address_from_an_untrusted_client_is_ignored(gateway_env):
    """No trusted proxy: X-Forwarded-For is the client's own claim; both "addresses" are
    the same TCP peer and share its counts."""

    async def body(env):
        await env.person("ada")
        for _ in range(3):
            r = await sign_in(env, "ada", ATTACKER, password="wrong-password")
            assert r.status_code == 401, r.text
        r = await sign_in(env, "ada", OWNER)
        assert (r.status_code, r.json()["code"]) == (429, "too_many_failures"), r.text

    gateway_env(body, accounts_options={"per_pair": "3/5minute"})


def test_the_web_sign_in_counts_per_client_too(gateway_env):
    async def body(env):
        from services.web.tests.test_pages import _csrf as csrf_of

        await env.person("ada")
        page = await env.http.get("/signin", headers=ATTACKER)
        csrf = csrf_of(page.text)
        form = {"csrf": csrf, "username": "ada", "password": "wrong-password"}
        for _ in range(3):
            r = await env.http.post("/signin", data=form, headers=ATTACKER)
            assert r.status_code == 401
        r = await env.http.post("/signin", data={**form, "password": PASSWORD}, headers=ATTACKER)
        assert r.status_code == 401 and "too_many_failures" in r.text
        r = await env.http.post("/signin", data={**form, "password": PASSWORD}, headers=OWNER)
        assert r.status_code == 303, r.text

    gateway_env(body, trusted_proxies=["127.0.0.0/8"], accounts_options={"per_pair": "3/5minute"})
