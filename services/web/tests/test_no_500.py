"""No input makes the gateway answer 500 (issue 33, item 3): integers past what the protobuf
fields hold, lone surrogates, oversized chunked bodies. Each is a 4xx with its reason code and
changes nothing."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from services.tournaments.service.tests.harness import running_tournaments
from services.web.tests.harness import running_gateway
from services.web.tests.test_api import setup_table
from services.web.tests.test_bad_input import state


@pytest.fixture
def full_gateway(sqlite_database_url, redis_url, key_prefix):
    """``run(body)``: the gateway with the lobby, the accounts and the tournament service."""

    def run(body, **options):
        async def main():
            async with (
                running_tournaments(sqlite_database_url) as tour,
                running_gateway(
                    sqlite_database_url,
                    redis_url,
                    key_prefix,
                    tournaments_address=tour.address,
                    **options,
                ) as env,
            ):
                return await body(env)

        return asyncio.run(main())

    return run


PAST_INT32 = [2**31, -(2**31) - 1, 2**63, 10**20]
PAST_INT64 = [2**63, -(2**63) - 1, 10**20]
PAST_UINT64 = [2**64, 2**70, -1]


def test_integers_past_the_protobuf_fields_are_out_of_range(full_gateway):
    async def body(env):
        tid, players = await setup_table(env)
        ada = players[0]
        before = await state(env)
        move = {"action": {"type": "pass"}, "expected_version": 0}
        cup = {"name": "Cup", "title": "railbarons"}
        cases = []
        for n in PAST_INT32:
            cases += [
                ("post", f"/api/tables/{tid}/moves", {"json": {**move, "expected_version": n}}),
                ("post", f"/api/tables/{tid}/moves", {"json": {**move, "seat": n}}),
                ("post", f"/api/tables/{tid}/seats/{n}/join", {}),
                ("post", f"/api/tables/{tid}/seats/{n}/leave", {}),
                ("post", f"/api/tables/{tid}/seats/{n}/bot", {"json": {"policy": "greedy"}}),
                ("post", "/api/tables", {"json": {"title": "railbarons", "num_players": n}}),
                ("get", f"/api/tables?page_size={n}", {}),
                ("get", f"/api/tournaments?page_size={n}", {}),
                ("get", f"/api/ratings/railbarons?limit={n}", {}),
                ("get", f"/api/tables/{tid}/stream?from_version={n}", {}),
                ("post", "/api/tournaments", {"json": {**cup, "rounds": n}}),
                ("post", "/api/tournaments", {"json": {**cup, "table_size": n}}),
                (
                    "post",
                    "/api/tournaments/t1/results",
                    {"json": {"round": 1, "table": n, "ranks": [1, 2]}},
                ),
                (
                    "post",
                    "/api/tournaments/t1/results",
                    {"json": {"round": 1, "table": 1, "ranks": [n, 2]}},
                ),
                ("get", f"/api/tournaments/t1/standings?round={n}", {}),
            ]
        for n in PAST_INT64:
            cases += [
                (
                    "post",
                    "/api/tokens",
                    {"json": {"username": "ada", "password": "x" * 9, "expires_in_seconds": n}},
                ),
                ("post", "/api/tournaments", {"json": {**cup, "registration_opens_ms": n}}),
                ("post", "/api/tournaments", {"json": {**cup, "table_timeout_s": n}}),
            ]
        for n in PAST_UINT64:
            cases += [
                (
                    "post",
                    "/api/tables",
                    {"json": {"title": "railbarons", "num_players": 2, "seed": n}},
                ),
                ("post", "/api/tournaments", {"json": {**cup, "seed": n}}),
            ]
        for method, url, kw in cases:
            r = await getattr(env.http, method)(url, headers=ada, **kw)
            assert r.status_code == 400, (url, kw, r.status_code, r.text)
            assert r.json()["code"] == "out_of_range", (url, kw, r.text)
            details = r.json()["details"]
            assert details["field"] and ("max" in details or "min" in details), r.text
        for raw in (
            b'{"name": "Cup", "title": "railbarons", "scale": 1e400}',
            b'{"name": "Cup", "title": "railbarons", "bye_points": NaN}',
        ):
            r = await env.http.post(
                "/api/tournaments",
                content=raw,
                headers={**ada, "Content-Type": "application/json"},
            )
            assert r.status_code == 400, r.text
        for points in ({str(2**70): [1.0]}, {"²": [1.0]}):
            r = await env.http.post(
                "/api/tournaments",
                json={"name": "Cup", "title": "railbarons", "placement_points": points},
                headers=ada,
            )
            assert r.status_code == 400 and r.json()["code"] in (
                "bad_placement_points",
                "bad_field",
            ), r.text
        assert await state(env) == before

    full_gateway(body)


def test_lone_surrogates_are_refused_at_the_edge(full_gateway):
    async def body(env):
        tid, players = await setup_table(env)
        ada = {**players[0], "Content-Type": "application/json"}
        before = await state(env)
        for url, raw in [
            ("/api/tournaments", '{"name": "\\ud800", "title": "railbarons"}'),
            (
                "/api/tournaments",
                '{"name": "Cup", "title": "railbarons", "tiebreaks": ["\\udfff"]}',
            ),
            ("/api/tables", '{"title": "\\ud800", "num_players": 2}'),
            ("/api/tables", '{"title": "railbarons", "num_players": 2, "options": {"\\ud800": 1}}'),
            (f"/api/tables/{tid}/moves", '{"action": {"type": "\\udc00"}, "expected_version": 0}'),
            (f"/api/tables/{tid}/seats/1/bot", '{"policy": "\\ud800"}'),
            ("/api/tokens", '{"username": "ada", "password": "\\ud800\\ud800\\ud800\\ud800"}'),
            ("/api/accounts", '{"username": "\\ud800x", "password": "long enough"}'),
        ]:
            r = await env.http.post(url, content=raw.encode(), headers=ada)
            assert (r.status_code, r.json()["code"]) == (400, "bad_unicode"), (url, r.text)
            assert r.json()["details"]["field"], r.text
        assert await state(env) == before

    full_gateway(body)


def test_an_oversized_chunked_body_is_413(full_gateway):
    async def body(env):
        tid, players = await setup_table(env)
        before = await state(env)

        async def chunks():
            for _ in range(100):
                yield b'{"action": {"pad": "' + b"x" * 1000 if _ == 0 else b"x" * 1000

        for url in (f"/api/tables/{tid}/moves", "/api/tables", "/signin"):
            headers = {**players[0], "Content-Type": "application/json"}
            if url == "/signin":
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            r = await env.http.post(url, content=chunks(), headers=headers)
            assert r.request.headers.get("transfer-encoding") == "chunked"
            assert (r.status_code, r.json()["code"]) == (413, "body_too_large"), (url, r.text)
        # the connection is still good for the next request
        assert (await env.http.get(f"/api/tables/{tid}")).status_code == 200
        assert await state(env) == before

    with contextlib.suppress(KeyboardInterrupt):
        full_gateway(body)
