"""Challenges and invitations (issue 32): the owner invites a named account to a seat, the
invitee accepts (takes the seat) or declines, the owner cancels, invitations expire, an
account refuses invitations from everyone or from all but its friends; open challenges are
taken by anyone signed in. Every refusal leaves the tables, seats and challenges as they were;
each event reaches the accounts it concerns and no other."""

from __future__ import annotations

import datetime

import grpc
import sqlalchemy as sa

from roundhouse.v1 import lobby_pb2
from services.lobby.challenges import Challenge
from services.lobby.tests.harness import refused

DENIED = grpc.StatusCode.PERMISSION_DENIED
REFUSED = grpc.StatusCode.FAILED_PRECONDITION
INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
CHALLENGE_TYPES = {"challenge", "challengeAccepted", "challengeDeclined", "challengeCanceled"}


async def snapshot(env) -> tuple:
    """Every table, seat and challenge row."""
    async with env.store.sessions() as s:
        rows = (await s.execute(sa.select(Challenge).order_by(Challenge.id))).scalars().all()
        challenges = [(c.id, c.status, c.taken_by_id, c.decided_at) for c in rows]
    return await env.rows(), challenges


async def challenge_events(env, caller) -> list:
    return [
        e
        for e in await env.servicer.events.after(caller.account.id, "0-0")
        if e.type in CHALLENGE_TYPES
    ]


def invite(table_id: str, seat: int, invitee: str = "", expires_in_s: int = 0):
    return lobby_pb2.CreateChallengeRequest(
        table_id=table_id, seat=seat, invitee=invitee, expires_in_s=expires_in_s
    )


def one(challenge_id: str) -> lobby_pb2.ChallengeRequest:
    return lobby_pb2.ChallengeRequest(challenge_id=challenge_id)


def test_an_invitee_accepts_and_takes_the_seat(lobby_env):
    async def body(env):
        ada, bob, eve = await env.person("ada"), await env.person("bob"), await env.person("eve")
        table = await env.table(ada, players=3)
        tid = table.table_id
        c = await env.lobby.CreateChallenge(invite(tid, 1, "BOB"), metadata=ada.md)
        assert (c.inviter, c.invitee, c.seat, c.status, c.title) == (
            "ada",
            "bob",
            1,
            "pending",
            "railbarons",
        )
        assert c.expires_at_ms - c.created_at_ms == 86_400_000  # the default: 24 h
        mine = await env.lobby.ListChallenges(lobby_pb2.ListChallengesRequest(), metadata=bob.md)
        assert [x.challenge_id for x in mine.received] == [c.challenge_id] and not mine.sent
        sent = await env.lobby.ListChallenges(lobby_pb2.ListChallengesRequest(), metadata=ada.md)
        assert [x.challenge_id for x in sent.sent] == [c.challenge_id] and not sent.received
        # someone else may not take bob's invitation, nor decline it
        before = await snapshot(env)
        await refused(
            env.lobby.AcceptChallenge(one(c.challenge_id), metadata=eve.md), DENIED, "not_invitee"
        )
        await refused(
            env.lobby.DeclineChallenge(one(c.challenge_id), metadata=eve.md), DENIED, "not_invitee"
        )
        await refused(
            env.lobby.AcceptChallenge(one("nope"), metadata=bob.md), NOT_FOUND, "unknown_challenge"
        )
        assert await snapshot(env) == before
        done = await env.lobby.AcceptChallenge(one(c.challenge_id), metadata=bob.md)
        assert (done.status, done.taken_by) == ("accepted", "bob")
        seats = (await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid))).seats
        assert seats[1].name == "bob" and seats[1].kind == lobby_pb2.SEAT_KIND_PLAYER
        # answered once: a second accept, a decline, a cancel are refused and change nothing
        before = await snapshot(env)
        await refused(
            env.lobby.AcceptChallenge(one(c.challenge_id), metadata=bob.md),
            REFUSED,
            "challenge_accepted",
        )
        await refused(
            env.lobby.DeclineChallenge(one(c.challenge_id), metadata=bob.md),
            REFUSED,
            "challenge_accepted",
        )
        await refused(
            env.lobby.CancelChallenge(one(c.challenge_id), metadata=ada.md),
            REFUSED,
            "challenge_accepted",
        )
        assert await snapshot(env) == before
        # events: bob got the invitation, ada the acceptance, eve nothing
        got_bob = await challenge_events(env, bob)
        assert [e.type for e in got_bob] == ["challenge"]
        assert got_bob[0].data["challenge_id"] == c.challenge_id
        assert got_bob[0].data["inviter"] == "ada" and got_bob[0].table_id == tid
        got_ada = await challenge_events(env, ada)
        assert [(e.type, e.data["by"]) for e in got_ada] == [("challengeAccepted", "bob")]
        assert await challenge_events(env, eve) == []
        joined = [
            e
            for e in await env.servicer.events.after(bob.account.id, "0-0")
            if e.type == "tableJoined"
        ]
        assert [(e.table_id, e.seat) for e in joined] == [(tid, 1)]

    lobby_env(body)


def test_decline_and_cancel_reach_the_other_side_only(lobby_env):
    async def body(env):
        ada, bob, cy = await env.person("ada"), await env.person("bob"), await env.person("cy")
        tid = (await env.table(ada, players=3)).table_id
        to_bob = await env.lobby.CreateChallenge(invite(tid, 1, "bob"), metadata=ada.md)
        to_cy = await env.lobby.CreateChallenge(invite(tid, 2, "cy"), metadata=ada.md)
        # only the inviter (or the owner, or an admin) cancels; tables:write needed
        before = await snapshot(env)
        await refused(
            env.lobby.CancelChallenge(one(to_cy.challenge_id), metadata=bob.md),
            DENIED,
            "not_inviter",
        )
        play_only = await env.token(ada.account, ["play"])
        await refused(
            env.lobby.CancelChallenge(one(to_cy.challenge_id), metadata=play_only.md),
            DENIED,
            "scope_missing",
        )
        assert await snapshot(env) == before
        declined = await env.lobby.DeclineChallenge(one(to_bob.challenge_id), metadata=bob.md)
        assert declined.status == "declined"
        canceled = await env.lobby.CancelChallenge(one(to_cy.challenge_id), metadata=ada.md)
        assert canceled.status == "canceled"
        before = await snapshot(env)
        await refused(
            env.lobby.AcceptChallenge(one(to_bob.challenge_id), metadata=bob.md),
            REFUSED,
            "challenge_declined",
        )
        await refused(
            env.lobby.AcceptChallenge(one(to_cy.challenge_id), metadata=cy.md),
            REFUSED,
            "challenge_canceled",
        )
        assert await snapshot(env) == before
        seats = (await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid))).seats
        assert [s.kind for s in seats] == [lobby_pb2.SEAT_KIND_EMPTY] * 3
        assert [(e.type, e.data["by"]) for e in await challenge_events(env, ada)] == [
            ("challengeDeclined", "bob")
        ]
        assert [e.type for e in await challenge_events(env, bob)] == ["challenge"]
        got_cy = await challenge_events(env, cy)
        assert [e.type for e in got_cy] == ["challenge", "challengeCanceled"]
        assert got_cy[1].data == {"challenge_id": to_cy.challenge_id}
        for who in (ada, bob, cy):
            mine = await env.lobby.ListChallenges(
                lobby_pb2.ListChallengesRequest(), metadata=who.md
            )
            assert not mine.received and not mine.sent

    lobby_env(body)


def test_who_may_be_invited_and_to_what(lobby_env):
    async def body(env):
        ada, bob, eve = await env.person("ada"), await env.person("bob"), await env.person("eve")
        hosted = await env.bot_account(bob, "hostbot", policy="greedy")
        tid = (await env.table(ada, players=3)).table_id
        await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=eve.md)
        before = await snapshot(env)
        cases = [
            (invite(tid, 1, "bob"), bob, DENIED, "not_owner"),
            (invite(tid, 0, "bob"), ada, REFUSED, "seat_taken"),
            (invite(tid, 7, "bob"), ada, INVALID, "bad_seat"),
            (invite(tid, 1, "nobody-here"), ada, NOT_FOUND, "unknown_account"),
            (invite(tid, 1, "greedy-bot"), ada, NOT_FOUND, "unknown_account"),
            (invite(tid, 1, "ada"), ada, REFUSED, "self_invite"),
            (invite(tid, 1, "eve"), ada, REFUSED, "already_seated"),
            (invite(tid, 1, "hostbot"), ada, REFUSED, "hosted_bot"),
            (invite(tid, 1, "bob", expires_in_s=30), ada, INVALID, "bad_expiry"),
            (invite(tid, 1, "bob", expires_in_s=8 * 86_400), ada, INVALID, "bad_expiry"),
            (invite("no-table", 1, "bob"), ada, NOT_FOUND, "unknown_table"),
        ]
        for request, caller, code, reason in cases:
            await refused(env.lobby.CreateChallenge(request, metadata=caller.md), code, reason)
        await refused(
            env.lobby.CreateChallenge(invite(tid, 1, "bob")), grpc.StatusCode.UNAUTHENTICATED
        )
        assert hosted.account.hosted_policy == "greedy"
        await env.lobby.CreateChallenge(invite(tid, 1, "bob"), metadata=ada.md)
        before = await snapshot(env)
        await refused(
            env.lobby.CreateChallenge(invite(tid, 2, "bob"), metadata=ada.md),
            REFUSED,
            "already_invited",
        )
        assert await snapshot(env) == before
        await env.lobby.AbortTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
        await refused(
            env.lobby.CreateChallenge(invite(tid, 2, "cy"), metadata=ada.md),
            REFUSED,
            "table_aborted",
        )

    lobby_env(body)


def test_the_seat_taken_meanwhile_refuses_the_accept_and_keeps_it_pending(lobby_env):
    async def body(env):
        ada, bob, eve = await env.person("ada"), await env.person("bob"), await env.person("eve")
        tid = (await env.table(ada, players=2)).table_id
        c = await env.lobby.CreateChallenge(invite(tid, 1, "bob"), metadata=ada.md)
        await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=1), metadata=eve.md)
        before = await snapshot(env)
        await refused(
            env.lobby.AcceptChallenge(one(c.challenge_id), metadata=bob.md), REFUSED, "seat_taken"
        )
        assert await snapshot(env) == before
        mine = await env.lobby.ListChallenges(lobby_pb2.ListChallengesRequest(), metadata=bob.md)
        assert [x.status for x in mine.received] == ["pending"]
        assert [e.type for e in await challenge_events(env, ada)] == []

    lobby_env(body)


def test_invitations_expire(lobby_env):
    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        tid = (await env.table(ada, players=2)).table_id
        c = await env.lobby.CreateChallenge(invite(tid, 1, "bob", expires_in_s=60), metadata=ada.md)
        assert c.expires_at_ms - c.created_at_ms == 60_000
        async with env.store.sessions.begin() as s:  # its minute has passed
            await s.execute(
                sa.update(Challenge)
                .where(Challenge.id == c.challenge_id)
                .values(
                    expires_at=datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=1)
                )
            )
        before = await snapshot(env)
        for call, who in (
            (env.lobby.AcceptChallenge, bob),
            (env.lobby.DeclineChallenge, bob),
            (env.lobby.CancelChallenge, ada),
        ):
            await refused(call(one(c.challenge_id), metadata=who.md), REFUSED, "challenge_expired")
        assert await snapshot(env) == before
        mine = await env.lobby.ListChallenges(lobby_pb2.ListChallengesRequest(), metadata=bob.md)
        assert not mine.received
        # an expired invitation no longer blocks a new one
        again = await env.lobby.CreateChallenge(invite(tid, 1, "bob"), metadata=ada.md)
        assert again.status == "pending"

    lobby_env(body)


def test_an_account_refuses_everyone_or_all_but_its_friends(lobby_env):
    async def body(env):
        ada, bob, cy = await env.person("ada"), await env.person("bob"), await env.person("cy")
        tid_ada = (await env.table(ada, players=2)).table_id
        tid_cy = (await env.table(cy, players=2)).table_id
        settings = await env.lobby.GetChallengeSettings(
            lobby_pb2.ChallengeSettingsRequest(), metadata=bob.md
        )
        assert (settings.accept, list(settings.friends)) == ("everyone", [])
        await refused(
            env.lobby.SetChallengeSettings(
                lobby_pb2.ChallengeSettings(accept="some"), metadata=bob.md
            ),
            INVALID,
            "bad_accept",
        )
        await refused(
            env.lobby.SetChallengeSettings(
                lobby_pb2.ChallengeSettings(accept="friends", friends=["ada", "ghost"]),
                metadata=bob.md,
            ),
            NOT_FOUND,
            "unknown_account",
        )
        unchanged = await env.lobby.GetChallengeSettings(
            lobby_pb2.ChallengeSettingsRequest(), metadata=bob.md
        )
        assert unchanged == settings
        await env.lobby.SetChallengeSettings(
            lobby_pb2.ChallengeSettings(accept="nobody"), metadata=bob.md
        )
        before = await snapshot(env)
        await refused(
            env.lobby.CreateChallenge(invite(tid_ada, 1, "bob"), metadata=ada.md),
            REFUSED,
            "invitations_refused",
        )
        assert await snapshot(env) == before
        now = await env.lobby.SetChallengeSettings(
            lobby_pb2.ChallengeSettings(accept="friends", friends=["ADA"]), metadata=bob.md
        )
        assert (now.accept, list(now.friends)) == ("friends", ["ada"])
        await refused(
            env.lobby.CreateChallenge(invite(tid_cy, 1, "bob"), metadata=cy.md),
            REFUSED,
            "not_a_friend",
        )
        assert await snapshot(env) == before
        c = await env.lobby.CreateChallenge(invite(tid_ada, 1, "bob"), metadata=ada.md)
        assert c.status == "pending"
        assert [e.type for e in await challenge_events(env, bob)] == ["challenge"]

    lobby_env(body)


def test_an_open_challenge_is_taken_by_anyone_signed_in_once(lobby_env):
    async def body(env):
        ada, bob, eve = await env.person("ada"), await env.person("bob"), await env.person("eve")
        bot = await env.bot_account(eve, "evebot")
        tid = (await env.table(ada, players=3)).table_id
        link = await env.lobby.CreateChallenge(invite(tid, 2), metadata=ada.md)
        assert link.invitee == "" and link.status == "pending" and len(link.challenge_id) >= 20
        before = await snapshot(env)
        await refused(
            env.lobby.AcceptChallenge(one(link.challenge_id)), grpc.StatusCode.UNAUTHENTICATED
        )
        await refused(
            env.lobby.DeclineChallenge(one(link.challenge_id), metadata=bob.md),
            DENIED,
            "not_invitee",
        )
        assert await snapshot(env) == before
        taken = await env.lobby.AcceptChallenge(one(link.challenge_id), metadata=bot.md)
        assert (taken.status, taken.taken_by) == ("accepted", "evebot")
        seat = (await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid))).seats[2]
        assert seat.name == "evebot" and seat.bot_account
        await refused(
            env.lobby.AcceptChallenge(one(link.challenge_id), metadata=bob.md),
            REFUSED,
            "challenge_accepted",
        )
        assert [(e.type, e.data["by"]) for e in await challenge_events(env, ada)] == [
            ("challengeAccepted", "evebot")
        ]
        for other in (bob, eve, bot):
            assert await challenge_events(env, other) == []

    lobby_env(body)


def test_of_an_accept_and_a_cancel_at_once_exactly_one_wins(pg_lobby_env):
    async def body(env):
        import asyncio

        ada, bob = await env.person("ada"), await env.person("bob")
        tid = (await env.table(ada, players=2)).table_id
        for _ in range(5):
            c = await env.lobby.CreateChallenge(invite(tid, 1, "bob"), metadata=ada.md)
            results = await asyncio.gather(
                env.lobby.AcceptChallenge(one(c.challenge_id), metadata=bob.md),
                env.lobby.CancelChallenge(one(c.challenge_id), metadata=ada.md),
                return_exceptions=True,
            )
            won = [r for r in results if not isinstance(r, Exception)]
            assert len(won) == 1, results
            seats = (await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid))).seats
            assert (seats[1].name == "bob") == (won[0].status == "accepted")
            if seats[1].name == "bob":
                await env.lobby.LeaveSeat(
                    lobby_pb2.SeatRequest(table_id=tid, seat=1), metadata=bob.md
                )

    pg_lobby_env(body)
