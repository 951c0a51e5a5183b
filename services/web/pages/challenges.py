"""The challenges page (issue 32): ``/challenges`` lists the signed-in account's pending
invitations, received (Accept / Decline buttons) and sent (Cancel), and invites an account
(or, with no name, makes an open challenge) to a seat of one of the account's open tables;
``/challenges/{id}`` is an open challenge's link, with a Take button. Every write is a
CSRF-checked form calling the lobby with the session's token (the same calls, scopes and
reason codes as ``/api/challenges``); a refusal is shown on the page and changes nothing."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from roundhouse.v1 import lobby_pb2
from services.web.backend import call
from services.web.errors import ApiError
from services.web.pages.base import (
    api_of,
    form_int,
    page,
    refusal,
    see_other,
    signed_in,
    write_form,
)
from services.web.session import session_auth

router = APIRouter(include_in_schema=False)

ACTIONS = {
    "accept": "AcceptChallenge",
    "decline": "DeclineChallenge",
    "cancel": "CancelChallenge",
}


async def _challenges(request: Request, **context: Any) -> Response:
    if await signed_in(request) is None:
        return see_other("/signin")
    api, auth = api_of(request), session_auth(request)
    mine = await call(api.lobby.ListChallenges, lobby_pb2.ListChallengesRequest(), auth)
    return await page(
        request, "challenges.html", received=list(mine.received), sent=list(mine.sent), **context
    )


@router.get("/challenges", response_class=HTMLResponse)
async def challenges_page(request: Request):
    return await _challenges(request)


@router.post("/challenges")
async def invite(request: Request):
    form = await write_form(request)
    if await signed_in(request) is None:
        return see_other("/signin")
    api, auth = api_of(request), session_auth(request)
    try:
        made = await call(
            api.lobby.CreateChallenge,
            lobby_pb2.CreateChallengeRequest(
                table_id=form.get("table_id", "").strip(),
                seat=form_int(form, "seat"),
                invitee=form.get("invitee", "").strip(),
            ),
            auth,
        )
    except ApiError as err:
        return await _challenges(request, error=refusal(err))
    return await _challenges(request, made=made)


@router.get("/challenges/{challenge_id}", response_class=HTMLResponse)
async def open_challenge(request: Request, challenge_id: str):
    """An open challenge's link: a Take button (the lobby judges it on the POST)."""
    if await signed_in(request) is None:
        return see_other("/signin")
    return await page(request, "challenge_link.html", challenge_id=challenge_id[:64])


@router.post("/challenges/{challenge_id}/{action}")
async def answer(request: Request, challenge_id: str, action: str):
    await write_form(request)
    if await signed_in(request) is None:
        return see_other("/signin")
    method = ACTIONS.get(action)
    if method is None:
        return await _challenges(
            request, error={"code": "no_route", "message": "accept, decline or cancel"}
        )
    api, auth = api_of(request), session_auth(request)
    try:
        done = await call(
            getattr(api.lobby, method), lobby_pb2.ChallengeRequest(challenge_id=challenge_id), auth
        )
    except ApiError as err:
        return await _challenges(request, error=refusal(err))
    if action == "accept":
        return see_other(f"/tables/{done.table_id}")
    return see_other("/challenges")
