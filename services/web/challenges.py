"""Challenges and invitations over HTTP (issue 32): ``/api/challenges...``, the lobby's
``CreateChallenge``, ``ListChallenges``, ``AcceptChallenge``, ``DeclineChallenge``,
``CancelChallenge`` and ``Get/SetChallengeSettings`` with the same reason codes
(docs/api.md, "Challenges"). The lobby authenticates and checks the scopes: creating and
canceling need ``tables:write``; accepting, declining and the settings ``play`` (people) or
``bot:play`` (bot accounts); listing any scope.

An open challenge's ``challenge_id`` is its link: ``POST /api/challenges/{id}/accept`` by
anyone signed in takes the seat."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field

from roundhouse.v1 import lobby_pb2
from services.platform.bounds import INT32_MAX, INT32_MIN
from services.web.backend import call
from services.web.deps import Api, Auth
from services.web.errors import ERROR_RESPONSES

router = APIRouter(prefix="/api/challenges", tags=["challenges"], responses=ERROR_RESPONSES)

ChallengePath = Annotated[str, Path(max_length=64, description="the challenge's id (its link)")]


class NewChallenge(BaseModel):
    table_id: str = Field(max_length=64, description="an open table of the caller's")
    seat: int = Field(ge=INT32_MIN, le=INT32_MAX, description="an empty seat, from 0")
    invitee: str = Field(
        "", max_length=64, description='a username (person or bot account); "" = an open challenge'
    )
    expires_in_s: int = Field(
        0, ge=INT32_MIN, le=INT32_MAX, description="seconds, 60..604800; 0 = 86400 (24 h)"
    )


class ChallengeOut(BaseModel):
    challenge_id: str = Field(description="also the open challenge's link token")
    table_id: str
    seat: int
    inviter: str = Field(description="username")
    invitee: str = Field(description='username; "" = an open challenge')
    status: Literal["pending", "accepted", "declined", "canceled", "expired"]
    title: str
    created_at_ms: int = Field(description="Unix time in milliseconds")
    expires_at_ms: int = Field(description="Unix time in milliseconds")
    taken_by: str = Field(description='who accepted ("" until then)')


class ChallengesOut(BaseModel):
    received: list[ChallengeOut] = Field(description="pending, to the caller, newest first")
    sent: list[ChallengeOut] = Field(description="pending, by the caller, newest first")


class ChallengeSettingsIn(BaseModel):
    accept: str = Field(
        max_length=16, description='"everyone" | "friends" | "nobody" (else 400 bad_accept)'
    )
    friends: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list,
        max_length=200,
        description='usernames whose invitations "friends" accepts (the allow list)',
    )


class ChallengeSettingsOut(BaseModel):
    accept: Literal["everyone", "friends", "nobody"]
    friends: list[str]


def challenge_out(c: lobby_pb2.Challenge) -> ChallengeOut:
    """The lobby's ``Challenge`` as the API's JSON."""
    return ChallengeOut(
        challenge_id=c.challenge_id,
        table_id=c.table_id,
        seat=c.seat,
        inviter=c.inviter,
        invitee=c.invitee,
        status=c.status,  # type: ignore[arg-type] - the lobby's status names
        title=c.title,
        created_at_ms=c.created_at_ms,
        expires_at_ms=c.expires_at_ms,
        taken_by=c.taken_by,
    )


def settings_out(s: lobby_pb2.ChallengeSettings) -> ChallengeSettingsOut:
    return ChallengeSettingsOut(accept=s.accept, friends=list(s.friends))  # type: ignore[arg-type]


@router.post("", response_model=ChallengeOut, status_code=201)
async def create_challenge(body: NewChallenge, api: Api, auth: Auth):
    """Invite ``invitee`` to ``seat`` of the caller's open table, or (``invitee`` "") make an
    open challenge (``tables:write``). 400 ``not_open``, ``seat_taken``, ``already_seated``,
    ``already_invited``, ``self_invite``, ``hosted_bot``, ``invitations_refused``,
    ``not_a_friend``, ``bad_expiry``, ``bad_seat``; 403 ``not_owner``; 404 ``unknown_account``,
    ``unknown_table``."""
    request = lobby_pb2.CreateChallengeRequest(
        table_id=body.table_id,
        seat=body.seat,
        invitee=body.invitee,
        expires_in_s=body.expires_in_s,
    )
    return challenge_out(await call(api.lobby.CreateChallenge, request, auth))


@router.get("", response_model=ChallengesOut)
async def list_challenges(api: Api, auth: Auth):
    """The caller's pending challenges, received and sent."""
    answer = await call(api.lobby.ListChallenges, lobby_pb2.ListChallengesRequest(), auth)
    return ChallengesOut(
        received=[challenge_out(c) for c in answer.received],
        sent=[challenge_out(c) for c in answer.sent],
    )


@router.get("/settings", response_model=ChallengeSettingsOut)
async def get_challenge_settings(api: Api, auth: Auth):
    """Whom the caller accepts invitations from (default ``everyone``) and its friends."""
    answer = await call(api.lobby.GetChallengeSettings, lobby_pb2.ChallengeSettingsRequest(), auth)
    return settings_out(answer)


@router.put("/settings", response_model=ChallengeSettingsOut)
async def set_challenge_settings(body: ChallengeSettingsIn, api: Api, auth: Auth):
    """Replace the setting and the friends list (``play`` / ``bot:play``). 400
    ``bad_accept``; 404 ``unknown_account`` (a friend's name)."""
    request = lobby_pb2.ChallengeSettings(accept=body.accept, friends=body.friends)
    return settings_out(await call(api.lobby.SetChallengeSettings, request, auth))


@router.post("/{challenge_id}/accept", response_model=ChallengeOut)
async def accept_challenge(challenge_id: ChallengePath, api: Api, auth: Auth):
    """The invitee takes the seat (an open challenge: anyone signed in; ``play`` /
    ``bot:play``). 400 ``challenge_expired``, ``challenge_accepted``, ``challenge_declined``,
    ``challenge_canceled``, ``seat_taken``, ``not_open``, ``already_seated``; 403
    ``not_invitee``; 404 ``unknown_challenge``."""
    request = lobby_pb2.ChallengeRequest(challenge_id=challenge_id)
    return challenge_out(await call(api.lobby.AcceptChallenge, request, auth))


@router.post("/{challenge_id}/decline", response_model=ChallengeOut)
async def decline_challenge(challenge_id: ChallengePath, api: Api, auth: Auth):
    """The invitee says no (``play`` / ``bot:play``); refusals as accept."""
    request = lobby_pb2.ChallengeRequest(challenge_id=challenge_id)
    return challenge_out(await call(api.lobby.DeclineChallenge, request, auth))


@router.post("/{challenge_id}/cancel", response_model=ChallengeOut)
async def cancel_challenge(challenge_id: ChallengePath, api: Api, auth: Auth):
    """The inviter or the table's owner withdraws it (``tables:write``; 403 ``not_inviter``)."""
    request = lobby_pb2.ChallengeRequest(challenge_id=challenge_id)
    return challenge_out(await call(api.lobby.CancelChallenge, request, auth))


api_router = APIRouter(prefix="/api/tables", tags=["tables"], responses=ERROR_RESPONSES)
"""``/api/tables/{id}/rematch...``: the lobby's ``OfferRematch``, ``AnswerRematch`` and
``GetRematch`` (the app includes a module's ``api_router`` beside its ``router``)."""


class RematchOut(BaseModel):
    table_id: str = Field(description="the finished table")
    offered_by: str = Field(description="username")
    status: Literal["pending", "starting", "started", "declined"]
    accepted: list[str] = Field(description="usernames that accepted (bots at once)")
    waiting: list[str] = Field(description="usernames still to answer")
    new_table_id: str = Field(description='the new table, once started ("" until then)')
    declined_by: str = Field(description="username, when declined")


def rematch_out(r: lobby_pb2.Rematch) -> RematchOut:
    """The lobby's ``Rematch`` as the API's JSON."""
    return RematchOut(
        table_id=r.table_id,
        offered_by=r.offered_by,
        status=r.status,  # type: ignore[arg-type] - the lobby's status names
        accepted=list(r.accepted),
        waiting=list(r.waiting),
        new_table_id=r.new_table_id,
        declined_by=r.declined_by,
    )


@api_router.post("/{table_id}/rematch", response_model=RematchOut)
async def offer_rematch(table_id: str, api: Api, auth: Auth):
    """A seated player (``play`` / ``bot:play``) offers the finished table again (same title,
    options, clock, seats rotated by one); it starts when every person seated accepted.
    Offering again accepts the pending offer. 400 ``not_finished``, ``no_rematch``,
    ``rematch_declined``; 403 ``not_seated``."""
    request = lobby_pb2.GetTableRequest(table_id=table_id)
    return rematch_out(await call(api.lobby.OfferRematch, request, auth))


@api_router.get("/{table_id}/rematch", response_model=RematchOut)
async def get_rematch(table_id: str, api: Api, auth: Auth):
    """The table's rematch offer (anonymous): 404 ``no_rematch_offer``."""
    request = lobby_pb2.GetTableRequest(table_id=table_id)
    return rematch_out(await call(api.lobby.GetRematch, request, auth))


@api_router.post("/{table_id}/rematch/accept", response_model=RematchOut)
async def accept_rematch(table_id: str, api: Api, auth: Auth):
    """Accept the pending offer; the last acceptance starts the new table (``new_table_id``).
    404 ``no_rematch_offer``; 400 ``rematch_declined``; 403 ``not_seated``."""
    request = lobby_pb2.AnswerRematchRequest(table_id=table_id, accept=True)
    return rematch_out(await call(api.lobby.AnswerRematch, request, auth))


@api_router.post("/{table_id}/rematch/decline", response_model=RematchOut)
async def decline_rematch(table_id: str, api: Api, auth: Auth):
    """Decline the pending offer (it never starts). 400 ``rematch_started``,
    ``rematch_declined``."""
    request = lobby_pb2.AnswerRematchRequest(table_id=table_id, accept=False)
    return rematch_out(await call(api.lobby.AnswerRematch, request, auth))
