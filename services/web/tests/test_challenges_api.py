"""``/api/challenges`` end to end (issue 32): ada invites bob's self-playing bot account and
bob; the bot's program learns of its invitation on its event stream and accepts over HTTP,
as a lichess bot does; bob declines; an open challenge's link is taken by someone else. The
refusals carry the lobby's reason codes and change nothing."""

from __future__ import annotations

from services.accounts.tests.conftest import PASSWORD
from services.web.tests.test_api import lines, setup_table


async def bot_of(env, owner: dict, name: str) -> dict:
    r = await env.http.post(
        "/api/bots", json={"username": name, "password": PASSWORD}, headers=owner
    )
    assert r.status_code == 201, r.text
    r = await env.http.post(f"/api/bots/{name}/tokens", json={}, headers=owner)
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def test_invitations_and_open_challenges_over_http(gateway_env):
    async def body(env):
        ada, bob, cy = await env.person("ada"), await env.person("bob"), await env.person("cy")
        bot = await bot_of(env, bob, "bob-bot")
        r = await env.http.post(
            "/api/tables",
            json={"title": "railbarons", "num_players": 3, "options": {}},
            headers=ada,
        )
        assert r.status_code == 201, r.text
        tid = r.json()["table_id"]
        # refusals first: none writes anything
        for body_, who, status, code in (
            ({"table_id": tid, "seat": 1, "invitee": "bob-bot"}, None, 401, "token_missing"),
            ({"table_id": tid, "seat": 1, "invitee": "bob-bot"}, bob, 403, "not_owner"),
            ({"table_id": tid, "seat": 9, "invitee": "bob-bot"}, ada, 400, "bad_seat"),
            ({"table_id": tid, "seat": 1, "invitee": "ghost"}, ada, 404, "unknown_account"),
            ({"table_id": tid, "seat": 1, "invitee": "ada"}, ada, 400, "self_invite"),
            ({"table_id": tid, "seat": 1, "expires_in_s": 5}, ada, 400, "bad_expiry"),
        ):
            r = await env.http.post("/api/challenges", json=body_, headers=who or {})
            assert (r.status_code, r.json()["code"]) == (status, code), r.text
        r = await env.http.get("/api/challenges", headers=ada)
        assert r.json() == {"received": [], "sent": []}
        async with env.http.stream("GET", "/api/stream/events", headers=bot) as events:
            assert events.status_code == 200
            r = await env.http.post(
                "/api/challenges",
                json={"table_id": tid, "seat": 1, "invitee": "bob-bot"},
                headers=ada,
            )
            assert r.status_code == 201, r.text
            sent = r.json()
            assert (sent["status"], sent["inviter"], sent["invitee"]) == (
                "pending",
                "ada",
                "bob-bot",
            )
            # the bot's program: read the stream, accept what arrives
            (event,) = await lines(events, 1)
            assert event["type"] == "challenge" and event["table_id"] == tid
            assert event["data"]["challenge_id"] == sent["challenge_id"]
            assert event["data"]["inviter"] == "ada" and event["seat"] == 1
            cid = event["data"]["challenge_id"]
            r = await env.http.post(f"/api/challenges/{cid}/accept", headers=cy)
            assert (r.status_code, r.json()["code"]) == (403, "not_invitee"), r.text
            r = await env.http.post(f"/api/challenges/{cid}/accept", headers=bot)
            assert r.status_code == 200 and r.json()["status"] == "accepted", r.text
            (joined,) = await lines(events, 1)
            assert (joined["type"], joined["table_id"], joined["seat"]) == ("tableJoined", tid, 1)
        r = await env.http.post(f"/api/challenges/{cid}/accept", headers=bot)
        assert (r.status_code, r.json()["code"]) == (400, "challenge_accepted"), r.text
        seats = (await env.http.get(f"/api/tables/{tid}")).json()["seats"]
        assert seats[1]["account"] == "bob-bot"
        # bob refuses everyone now: no invitation reaches him
        r = await env.http.put("/api/challenges/settings", json={"accept": "maybe"}, headers=bob)
        assert (r.status_code, r.json()["code"]) == (400, "bad_accept"), r.text
        r = await env.http.put(
            "/api/challenges/settings", json={"accept": "friends", "friends": ["cy"]}, headers=bob
        )
        assert r.status_code == 200 and r.json() == {"accept": "friends", "friends": ["cy"]}
        r = await env.http.post(
            "/api/challenges", json={"table_id": tid, "seat": 2, "invitee": "bob"}, headers=ada
        )
        assert (r.status_code, r.json()["code"]) == (400, "not_a_friend"), r.text
        await env.http.put("/api/challenges/settings", json={"accept": "everyone"}, headers=bob)
        r = await env.http.post(
            "/api/challenges", json={"table_id": tid, "seat": 2, "invitee": "bob"}, headers=ada
        )
        to_bob = r.json()["challenge_id"]
        mine = (await env.http.get("/api/challenges", headers=bob)).json()
        assert [c["challenge_id"] for c in mine["received"]] == [to_bob]
        r = await env.http.post(f"/api/challenges/{to_bob}/decline", headers=bob)
        assert r.status_code == 200 and r.json()["status"] == "declined", r.text
        # an open challenge: cy takes the link
        r = await env.http.post("/api/challenges", json={"table_id": tid, "seat": 2}, headers=ada)
        assert r.status_code == 201 and r.json()["invitee"] == "", r.text
        link = r.json()["challenge_id"]
        r = await env.http.post(f"/api/challenges/{link}/cancel", headers=cy)
        assert (r.status_code, r.json()["code"]) == (403, "not_inviter"), r.text
        r = await env.http.post(f"/api/challenges/{link}/accept", headers=cy)
        assert r.status_code == 200 and r.json()["taken_by"] == "cy", r.text
        r = await env.http.post("/api/challenges/nope/accept", headers=cy)
        assert (r.status_code, r.json()["code"]) == (404, "unknown_challenge"), r.text
        seats = (await env.http.get(f"/api/tables/{tid}")).json()["seats"]
        assert [s["account"] for s in seats] == ["", "bob-bot", "cy"]
        # ada heard of the acceptances and bob's no, in order
        async with env.http.stream("GET", "/api/stream/events?after=0-0", headers=ada) as mine:
            got = await lines(mine, 3)
        assert [(e["type"], e["data"]["by"]) for e in got] == [
            ("challengeAccepted", "bob-bot"),
            ("challengeDeclined", "bob"),
            ("challengeAccepted", "cy"),
        ]

    gateway_env(body)


def test_a_rematch_over_http(gateway_env):
    """ada and her self-playing bot finished; ada offers the table again and, the bot
    accepting at once, the new table starts with the seats rotated."""

    async def body(env):
        tid, players = await setup_table(env)
        ada, eve = players[0], await env.person("eve")
        r = await env.http.post(f"/api/tables/{tid}/rematch", headers=ada)
        assert (r.status_code, r.json()["code"]) == (400, "not_finished"), r.text
        r = await env.http.post(f"/api/tables/{tid}/resign", headers=ada)
        assert r.status_code == 200, r.text
        r = await env.http.get(f"/api/tables/{tid}/rematch")
        assert (r.status_code, r.json()["code"]) == (404, "no_rematch_offer"), r.text
        r = await env.http.post(f"/api/tables/{tid}/rematch", headers=eve)
        assert (r.status_code, r.json()["code"]) == (403, "not_seated"), r.text
        r = await env.http.post(f"/api/tables/{tid}/rematch")
        assert r.status_code == 401, r.text
        r = await env.http.post(f"/api/tables/{tid}/rematch", headers=ada)
        assert r.status_code == 200, r.text
        offer = r.json()
        assert offer["status"] == "started" and offer["waiting"] == []
        assert offer["accepted"] == ["ada", "ada-bot"]
        new = (await env.http.get(f"/api/tables/{offer['new_table_id']}")).json()
        assert new["status"] == "running"
        assert [s["account"] for s in new["seats"]] == ["ada-bot", "ada"]
        assert (await env.http.get(f"/api/tables/{tid}/rematch")).json() == offer
        r = await env.http.post(f"/api/tables/{tid}/rematch/decline", headers=ada)
        assert (r.status_code, r.json()["code"]) == (400, "rematch_started"), r.text

    gateway_env(body)
