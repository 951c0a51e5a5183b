"""Rematch (issue 32): after a finished game a seated player offers the same table again;
it starts, seats rotated by one, with the same title, options and clock, once every person
seated accepted (bots at once). Refusals change nothing; events reach the table's persons only."""

from __future__ import annotations

import grpc
import sqlalchemy as sa

from roundhouse.v1 import lobby_pb2
from services.lobby.rematch import Rematch
from services.lobby.tests.harness import refused

DENIED = grpc.StatusCode.PERMISSION_DENIED
REFUSED = grpc.StatusCode.FAILED_PRECONDITION
REMATCH_TYPES = {"rematchOffer", "rematchDeclined", "rematchStarted"}
CLOCK = lobby_pb2.TimeControl(kind="live", base_s=900, increment_s=5)


async def snapshot(env) -> tuple:
    async with env.store.sessions() as s:
        rows = (await s.execute(sa.select(Rematch))).scalars().all()
        offers = [(r.table_id, r.status, r.accepted_json, r.new_table_id) for r in rows]
    return await env.rows(), offers


async def rematch_events(env, caller) -> list:
    return [
        (e.type, e.data)
        for e in await env.servicer.events.after(caller.account.id, "0-0")
        if e.type in REMATCH_TYPES
    ]


def test_a_rematch_starts_when_every_person_accepted(lobby_env):
    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        eve = await env.person("eve")
        table = await env.table(ada, 3, time_control=CLOCK)
        tid = table.table_id
        for seat, who in ((0, ada), (1, bob)):
            await env.lobby.JoinSeat(
                lobby_pb2.JoinSeatRequest(table_id=tid, seat=seat), metadata=who.md
            )
        await env.lobby.AddBot(
            lobby_pb2.AddBotRequest(table_id=tid, seat=2, policy="greedy"), metadata=ada.md
        )
        await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
        old = await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid))
        on_tid = lobby_pb2.GetTableRequest(table_id=tid)
        before = await snapshot(env)
        await refused(env.lobby.OfferRematch(on_tid, metadata=bob.md), REFUSED, "not_finished")
        assert await snapshot(env) == before
        await env.lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=1), metadata=bob.md)
        before = await snapshot(env)
        await refused(env.lobby.OfferRematch(on_tid, metadata=eve.md), DENIED, "not_seated")
        await refused(env.lobby.GetRematch(on_tid), grpc.StatusCode.NOT_FOUND, "no_rematch_offer")
        answer = lobby_pb2.AnswerRematchRequest(table_id=tid, accept=True)
        await refused(
            env.lobby.AnswerRematch(answer, metadata=ada.md),
            grpc.StatusCode.NOT_FOUND,
            "no_rematch_offer",
        )
        await refused(env.lobby.AnswerRematch(answer, metadata=eve.md), DENIED, "not_seated")
        assert await snapshot(env) == before
        offer = await env.lobby.OfferRematch(on_tid, metadata=bob.md)
        assert (offer.status, offer.offered_by) == ("pending", "bob")
        assert list(offer.accepted) == ["bob", "greedy-bot"] and list(offer.waiting) == ["ada"]
        assert offer.new_table_id == ""
        assert await rematch_events(env, ada) == [("rematchOffer", {"offered_by": "bob"})]
        assert await rematch_events(env, bob) == [] and await rematch_events(env, eve) == []
        # bob offering again is his acceptance again: nothing changes
        assert await env.lobby.OfferRematch(on_tid, metadata=bob.md) == offer
        done = await env.lobby.AnswerRematch(answer, metadata=ada.md)
        assert done.status == "started" and done.new_table_id and not done.waiting
        new = await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=done.new_table_id))
        assert new.status == lobby_pb2.TABLE_STATUS_RUNNING
        assert (new.title, new.num_players, new.options_json) == (
            old.title,
            old.num_players,
            old.options_json,
        )
        assert new.time_control == old.time_control and new.owner == "ada"
        assert [s.name for s in new.seats] == ["greedy-bot", "ada", "bob"]  # rotated by one
        assert new.seats[0].policy == "greedy" and not new.seats[2].resigned
        assert new.seats[2].kind == lobby_pb2.SEAT_KIND_PLAYER and not new.seats[2].policy
        started = ("rematchStarted", {"new_table_id": done.new_table_id})
        assert (await rematch_events(env, ada))[-1] == started
        assert await rematch_events(env, bob) == [started]
        assert await rematch_events(env, eve) == []
        assert await env.lobby.GetRematch(on_tid) == done
        # answered for good: a decline now is refused and changes nothing
        before = await snapshot(env)
        no = lobby_pb2.AnswerRematchRequest(table_id=tid, accept=False)
        await refused(env.lobby.AnswerRematch(no, metadata=bob.md), REFUSED, "rematch_started")
        assert await snapshot(env) == before

    lobby_env(body, resignation={"railbarons": "end"})


def test_a_declined_rematch_never_starts(lobby_env):
    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        table = await env.table(ada, 2)
        tid = table.table_id
        for seat, who in ((0, ada), (1, bob)):
            await env.lobby.JoinSeat(
                lobby_pb2.JoinSeatRequest(table_id=tid, seat=seat), metadata=who.md
            )
        await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
        await env.lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md)
        tables_before = len((await env.rows())[0])
        await env.lobby.OfferRematch(lobby_pb2.GetTableRequest(table_id=tid), metadata=ada.md)
        no = await env.lobby.AnswerRematch(
            lobby_pb2.AnswerRematchRequest(table_id=tid, accept=False), metadata=bob.md
        )
        assert (no.status, no.declined_by, no.new_table_id) == ("declined", "bob", "")
        assert await rematch_events(env, ada) == [("rematchDeclined", {"by": "bob"})]
        before = await snapshot(env)
        yes = lobby_pb2.AnswerRematchRequest(table_id=tid, accept=True)
        await refused(env.lobby.AnswerRematch(yes, metadata=bob.md), REFUSED, "rematch_declined")
        await refused(
            env.lobby.OfferRematch(lobby_pb2.GetTableRequest(table_id=tid), metadata=ada.md),
            REFUSED,
            "rematch_declined",
        )
        assert await snapshot(env) == before
        assert len(before[0][0]) == tables_before  # no new table

    lobby_env(body, resignation={"railbarons": "end"})


async def _finished(env, names, **kw):
    people = [await env.person(n) for n in names]
    table = await env.table(people[0], len(people), **kw)
    tid = table.table_id
    for seat, who in enumerate(people):
        await env.lobby.JoinSeat(
            lobby_pb2.JoinSeatRequest(table_id=tid, seat=seat), metadata=who.md
        )
    await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=people[0].md)
    await env.lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=people[0].md)
    return tid, people


def test_a_tournament_table_is_not_played_again(lobby_env):
    async def body(env):
        tid, (ada, _bob) = await _finished(env, ["ada", "bob"], tournament_id="cup-1")
        before = await snapshot(env)
        await refused(
            env.lobby.OfferRematch(lobby_pb2.GetTableRequest(table_id=tid), metadata=ada.md),
            REFUSED,
            "no_rematch",
        )
        assert await snapshot(env) == before

    lobby_env(body, resignation={"railbarons": "end"})


def test_of_two_last_acceptances_at_once_one_starts_the_one_new_table(pg_lobby_env):
    async def body(env):
        import asyncio

        tid, (ada, bob, cy) = await _finished(env, ["ada", "bob", "cy"])
        await env.lobby.OfferRematch(lobby_pb2.GetTableRequest(table_id=tid), metadata=ada.md)
        tables_before = len((await env.rows())[0])
        yes = lobby_pb2.AnswerRematchRequest(table_id=tid, accept=True)
        answers = await asyncio.gather(
            env.lobby.AnswerRematch(yes, metadata=bob.md),
            env.lobby.AnswerRematch(yes, metadata=cy.md),
        )
        # the row lock orders them: the first leaves one person to answer, the second starts
        assert sorted(a.status for a in answers) == ["pending", "started"]
        assert len((await env.rows())[0]) == tables_before + 1  # one new table, not two
        final = await env.lobby.GetRematch(lobby_pb2.GetTableRequest(table_id=tid))
        assert final.status == "started" and sorted(final.accepted) == ["ada", "bob", "cy"]
        new = await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=final.new_table_id))
        assert [s.name for s in new.seats] == ["cy", "ada", "bob"]

    pg_lobby_env(body, resignation={"railbarons": "end"})
