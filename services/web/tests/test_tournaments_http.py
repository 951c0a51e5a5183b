"""The tournament endpoints of the gateway (services/web/tournaments.py) over HTTP against the
real tournament service (tables simulated), lobby and accounts in-process: create, list,
register (self and a bot account of the organiser), start, record results, standings,
export JSON/CSV, the leaderboard and an account's ratings; bad input with its reason."""

from __future__ import annotations

import asyncio

from services.tournaments.service.tests.harness import running_tournaments
from services.web.tests.harness import running_gateway


def test_tournaments_over_http(database_url, redis_url, key_prefix):
    async def main():
        async with running_tournaments(database_url) as tour:
            async with running_gateway(
                database_url, redis_url, key_prefix, tournaments_address=tour.address
            ) as gw:
                org = await gw.person("org", ("play", "tournament:write", "bots:write"))
                players = [await gw.person(f"p{i}", ("play",)) for i in range(4)]
                r = await gw.http.post(
                    "/api/tournaments",
                    json={"name": "HTTP Cup", "title": "railbarons", "rounds": 1, "seed": 3},
                    headers=org,
                )
                assert r.status_code == 201, r.text
                tid = r.json()["tournament_id"]
                for p in players:
                    r = await gw.http.post(f"/api/tournaments/{tid}/register", headers=p)
                    assert r.status_code == 200, r.text
                r = await gw.http.post(f"/api/tournaments/{tid}/register", headers=players[0])
                assert (r.status_code, r.json()["code"]) == (400, "already_registered")
                r = await gw.http.get("/api/tournaments", params={"status": "registration"})
                assert [t["tournament_id"] for t in r.json()["tournaments"]] == [tid]
                r = await gw.http.post(f"/api/tournaments/{tid}/start", headers=players[1])
                assert r.status_code == 403 and r.json()["code"] == "scope_missing"
                r = await gw.http.post(f"/api/tournaments/{tid}/start", headers=org)
                assert r.status_code == 200, r.text
                t = r.json()
                table = t["rounds"][0]["tables"][0]
                assert table["table_id"] and len(table["seats"]) == 4
                r = await gw.http.post(
                    f"/api/tournaments/{tid}/results",
                    json={"round": 1, "table": 7, "ranks": [1, 2, 3, 4]},
                    headers=org,
                )
                assert (r.status_code, r.json()["code"]) == (404, "unknown_table")
                r = await gw.http.post(
                    f"/api/tournaments/{tid}/results",
                    json={"round": 1, "table": 1, "ranks": [1, 2, 3, 4]},
                    headers=org,
                )
                assert r.status_code == 200, r.text
                t = (await gw.http.get(f"/api/tournaments/{tid}")).json()
                assert t["status"] == "TOURNAMENT_STATUS_FINISHED"
                assert [s["points"] for s in t["standings"]] == [6, 4, 2, 0]
                assert [(s["forfeits"], s["timeouts"]) for s in t["standings"]] == [(0, 0)] * 4
                r = await gw.http.get(f"/api/tournaments/{tid}/standings")
                assert all("forfeits" in s and "timeouts" in s for s in r.json()["standings"])
                # a timed tournament: the clock over HTTP, checked by the clocks' model
                base = {"name": "Clock Cup", "title": "railbarons", "rounds": 1}
                live = {"kind": "live", "base_s": 300, "increment_s": 5}
                for clock, why in (
                    ({"kind": "live", "base_s": 0}, "bad_time_control"),
                    ({"kind": "sundial"}, "bad_time_control"),
                ):
                    r = await gw.http.post(
                        "/api/tournaments", json={**base, "time_control": clock}, headers=org
                    )
                    assert (r.status_code, r.json()["code"]) == (400, why), r.text
                r = await gw.http.post(
                    "/api/tournaments",
                    json={**base, "time_control": live, "timeout_policy": "reclaim"},
                    headers=org,
                )
                assert (r.status_code, r.json()["code"]) == (400, "reclaim_not_casual")
                r = await gw.http.post(
                    "/api/tournaments",
                    json={**base, "time_control": live, "timeout_policy": "takeover"},
                    headers=org,
                )
                assert r.status_code == 201, r.text
                settings = r.json()["settings"]
                assert settings["time_control"] == {
                    **live,
                    "grace_s": 0,
                    "per_move_s": 0,
                    "max_bank_s": 0,
                }
                assert settings["timeout_policy"] == "takeover"
                r = await gw.http.get(f"/api/tournaments/{tid}/export", params={"format": "csv"})
                assert r.headers["content-type"].startswith("text/csv")
                assert r.text.count("\ngame,") == 4
                r = await gw.http.get(f"/api/tournaments/{tid}/export")
                assert r.json()["rounds"][0]["tables"][0]["game_id"] == table["game_id"]
                r = await gw.http.get(f"/api/tournaments/{tid}/export", params={"format": "xml"})
                assert (r.status_code, r.json()["code"]) == (400, "bad_export_format")
                r = await gw.http.get("/api/ratings/railbarons")
                assert r.status_code == 200 and "rows" in r.json()
                r = await gw.http.get("/api/ratings/chess")
                assert (r.status_code, r.json()["code"]) == (400, "unknown_title")
                r = await gw.http.get("/api/accounts/p0/ratings")
                assert r.status_code == 200
                r = await gw.http.get("/api/accounts/nobody/ratings")
                assert (r.status_code, r.json()["code"]) == (404, "unknown_account")

    asyncio.run(main())
