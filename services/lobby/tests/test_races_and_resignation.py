"""Races on one table (exactly one of concurrent joins or starts wins, on
PostgreSQL and SQLite), resignations through the lobby (a title that ends
the game and one that continues it), and the rules services' internal
credentials."""

from __future__ import annotations

import asyncio

import grpc

from roundhouse.v1 import game_pb2, lobby_pb2
from services.lobby.tests.harness import INTERNAL_SECRET, refused
from services.platform.auth import internal
from services.platform.gamelog import GameLog
from services.platform.grpc_errors import error_reason
from services.platform.hotstore import KeySpace

REFUSED = grpc.StatusCode.FAILED_PRECONDITION
DENIED = grpc.StatusCode.PERMISSION_DENIED


async def outcomes(calls) -> tuple[list, list[str]]:
    """(answers, refusal reasons) of concurrent calls."""
    answers, reasons = [], []
    for result in await asyncio.gather(*calls, return_exceptions=True):
        if isinstance(result, grpc.aio.AioRpcError):
            reasons.append(error_reason(result))
        elif isinstance(result, BaseException):
            raise result
        else:
            answers.append(result)
    return answers, reasons


def test_of_concurrent_joins_of_one_seat_exactly_one_wins(lobby_env):
    async def body(env):
        owner = await env.person("owner")
        people = [await env.person(f"p{i}") for i in range(8)]
        table = await env.table(owner, 2)
        join = lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=0)
        answers, reasons = await outcomes(env.lobby.JoinSeat(join, metadata=p.md) for p in people)
        assert len(answers) == 1 and reasons == ["seat_taken"] * 7
        table = await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table.table_id))
        assert table.seats[0].account_id == answers[0].seats[0].account_id
        rows = (await env.rows())[1]
        assert sum(1 for r in rows if r[2] == "player") == 1

    lobby_env(body)


def test_of_concurrent_starts_exactly_one_wins_and_one_game_exists(lobby_env):
    async def body(env):
        ada = await env.person("ada")
        table = await env.table(ada, 3)
        tid = table.table_id
        for seat in range(3):
            await env.lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=tid, seat=seat, policy="random"), metadata=ada.md
            )
        start = lobby_pb2.StartTableRequest(table_id=tid)
        answers, reasons = await outcomes(
            env.lobby.StartTable(start, metadata=ada.md) for _ in range(6)
        )
        assert len(answers) == 1 and reasons == ["not_open"] * 5
        assert answers[0].status == lobby_pb2.TABLE_STATUS_RUNNING
        prefix = env.settings.key_prefix
        games = [k async for k in env.redis.scan_iter(f"{prefix}:game:*:meta")]
        assert games == [KeySpace(prefix).meta(answers[0].game_id)]
        created = [
            f
            for _, f in await GameLog(env.redis, prefix).lifecycle_entries()
            if f["type"] == "game_created"
        ]
        assert len(created) == 1

    lobby_env(body)


async def _two_player_table(env, title="railbarons"):
    ada, bob = await env.person("ada"), await env.person("bob")
    table = await env.table(ada, 2, title=title)
    tid = table.table_id
    await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=ada.md)
    await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=1), metadata=bob.md)
    table = await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
    return table, ada, bob


def test_a_resignation_that_ends_the_game_ranks_the_seat_last(lobby_env):
    async def body(env):
        table, ada, bob = await _two_player_table(env)
        tid = table.table_id
        resign = lobby_pb2.SeatRequest(table_id=tid, seat=0)
        before = await env.rows()
        await refused(env.lobby.Resign(resign, metadata=bob.md), DENIED, "not_your_seat")
        assert await env.rows() == before
        table = await env.lobby.Resign(resign, metadata=ada.md)
        assert table.status == lobby_pb2.TABLE_STATUS_FINISHED
        assert table.seats[0].resigned and not table.seats[1].resigned
        assert list(table.result.ranks) == [2, 1] and table.result.end_reason == "resignation"
        result = await env.lobby.GetTableResult(lobby_pb2.GetTableRequest(table_id=tid))
        assert [(s.name, s.rank) for s in result.standings] == [("bob", 1), ("ada", 2)]
        updates = [u async for u in env.lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=tid))]
        assert [(u.seat, u.action_json, u.finished) for u in updates] == [
            (0, '{"type":"resign"}', True)
        ]
        await refused(env.lobby.Resign(resign, metadata=ada.md), REFUSED, "not_running")
        await refused(
            env.lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=1), metadata=bob.md),
            REFUSED,
            "not_running",
        )
        assert await env.hot.running() == []

    lobby_env(body, resignation={"railbarons": "end"})


def test_a_resignation_that_continues_hands_the_seat_to_a_hosted_bot(lobby_env):
    async def body(env):
        table, ada, bob = await _two_player_table(env)
        tid = table.table_id
        table = await env.lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=1), metadata=bob.md)
        assert table.status == lobby_pb2.TABLE_STATUS_RUNNING
        assert (table.seats[1].resigned, table.seats[1].policy) == (True, "random")
        assert (await env.hot.get(tid)).bot_seats() == {1: "random"}  # the dispatcher plays it
        view = await env.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=tid))
        assert list(view.resigned_seats) == [1] and not view.finished
        await refused(
            env.lobby.SubmitMove(
                lobby_pb2.SubmitMoveRequest(table_id=tid, seat=1, action_json="{}"),
                metadata=bob.md,
            ),
            REFUSED,
            "seat_resigned",
        )
        # ada still plays her seat
        mine = await env.lobby.GetSeatView(
            lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md
        )
        assert mine.version == 1  # the resignation is an entry of the log

    lobby_env(body, resignation={"railbarons": "continue"})


def test_a_refused_resignation_hands_the_seat_back(lobby_env):
    """The rules service refuses a resignation it cannot record (the game is
    over there): the lobby's seat is as before."""

    async def body(env):
        table, ada, _ = await _two_player_table(env)
        rules = env.rules["railbarons"]
        md = internal(INTERNAL_SECRET, "tests")
        # the game ends behind the lobby's back (seat 1 resigns on the rules service directly)
        await rules.Resign(game_pb2.ResignRequest(game_id=table.game_id, seat=1), metadata=md)
        before = (await env.rows())[1]
        await refused(
            env.lobby.Resign(
                lobby_pb2.SeatRequest(table_id=table.table_id, seat=0), metadata=ada.md
            ),
            REFUSED,
            "game_over",
        )
        assert (await env.rows())[1] == before

    lobby_env(body, resignation={"railbarons": "end"}, results=False)


def test_rules_calls_need_the_internal_secret(lobby_env):
    """Reads (a seat's hidden view) as much as writes: no credentials or a wrong secret is
    UNAUTHENTICATED and changes nothing; the internal secret works (issue 33, item 5)."""

    async def body(env):
        bare = env.bare_rules["railbarons"]
        prefix = env.settings.key_prefix
        create = game_pb2.CreateGameRequest(title="railbarons", num_players=2, game_id="g-auth")
        wrong = internal("not-the-secret", "tests")
        for md, reason in (((), "token_missing"), (wrong, "token_invalid")):
            await refused(
                bare.CreateGame(create, metadata=md), grpc.StatusCode.UNAUTHENTICATED, reason
            )
        assert await env.redis.get(KeySpace(prefix).meta("g-auth")) is None
        await bare.CreateGame(create, metadata=internal(INTERNAL_SECRET, "tests"))
        hidden = game_pb2.GetViewRequest(game_id="g-auth", seat=0)
        for md, reason in (((), "token_missing"), (wrong, "token_invalid")):
            await refused(
                bare.GetView(hidden, metadata=md), grpc.StatusCode.UNAUTHENTICATED, reason
            )
            await refused(
                bare.ListLegalActions(
                    game_pb2.ListLegalActionsRequest(game_id="g-auth", seat=0), metadata=md
                ),
                grpc.StatusCode.UNAUTHENTICATED,
                reason,
            )
        await refused(
            bare.Resign(game_pb2.ResignRequest(game_id="g-auth", seat=0)),
            grpc.StatusCode.UNAUTHENTICATED,
            "token_missing",
        )
        assert await env.redis.xlen(KeySpace(prefix).log("g-auth")) == 0
        # the harness's own stubs carry the secret, as the lobby's channels do
        view = await env.rules["railbarons"].GetView(hidden)
        assert view.info.game_id == "g-auth" and view.version == 0

    lobby_env(body)


def test_a_start_whose_game_cannot_be_created_puts_the_table_back(lobby_env):
    async def body(env):
        ada = await env.person("ada")
        env.settings.rules_addresses["transsib"] = "127.0.0.1:1"  # nobody listens there
        table = await env.table(ada, 2, title="transsib")
        tid = table.table_id
        for seat in (0, 1):
            await env.lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=tid, seat=seat, policy="random"), metadata=ada.md
            )
        before = (await env.rows())[1]
        await refused(
            env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md),
            grpc.StatusCode.UNAVAILABLE,
            "rules_unavailable",
        )
        table = await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=tid))
        assert table.status == lobby_pb2.TABLE_STATUS_OPEN and not table.game_id
        assert (await env.rows())[1] == before
        assert await env.hot.get(tid) is None and await env.hot.running() == []

    lobby_env(body)


def test_a_start_left_half_done_by_a_dead_lobby_can_be_retried(lobby_env):
    """A table stuck in ``starting`` (its lobby died mid-start) is refused
    ``not_open`` for a minute, then a new start completes it."""
    from datetime import timedelta

    import sqlalchemy as sa

    from services.lobby.models import Table
    from services.platform.db import utcnow

    async def body(env):
        ada = await env.person("ada")
        table = await env.table(ada, 2)
        tid = table.table_id
        for seat in (0, 1):
            await env.lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=tid, seat=seat, policy="random"), metadata=ada.md
            )

        async def stuck(since):
            async with env.store.sessions.begin() as s:
                await s.execute(
                    sa.update(Table)
                    .where(Table.id == tid)
                    .values(status="starting", start_attempt_at=since, game_id=f"railbarons-{tid}")
                )

        start = lobby_pb2.StartTableRequest(table_id=tid)
        await stuck(utcnow())
        await refused(env.lobby.StartTable(start, metadata=ada.md), REFUSED, "not_open")
        await stuck(utcnow() - timedelta(minutes=2))
        table = await env.lobby.StartTable(start, metadata=ada.md)
        assert table.status == lobby_pb2.TABLE_STATUS_RUNNING

    lobby_env(body)
