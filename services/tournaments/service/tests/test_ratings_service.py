"""Ratings in the store (PostgreSQL and SQLite): the rating consumer rates a finished
lobby game once however often it is delivered, skips games of an unrated tournament and
games without accounts, keeps bots flagged and weights seats; the leaderboard and an
account's ratings over gRPC; round 1 seeded by the stored ratings; events on Redis."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest
import redis.asyncio as aioredis

from roundhouse.v1 import tournaments_pb2 as pb
from services.lobby.events import AccountEvents
from services.lobby.models import FINISHED
from services.lobby.store import SeatRecord, TableRecord, TableStore
from services.platform.db import session_factory
from services.tournaments.ratings import DEFAULT_MODEL
from services.tournaments.service.events import AccountEventLog, RedisAccountEvents
from services.tournaments.service.rating_store import GameRater
from services.tournaments.service.tests.harness import reason, running_tournaments


async def _lobby_game(env, owner, seats, game_id: str) -> None:
    """A finished lobby table playing ``game_id`` with ``seats`` (Caller, is_bot)."""
    store = TableStore(session_factory(env.engine))
    await store.create(
        TableRecord(
            table_id=game_id[-12:],
            title="railbarons",
            num_players=len(seats),
            options_json="",
            seed=None,
            seats=[SeatRecord("player", c.account.id, c.name, bot) for c, bot in seats],
            owner_id=owner.account.id,
            status=FINISHED,
            game_id=game_id,
        )
    )


def _finished(game_id: str, ranks, **extra) -> dict[str, str]:
    result = {"scores": [10 * (5 - r) for r in ranks], "ranks": ranks, "end_reason": "test"}
    return {"type": "game_finished", "game_id": game_id, "result": json.dumps(result), **extra}


def test_finished_games_are_rated_once_with_bots_flagged(store_url):
    async def body():
        async with running_tournaments(store_url) as env:
            org = await env.person("org")
            a, b = await env.person("ann", ("play",)), await env.person("bob", ("play",))
            bot = await env.bot(org, "botty")
            rater = GameRater(
                env.ratings, TableStore(session_factory(env.engine)), env.director.store
            )
            await _lobby_game(
                env, org, [(a, False), (b, False), (bot, True)], "railbarons-g1aaaaaaaaaa"
            )
            fields = _finished("railbarons-g1aaaaaaaaaa", [1, 2, 2])
            await rater.handle(fields)
            await rater.handle(fields)  # delivered again: rated once
            board = await env.stub.GetLeaderboard(pb.LeaderboardRequest(title="railbarons"))
            rows = {r.rating.username: r for r in board.rows}
            assert [r.rating.username for r in board.rows][0] == "ann"
            assert {n: (r.position, r.rating.games, r.rating.bot) for n, r in rows.items()} == {
                "ann": (1, 1, False),
                "bob": (2, 1, False),  # bob and the bot tied: they share position 2
                "botty": (2, 1, True),
            }
            assert all(r.rating.provisional for r in board.rows)
            humans = await env.stub.GetLeaderboard(
                pb.LeaderboardRequest(title="railbarons", exclude_bots=True)
            )
            assert [r.rating.username for r in humans.rows] == ["ann", "bob"]
            # a seat weight of 0 (a seat a bot took over, the clocks issue) changes nothing
            await _lobby_game(env, org, [(a, False), (b, False)], "railbarons-g2bbbbbbbbbb")
            before = await env.ratings.ratings("railbarons", [a.account.id, b.account.id])
            await rater.handle(
                _finished("railbarons-g2bbbbbbbbbb", [2, 1], seat_weights=json.dumps([0.0, 1.0]))
            )
            after = await env.ratings.ratings("railbarons", [a.account.id, b.account.id])
            assert after[a.account.id].mu == pytest.approx(before[a.account.id].mu)
            assert after[b.account.id].mu > before[b.account.id].mu
            # a game with no lobby table (imported) is not rated
            await rater.handle(_finished("e1894-imported", [1, 2]))
            mine = await env.stub.GetAccountRatings(pb.AccountRatingsRequest(username="ann"))
            assert [(r.title, r.games) for r in mine.ratings] == [("railbarons", 2)]
            assert [h.game_id for h in mine.history] == [
                "railbarons-g1aaaaaaaaaa",
                "railbarons-g2bbbbbbbbbb",
            ]
            assert mine.history[1].weight == 0.0
            assert mine.ratings[0].ordinal == pytest.approx(
                mine.ratings[0].mu - 3 * mine.ratings[0].sigma
            )
            assert mine.ratings[0].provisional == (
                mine.ratings[0].sigma >= DEFAULT_MODEL.provisional_sigma
            )
            for call, request, why in (
                (
                    env.stub.GetAccountRatings,
                    pb.AccountRatingsRequest(username="nobody"),
                    "unknown_account",
                ),
                (env.stub.GetLeaderboard, pb.LeaderboardRequest(title="chess"), "unknown_title"),
                (
                    env.stub.GetLeaderboard,
                    pb.LeaderboardRequest(title="railbarons", limit=5000),
                    "bad_page_size",
                ),
            ):
                with pytest.raises(grpc.RpcError) as err:
                    await call(request)
                assert reason(err.value)[1] == why

    asyncio.run(body())


def test_games_of_an_unrated_tournament_are_not_rated_and_ratings_seed_round_1(store_url):
    async def body():
        async with running_tournaments(store_url) as env:
            org = await env.person("org")
            people = [await env.person(f"p{i}", ("play",)) for i in range(8)]
            rater = GameRater(
                env.ratings, TableStore(session_factory(env.engine)), env.director.store
            )
            # p0..p3 are strong: each won a rated game against p4..p7
            for k in range(4):
                gid = f"railbarons-s{k}aaaaaaaaaa"
                await _lobby_game(env, org, [(people[k], False), (people[4 + k], False)], gid)
                for _ in range(1):
                    await rater.handle(_finished(gid, [1, 2]))
            t = await env.create(org, rated=False, seeding="balanced", rounds=1)
            t = await env.enter(t, people)
            t = await env.stub.StartTournament(
                pb.TournamentRequest(tournament_id=t.tournament_id), metadata=org.md
            )
            # balanced seeding by predict_rank: the snake deals the four rated winners two
            # to each table (registration order would put them all at one)
            strong = {p.name for p in people[:4]}
            tables = [[s.username for s in x.seats] for x in t.rounds[0].tables]
            assert [sum(n in strong for n in names) for names in tables] == [2, 2]
            # the tournament's tables are lobby-less here: rate one as if it had been played
            table = t.rounds[0].tables[0]
            await _lobby_game(
                env,
                org,
                [
                    (next(p for p in people if p.account.id == s.account_id), False)
                    for s in table.seats
                ],
                table.game_id,
            )
            from services.tournaments.service.store import TournamentStore

            store: TournamentStore = env.director.store
            async with store.sessions.begin() as s:
                from sqlalchemy import update

                from services.tournaments.service.models import TournamentTable

                await s.execute(
                    update(TournamentTable)
                    .where(TournamentTable.game_id == table.game_id)
                    .values(lobby_table_id=table.game_id[-12:])
                )
            before = await env.ratings.ratings("railbarons", [p.account.id for p in people])
            await rater.handle(_finished(table.game_id, [1, 2, 3, 4]))
            assert await env.ratings.ratings("railbarons", [p.account.id for p in people]) == before

    asyncio.run(body())


def test_events_go_to_each_accounts_redis_stream(redis_url, key_prefix):
    async def body():
        client = aioredis.from_url(redis_url, decode_responses=True)
        try:
            events = RedisAccountEvents(client, key_prefix)
            await events.publish(["a1", "a2"], {"type": "round_started", "round": "1"})
            for account in ("a1", "a2"):
                entries = await client.xrange(events.key(account))
                assert [e for _, e in entries] == [{"type": "round_started", "round": "1"}]
            # the account event log of the lobby (Lobby.StreamEvents, the gateway's stream)
            log = AccountEvents(client, key_prefix)
            published = AccountEventLog(log)
            event = {
                "type": "table_finished",
                "tournament_id": "t1",
                "round": "2",
                "table": "3",
                "table_id": "abc",
                "ranks": "[1, 2, 3]",
            }
            await published.publish(["a1"], event)
            await published.publish(["a1"], event)  # a result handled twice: told once
            (got,) = await log.after("a1", "0-0")
            assert (got.type, got.table_id) == ("tableFinished", "abc")
            assert got.data["round"] == "2" and got.data["ranks"] == "[1, 2, 3]"
        finally:
            await client.aclose()

    asyncio.run(body())
