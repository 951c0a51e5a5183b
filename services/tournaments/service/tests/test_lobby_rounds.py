"""Rounds that run by themselves through the real lobby (in-process, real rules service,
real Redis, PostgreSQL and SQLite): tables created with the seats bound to the players'
accounts, games started together, results from the lifecycle stream, the next round
paired when every table finished; the tournament process restarted mid-round (and killed
between two lobby calls) loses nothing and pairs nothing twice; the stall rule; ratings
from every finished game, in the tournament and out of it."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

import pytest
import sqlalchemy as sa

from roundhouse.v1 import lobby_pb2
from roundhouse.v1 import tournaments_pb2 as pb
from services.lobby.models import Table as LobbyTable
from services.lobby.store import TableStore
from services.lobby.tests.harness import INTERNAL_SECRET, running_lobby
from services.platform.consumer import consume
from services.platform.db import create_engine, session_factory, utcnow
from services.platform.gamelog import GameLog
from services.platform.reviews import ReviewStore
from services.tournaments.service.director import Director
from services.tournaments.service.rating_store import GameRater
from services.tournaments.service.server import TournamentResults
from services.tournaments.service.tables import LobbyTables, StartFailed
from services.tournaments.service.tests.harness import running_tournaments


class Crash(BaseException):
    """A process killed between two lobby calls (not an Exception: nothing catches it)."""


class CrashingTables(LobbyTables):
    """The lobby runner of a process killed at its next ``start`` while ``armed``: from
    then on (``dead``) every call dies too, until the test revives it."""

    armed = False
    dead = False

    async def create(self, *args):
        if self.dead:
            raise Crash
        return await super().create(*args)

    async def start(self, table_id, accounts):
        if self.armed or self.dead:
            self.armed, self.dead = False, True
            raise Crash
        return await super().start(table_id, accounts)


async def _wait(predicate, timeout_s: float = 30.0):
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        value = await predicate()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def consumers(lobby, director, store_url, name: str):
    """The tournament process's two lifecycle consumers (results, ratings)."""
    engine = create_engine(store_url)
    tables = TableStore(session_factory(engine))
    from services.tournaments.service.rating_store import RatingStore

    ratings = RatingStore(session_factory(engine))
    stop = asyncio.Event()
    key = GameLog(lobby.redis, lobby.settings.key_prefix).lifecycle_keys
    tasks = [
        asyncio.create_task(
            consume(
                lobby.redis,
                key,
                "tournaments",
                name,
                TournamentResults(director, tables).handle,
                stop=stop,
                block_ms=100,
            )
        ),
        asyncio.create_task(
            consume(
                lobby.redis,
                key,
                "ratings",
                name,
                GameRater(ratings, tables, director.store).handle,
                stop=stop,
                block_ms=100,
            )
        ),
    ]
    try:
        yield ratings
    finally:
        stop.set()
        for t in tasks:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(t, 5)
        await engine.dispose()


async def _resign_first(lobby, callers, tournament, round_number):
    """End every running table of the round: its first seat resigns (Chicago Express
    ends the game then, the resigned seat last)."""
    for x in tournament.rounds[round_number - 1].tables:
        if x.status != "running":
            continue
        caller = callers[x.seats[0].username]
        await lobby.lobby.Resign(
            lobby_pb2.SeatRequest(table_id=x.table_id, seat=0), metadata=caller.md
        )


def test_rounds_run_through_the_lobby_and_survive_restarts(store_url, redis_url, key_prefix):
    async def main():
        async with running_lobby(store_url, redis_url, key_prefix) as lobby:
            runner = CrashingTables(lobby.lobby_address, INTERNAL_SECRET, lobby.accounts)
            async with running_tournaments(store_url, tables=runner) as env:
                organiser = await env.person("org", ("play", "tournament:write", "tables:write"))
                people = [await env.person(f"p{i}", ("play",)) for i in range(8)]
                callers = {c.name: c for c in people}
                t = await env.create(organiser, rounds=2)
                t = await env.enter(t, people)
                tid = t.tournament_id
                t = await env.stub.StartTournament(
                    pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
                )
                assert all(x.status == "running" for x in t.rounds[0].tables)
                for x in t.rounds[0].tables:  # seats bound to the players' accounts
                    table = await lobby.lobby.GetTable(
                        lobby_pb2.GetTableRequest(table_id=x.table_id)
                    )
                    assert [s.account_id for s in table.seats] == [s.account_id for s in x.seats]
                    assert table.status == lobby_pb2.TABLE_STATUS_RUNNING
                    assert table.owner == "org"
                # the process that started the round is gone; a new one consumes the results
                async with consumers(lobby, env.director, store_url, "first"):
                    first = t.rounds[0].tables[0]
                    await lobby.lobby.Resign(
                        lobby_pb2.SeatRequest(table_id=first.table_id, seat=0),
                        metadata=callers[first.seats[0].username].md,
                    )

                    async def first_closed():
                        got = await env.get(tid)
                        return got.rounds[0].tables[0].status == "finished" and got

                    t = await _wait(first_closed)
                    assert t.rounds[0].tables[0].seats[0].rank == 4  # the resigned seat last
                # killed between creating round 2's first lobby table and starting it
                runner.armed = True
                second = t.rounds[0].tables[1]
                await lobby.lobby.Resign(
                    lobby_pb2.SeatRequest(table_id=second.table_id, seat=0),
                    metadata=callers[second.seats[0].username].md,
                )
                result = await _wait(lambda: _result(lobby, second.table_id))
                env.director.limit = asyncio.Semaphore(1)  # one lobby table at a time
                with pytest.raises(Crash):
                    await env.director.on_game_finished(second.game_id, result)
                await asyncio.sleep(0.2)  # the dead process's other task dies too
                runner.dead = False  # a new process
                half = await env.get(tid)
                assert half.current_round == 2
                assert [x.status for x in half.rounds[1].tables] == ["created", "pending"]
                # a new process within the dead one's lease leaves its tables alone
                await Director(env.director.store, runner).reconcile(tid)
                half = await env.get(tid)
                assert [x.status for x in half.rounds[1].tables] == ["created", "pending"]
                # restarted twice over: two new processes reconcile at once, once the dead
                # one's claims on round 2's tables are older than the lease
                later = lambda: utcnow() + timedelta(seconds=120)  # noqa: E731
                b, c = (
                    Director(env.director.store, runner, clock=later, claim_lease_s=60)
                    for _ in range(2)
                )
                await asyncio.gather(b.reconcile(tid), c.reconcile(tid))
                t = await env.get(tid)
                assert len(t.rounds) == 2
                assert [x.status for x in t.rounds[1].tables] == ["running", "running"]
                async with env.director.store.sessions() as s:
                    lobby_tables = await s.scalar(
                        sa.select(sa.func.count()).select_from(LobbyTable)
                    )
                assert lobby_tables == 4  # nothing created twice
                # round 2's results arrive through a third process's consumers
                async with consumers(lobby, env.director, store_url, "third") as ratings:
                    await _resign_first(lobby, callers, t, 2)

                    async def over():
                        got = await env.get(tid)
                        return got.status == pb.TOURNAMENT_STATUS_FINISHED and got

                    t = await _wait(over)
                    assert all(s.games == 2 for s in t.standings)

                    async def rated():
                        board = await ratings.leaderboard("railbarons")
                        return (
                            len(board) == 8 and all(r.rating.games == 2 for r, _ in board) and board
                        )

                    board = await _wait(rated)
                    assert board[0][0].rating.ordinal >= board[-1][0].rating.ordinal
                    # a game outside tournaments is rated too
                    a, b, c = people[:3]
                    table = await lobby.table(organiser, 3)
                    for seat, who in enumerate((a, b, c)):
                        await lobby.lobby.JoinSeat(
                            lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=seat),
                            metadata=who.md,
                        )
                    await lobby.lobby.StartTable(
                        lobby_pb2.StartTableRequest(table_id=table.table_id), metadata=organiser.md
                    )
                    await lobby.lobby.Resign(
                        lobby_pb2.SeatRequest(table_id=table.table_id, seat=2), metadata=c.md
                    )

                    async def rated_again():
                        got = await ratings.ratings("railbarons", [c.account.id])
                        return got and got[c.account.id].games == 3

                    await _wait(rated_again)
                    _, history = await ratings.of_account(c.account.id)
                    assert len(history) == 3 and history[-1][0].rank == 3

    asyncio.run(main())


async def _result(lobby, table_id):
    return (await lobby.store.get(table_id)).result


def test_a_stalled_table_is_void_and_scores_as_a_bye(store_url, redis_url, key_prefix):
    now = [utcnow()]

    async def main():
        async with running_lobby(store_url, redis_url, key_prefix) as lobby:
            runner = LobbyTables(lobby.lobby_address, INTERNAL_SECRET, lobby.accounts)
            async with running_tournaments(store_url, tables=runner, clock=lambda: now[0]) as env:
                organiser = await env.person("org")
                people = [await env.person(f"p{i}", ("play",)) for i in range(4)]
                t = await env.create(organiser, rounds=1, table_timeout_s=600)
                t = await env.enter(t, people)
                tid = t.tournament_id
                await env.stub.StartTournament(
                    pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
                )
                await env.director.reconcile(tid)  # within the limit: nothing happens
                assert (await env.get(tid)).rounds[0].tables[0].status == "running"
                now[0] += timedelta(seconds=601)
                await env.director.reconcile(tid)
                t = await env.get(tid)
                x = t.rounds[0].tables[0]
                assert (x.status, x.void_reason) == ("void", "stalled")
                assert t.status == pb.TOURNAMENT_STATUS_FINISHED
                assert [(s.points, s.games, s.byes) for s in t.standings] == [(3.0, 0, 1)] * 4

    asyncio.run(main())


class SentReviews:
    """The review tasks the lobby sends (instead of a broker): their table ids."""

    def __init__(self) -> None:
        self.tables: list[str] = []

    def __call__(self, broker_url, prefix, args):
        self.tables.append(args[0])


def test_review_games_requests_one_review_of_each_finished_table(store_url, redis_url, key_prefix):
    async def main():
        async with running_lobby(store_url, redis_url, key_prefix) as lobby:
            sent = SentReviews()
            lobby.servicer.send_review = sent
            reviews = ReviewStore(sessions=lobby.store.sessions)
            runner = LobbyTables(lobby.lobby_address, INTERNAL_SECRET, lobby.accounts)
            async with running_tournaments(store_url, tables=runner) as env:
                organiser = await env.person("org", ("play", "tournament:write", "tables:write"))
                people = [await env.person(f"p{i}", ("play",)) for i in range(4)]
                callers = {c.name: c for c in people}
                played = {}
                for review_games in (False, True):
                    t = await env.create(organiser, rounds=1, review_games=review_games)
                    t = await env.enter(t, people)
                    tid = t.tournament_id
                    t = await env.stub.StartTournament(
                        pb.TournamentRequest(tournament_id=tid), metadata=organiser.md
                    )
                    async with consumers(lobby, env.director, store_url, f"r{review_games}"):
                        await _resign_first(lobby, callers, t, 1)

                        async def over(tid=tid):
                            got = await env.get(tid)
                            return got.status == pb.TOURNAMENT_STATUS_FINISHED and got

                        t = await _wait(over)
                    played[review_games] = t.rounds[0].tables[0]
                assert t.settings.review_games
                on, off = played[True], played[False]
                review = await _wait(lambda: reviews.get(on.table_id))
                assert (review.state, review.game_id) == ("queued", on.game_id)
                assert sent.tables == [on.table_id]
                # the tournament without review_games (its consumers stopped): no review
                assert await reviews.get(off.table_id) is None
                # once: the result again closes nothing and asks for nothing
                result = await _result(lobby, on.table_id)
                assert not await env.director.on_game_finished(on.game_id, result)
                # and a repeated request (a retried call) starts nothing at the lobby
                assert await runner.request_review(on.table_id) == "queued"
                assert sent.tables == [on.table_id]
                # a table not finished is refused for good, after no wait
                open_table = await lobby.table(organiser, 3)
                with pytest.raises(StartFailed) as refused:
                    await runner.request_review(open_table.table_id, wait_s=0)
                assert refused.value.permanent and "not_finished" in str(refused.value)
                assert sent.tables == [on.table_id]

    asyncio.run(main())
