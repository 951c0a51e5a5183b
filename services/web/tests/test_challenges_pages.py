"""The challenges page over HTTP (no browser): ada invites bob from the page, bob sees the
invitation on his page and accepts it with its button (he is taken to the table, seated);
a declined and a canceled invitation; an open challenge's link taken by cy; a refusal is
shown with its reason and changes nothing; every write needs the double-submit value."""

from __future__ import annotations

import re

from roundhouse.v1 import lobby_pb2
from services.web.tests.test_pages import _csrf, _signed_up


def _ids(html: str, section: str) -> list[str]:
    part = html.split(f'id="{section}"', 1)[1].split("</section>", 1)[0]
    return re.findall(r'data-challenge-id="([^"]+)"', part)


def test_invite_accept_decline_cancel_and_take_on_the_page(gateway_env):
    async def body(env):
        async with (
            _signed_up(env, "ada") as (ada, ada_csrf),
            _signed_up(env, "bob") as (bob, bob_csrf),
            _signed_up(env, "cy") as (cy, cy_csrf),
        ):
            r = await ada.post(
                "/tables",
                data={"title": "railbarons", "num_players": "3", "bots": "0", "csrf": ada_csrf},
            )
            assert r.status_code == 303, r.text
            tid = r.headers["location"].rsplit("/", 1)[1]
            invite = {"table_id": tid, "seat": "1", "invitee": "bob"}
            r = await ada.post("/challenges", data=invite)
            assert r.status_code == 403 and "csrf_failed" in r.text
            r = await ada.post("/challenges", data={**invite, "invitee": "ghost", "csrf": ada_csrf})
            assert r.status_code == 200 and "unknown_account" in r.text
            r = await ada.post("/challenges", data={**invite, "csrf": ada_csrf})
            assert r.status_code == 200 and 'id="made"' in r.text, r.text
            (sent,) = _ids(r.text, "sent")
            page = await bob.get("/challenges")
            assert _ids(page.text, "received") == [sent] and "ada" in page.text
            assert _ids((await cy.get("/challenges")).text, "received") == []
            r = await cy.post(f"/challenges/{sent}/accept", data={"csrf": cy_csrf})
            assert r.status_code == 200 and "not_invitee" in r.text
            r = await bob.post(f"/challenges/{sent}/accept", data={"csrf": bob_csrf})
            assert r.status_code == 303 and r.headers["location"] == f"/tables/{tid}", r.text
            table = await env.lobby.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid))
            assert [s.name for s in table.seats] == ["", "bob", ""]
            # declined and canceled: gone from both pages
            r = await ada.post(
                "/challenges", data={**invite, "seat": "2", "invitee": "cy", "csrf": ada_csrf}
            )
            (to_cy,) = _ids(r.text, "sent")
            r = await cy.post(f"/challenges/{to_cy}/decline", data={"csrf": cy_csrf})
            assert r.status_code == 303
            r = await ada.post(
                "/challenges", data={**invite, "seat": "2", "invitee": "cy", "csrf": ada_csrf}
            )
            (again,) = _ids(r.text, "sent")
            r = await ada.post(f"/challenges/{again}/cancel", data={"csrf": ada_csrf})
            assert r.status_code == 303
            assert _ids((await cy.get("/challenges")).text, "received") == []
            assert _ids((await ada.get("/challenges")).text, "sent") == []
            # an open challenge: its link, taken by cy
            r = await ada.post(
                "/challenges", data={**invite, "seat": "2", "invitee": "", "csrf": ada_csrf}
            )
            link = re.search(r'href="(/challenges/[^"]+)"', r.text.split('id="made"', 1)[1])
            page = await cy.get(link.group(1))
            assert page.status_code == 200 and 'id="take"' in page.text
            r = await cy.post(f"{link.group(1)}/accept", data={"csrf": _csrf(page.text)})
            assert r.status_code == 303 and r.headers["location"] == f"/tables/{tid}"
            table = await env.lobby.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid))
            assert [s.name for s in table.seats] == ["", "bob", "cy"]

    gateway_env(body)
