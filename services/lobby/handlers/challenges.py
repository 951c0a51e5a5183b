"""Challenges and invitations (issue 32, item 1): ``CreateChallenge``, ``ListChallenges``,
``AcceptChallenge``, ``DeclineChallenge``, ``CancelChallenge``, ``Get/SetChallengeSettings``.
The store and the rules are :mod:`services.lobby.challenges`.

Account events (:mod:`services.lobby.events`), each to the accounts named only:

* ``challenge`` to the invitee of a named invitation (data: ``challenge_id``, ``inviter``,
  ``expires_at_ms``); an open challenge has no invitee and sends none;
* ``challengeAccepted`` to the inviter (data: ``challenge_id``, ``by``), and ``tableJoined``
  to the account that took the seat;
* ``challengeDeclined`` to the inviter (data: ``challenge_id``, ``by``);
* ``challengeCanceled`` to the invitee (data: ``challenge_id``).

Every refusal changes nothing: the table, its seats and the challenge stay as they were.
"""

from __future__ import annotations

import datetime

import grpc

from roundhouse.v1 import lobby_pb2
from services.accounts.models import SYSTEM
from services.accounts.rules import TABLES_WRITE
from services.lobby.challenges import (
    ACCEPT_SETTINGS,
    ACCEPTED,
    CANCELED,
    DECLINED,
    MAX_FRIENDS,
    PENDING,
    ChallengeRecord,
    ChallengeStore,
    expiry_seconds,
    may_invite,
    new_challenge_id,
    now_utc,
    require_pending,
)
from services.lobby.events import (
    CHALLENGE,
    CHALLENGE_ACCEPTED,
    CHALLENGE_CANCELED,
    CHALLENGE_DECLINED,
    TABLE_JOINED,
)
from services.lobby.handlers.common import DENIED, REFUSED, log, require_owner
from services.lobby.models import PLAYER
from services.lobby.store import SeatRecord, TableRecord
from services.lobby.tables import not_seated, open_seat
from services.platform.auth import Principal, require_principal, require_scope
from services.platform.grpc_errors import ServiceError


def _ms(t: datetime.datetime) -> int:
    return int(t.timestamp() * 1000)


def challenge_proto(c: ChallengeRecord, now: datetime.datetime) -> lobby_pb2.Challenge:
    """A challenge as the ``Challenge`` message (``status`` as :meth:`ChallengeRecord.state`)."""
    return lobby_pb2.Challenge(
        challenge_id=c.challenge_id,
        table_id=c.table_id,
        seat=c.seat,
        inviter=c.inviter,
        invitee=c.invitee,
        status=c.state(now),
        title=c.title,
        created_at_ms=_ms(c.created_at),
        expires_at_ms=_ms(c.expires_at),
        taken_by=c.taken_by,
    )


def unknown_challenge() -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, "unknown_challenge", "no such challenge")


class Challenges:
    """The challenge handlers of :class:`services.lobby.server.LobbyServicer`."""

    @property
    def challenges(self) -> ChallengeStore:
        return ChallengeStore(self.store.sessions)

    async def _challenge(self, challenge_id: str) -> ChallengeRecord:
        found = await self.challenges.get(challenge_id) if challenge_id else None
        if found is None:
            raise unknown_challenge()
        return found

    async def _announce(
        self, account_id: str | None, type: str, c: ChallengeRecord, **data
    ) -> None:
        """One challenge event to ``account_id`` (after the commit; best effort)."""
        if not account_id:
            return
        try:
            await self.events.publish(
                account_id,
                type,
                table_id=c.table_id,
                title=c.title,
                seat=c.seat,
                data={"challenge_id": c.challenge_id, **data},
            )
        except Exception:  # noqa: BLE001 - the challenge changed; the event is best effort
            log.exception("challenge event not published", type=type, challenge=c.challenge_id)

    async def CreateChallenge(self, request, context):
        principal = await require_scope(context, TABLES_WRITE)
        expires_s = expiry_seconds(request.expires_in_s)
        table = await self._table(request.table_id)
        require_owner(table, principal)
        open_seat(table, request.seat)
        invitee = None
        now = now_utc()
        if request.invitee:
            invitee = await self.accounts.by_username(request.invitee)
            if invitee is None or invitee.kind == SYSTEM:
                raise ServiceError(grpc.StatusCode.NOT_FOUND, "unknown_account", "no such player")
            if invitee.id == principal.account_id:
                raise ServiceError(REFUSED, "self_invite", "take the seat yourself (JoinSeat)")
            if invitee.hosted_policy:
                raise ServiceError(
                    REFUSED,
                    "hosted_bot",
                    f"{invitee.username} is played by a hosted policy: seat it with AddBot",
                )
            not_seated(table, invitee.id, invitee.username)
            if await self.challenges.pending_for(table.table_id, invitee.id, now):
                raise ServiceError(
                    REFUSED,
                    "already_invited",
                    f"{invitee.username} already holds an invitation to this table",
                )
            accept, friends = await self.challenges.settings(invitee.id)
            may_invite(accept, {i for i, _ in friends}, principal.account_id, invitee.username)
        c = ChallengeRecord(
            challenge_id=new_challenge_id(),
            table_id=table.table_id,
            seat=request.seat,
            inviter_id=principal.account_id,
            inviter=principal.username,
            invitee_id=None if invitee is None else invitee.id,
            invitee="" if invitee is None else invitee.username,
            status=PENDING,
            title=table.title,
            created_at=now,
            expires_at=now + datetime.timedelta(seconds=expires_s),
        )
        await self.challenges.create(c)
        log.info("challenge created", table_id=c.table_id, seat=c.seat, open=invitee is None)
        await self._announce(
            c.invitee_id,
            CHALLENGE,
            c,
            inviter=c.inviter,
            expires_at_ms=_ms(c.expires_at),
        )
        return challenge_proto(c, now)

    async def ListChallenges(self, request, context):
        principal = await require_principal(context)
        now = now_utc()
        received, sent = await self.challenges.pending_of(principal.account_id, now)
        return lobby_pb2.ListChallengesResponse(
            received=[challenge_proto(c, now) for c in received],
            sent=[challenge_proto(c, now) for c in sent],
        )

    def _require_invitee(self, c: ChallengeRecord, principal: Principal) -> None:
        if c.invitee_id is not None and c.invitee_id != principal.account_id:
            raise ServiceError(DENIED, "not_invitee", "this invitation is for another account")

    async def AcceptChallenge(self, request, context):
        principal = await self._player(context)
        c = await self._challenge(request.challenge_id)
        self._require_invitee(c, principal)
        now = now_utc()
        require_pending(c, now)
        account_id, username, is_bot = principal.account_id, principal.username, principal.is_bot

        def change(t: TableRecord) -> None:
            open_seat(t, c.seat)
            not_seated(t, account_id, username)
            t.seats[c.seat] = SeatRecord(PLAYER, account_id, username, is_bot)

        async def decide(session) -> None:
            await ChallengeStore.decide_in(session, c.challenge_id, ACCEPTED, now, account_id)

        table = await self._change(c.table_id, change, decide)
        c.status, c.taken_by = ACCEPTED, username
        log.info("challenge accepted", table_id=c.table_id, seat=c.seat, account=account_id)
        await self._tell(account_id, TABLE_JOINED, table, c.seat)
        await self._announce(c.inviter_id, CHALLENGE_ACCEPTED, c, by=username)
        return challenge_proto(c, now)

    async def DeclineChallenge(self, request, context):
        principal = await self._player(context)
        c = await self._challenge(request.challenge_id)
        if c.invitee_id != principal.account_id:  # an open challenge is simply not taken
            raise ServiceError(DENIED, "not_invitee", "this invitation is not for your account")
        now = now_utc()
        require_pending(c, now)
        await self.challenges.decide(c.challenge_id, DECLINED, now)
        c.status = DECLINED
        await self._announce(c.inviter_id, CHALLENGE_DECLINED, c, by=principal.username)
        return challenge_proto(c, now)

    async def CancelChallenge(self, request, context):
        principal = await require_scope(context, TABLES_WRITE)
        c = await self._challenge(request.challenge_id)
        if c.inviter_id != principal.account_id and not principal.is_admin:
            table = await self._table(c.table_id)
            try:
                require_owner(table, principal)
            except ServiceError:
                raise ServiceError(
                    DENIED, "not_inviter", "only the inviter or the table's owner may cancel"
                ) from None
        now = now_utc()
        require_pending(c, now)
        await self.challenges.decide(c.challenge_id, CANCELED, now)
        c.status = CANCELED
        await self._announce(c.invitee_id, CHALLENGE_CANCELED, c)
        return challenge_proto(c, now)

    async def GetChallengeSettings(self, request, context):
        principal = await require_principal(context)
        accept, friends = await self.challenges.settings(principal.account_id)
        return lobby_pb2.ChallengeSettings(accept=accept, friends=[u for _, u in friends])

    async def SetChallengeSettings(self, request, context):
        principal = await self._player(context)
        if request.accept not in ACCEPT_SETTINGS:
            raise ServiceError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_accept",
                f"accept must be one of {', '.join(ACCEPT_SETTINGS)}",
            )
        if len(request.friends) > MAX_FRIENDS:
            raise ServiceError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "too_many_friends",
                f"at most {MAX_FRIENDS} friends",
                max_friends=MAX_FRIENDS,
            )
        ids = []
        for name in request.friends:
            account = await self.accounts.by_username(name)
            if account is None or account.kind == SYSTEM:
                raise ServiceError(grpc.StatusCode.NOT_FOUND, "unknown_account", "no such player")
            ids.append(account.id)
        await self.challenges.set_settings(principal.account_id, request.accept, ids)
        return await self.GetChallengeSettings(request, context)


__all__ = ["Challenges", "challenge_proto"]
