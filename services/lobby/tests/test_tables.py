"""The lobby on accounts (services/lobby/server.py), in-process on PostgreSQL
and SQLite: owners, seats bound to accounts, hosted bots, listing, leaving,
aborting, watching before the start; and every refusal leaves the database
and Redis as they were."""

from __future__ import annotations

import asyncio

import grpc

from roundhouse.v1 import lobby_pb2
from services.lobby.tests.harness import refused

DENIED = grpc.StatusCode.PERMISSION_DENIED
REFUSED = grpc.StatusCode.FAILED_PRECONDITION
UNAUTH = grpc.StatusCode.UNAUTHENTICATED
INVALID = grpc.StatusCode.INVALID_ARGUMENT


async def unchanged(env, call, code, reason):
    """``call`` is refused with ``code``/``reason`` and writes nothing."""
    before = (await env.rows(), await env.redis_keys())
    err = await refused(call, code, reason)
    assert (await env.rows(), await env.redis_keys()) == before
    return err


def test_the_creator_owns_the_table_and_only_the_owner_or_an_admin_runs_it(lobby_env):
    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        root = await env.person("root", ("tables:write", "admin"), admin=True)
        table = await env.table(ada, 3)
        tid = table.table_id
        assert (table.owner, table.owner_id) == ("ada", ada.account.id)
        assert table.status == lobby_pb2.TABLE_STATUS_OPEN
        for call in (
            env.lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=tid, seat=1, policy="random"), metadata=bob.md
            ),
            env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=bob.md),
            env.lobby.AbortTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=bob.md),
        ):
            err = await unchanged(env, call, DENIED, "not_owner")
            assert "ada" in err.details()
        # a person without tables:write cannot create or run tables at all
        player = await env.person("cy", ("play",))
        await unchanged(
            env,
            env.lobby.CreateTable(
                lobby_pb2.CreateTableRequest(title="railbarons", num_players=2),
                metadata=player.md,
            ),
            DENIED,
            "scope_missing",
        )
        # the owner and an admin may
        await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=ada.md)
        await env.lobby.AddBot(
            lobby_pb2.AddBotRequest(table_id=tid, seat=1, policy="greedy"), metadata=ada.md
        )
        table = await env.lobby.AddBot(
            lobby_pb2.AddBotRequest(table_id=tid, seat=2, policy="random"), metadata=root.md
        )
        assert [(s.name, s.kind, s.bot_account, s.policy) for s in table.seats] == [
            ("ada", lobby_pb2.SEAT_KIND_PLAYER, False, ""),
            ("greedy-bot", lobby_pb2.SEAT_KIND_BOT, True, "greedy"),
            ("random-bot", lobby_pb2.SEAT_KIND_BOT, True, "random"),
        ]
        table = await env.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=tid), metadata=root.md
        )
        assert table.status == lobby_pb2.TABLE_STATUS_RUNNING and table.game_id
        live = await env.hot.get(tid)
        assert live.bot_seats() == {1: "greedy", 2: "random"}
        assert await env.hot.running() == [tid]

    lobby_env(body)


def test_a_seat_is_bound_to_the_account_and_any_of_its_tokens_holds_it(lobby_env):
    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        table = await env.table(ada, 2)
        tid = table.table_id
        await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=ada.md)
        await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=1), metadata=bob.md)
        table = await env.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md
        )
        phone = await env.token(ada.account, ("play",))  # ada on another client
        me = lobby_pb2.SeatRequest(table_id=tid, seat=0)
        first = await env.lobby.GetSeatView(me, metadata=ada.md)
        again = await env.lobby.GetSeatView(me, metadata=phone.md)
        assert first.view_json == again.view_json
        active = first.active_seats[0]
        mover = ada if active == 0 else bob
        other = bob if active == 0 else ada
        moves = await env.lobby.ListMoves(
            lobby_pb2.SeatRequest(table_id=tid, seat=active), metadata=mover.md
        )
        move = lobby_pb2.SubmitMoveRequest(
            table_id=tid, seat=active, expected_version=0, action_json=moves.actions_json[0]
        )
        await unchanged(env, env.lobby.SubmitMove(move, metadata=other.md), DENIED, "not_your_seat")
        await unchanged(env, env.lobby.SubmitMove(move), UNAUTH, "token_missing")
        await unchanged(
            env,
            env.lobby.SubmitMove(move, metadata=(("authorization", "Bearer rh_" + "x" * 40),)),
            UNAUTH,
            "token_invalid",
        )
        no_play = await env.token(mover.account, ("tables:write",))
        await unchanged(
            env, env.lobby.SubmitMove(move, metadata=no_play.md), DENIED, "scope_missing"
        )
        answer = await env.lobby.SubmitMove(move, metadata=mover.md)
        assert answer.version == 1
        # spectators need no token; a seat's view does
        spectator = await env.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=tid))
        assert spectator.version == 1
        await refused(env.lobby.GetSeatView(me), UNAUTH, "token_missing")
        # the lobby passes the labels and the seat summaries through
        assert len(moves.labels) == len(moves.actions_json) and all(moves.labels)
        assert len(first.seat_summaries) == 2 and first.seat_summaries[0].startswith("Seat 0: $")
        watch = env.lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=tid), timeout=20)
        update = await watch.read()
        watch.cancel()
        assert (update.version, update.label) == (1, moves.labels[0])

    lobby_env(body)


def test_expired_and_revoked_tokens_are_refused_on_every_write(lobby_env):
    async def body(env):
        ada = await env.person("ada")
        table = await env.table(ada, 2)
        tid = table.table_id
        expired = await env.token(ada.account, ("play", "tables:write"), lifetime_s=3600)
        revoked = await env.token(ada.account, ("play", "tables:write"))
        await env.expire(expired)
        await env.accounts.revoke(revoked.token_id)
        writes = [
            lambda md: env.lobby.CreateTable(
                lobby_pb2.CreateTableRequest(title="railbarons", num_players=2), metadata=md
            ),
            lambda md: env.lobby.JoinSeat(
                lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=md
            ),
            lambda md: env.lobby.LeaveSeat(
                lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=md
            ),
            lambda md: env.lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=tid, seat=1, policy="random"), metadata=md
            ),
            lambda md: env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=md),
            lambda md: env.lobby.AbortTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=md),
            lambda md: env.lobby.SubmitMove(
                lobby_pb2.SubmitMoveRequest(table_id=tid, seat=0, action_json="{}"), metadata=md
            ),
            lambda md: env.lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=md),
        ]
        for write in writes:
            await unchanged(env, write(expired.md), UNAUTH, "token_expired")
            await unchanged(env, write(revoked.md), UNAUTH, "token_revoked")
            await unchanged(env, write(()), UNAUTH, "token_missing")

    lobby_env(body, cache_seconds=0)


def test_join_leave_and_their_refusals(lobby_env):
    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        table = await env.table(ada, 2)
        tid = table.table_id
        join = lobby_pb2.JoinSeatRequest(table_id=tid, seat=0)
        table = await env.lobby.JoinSeat(join, metadata=ada.md)
        assert (table.seats[0].name, table.seats[0].account_id) == ("ada", ada.account.id)
        await unchanged(env, env.lobby.JoinSeat(join, metadata=bob.md), REFUSED, "seat_taken")
        await unchanged(
            env,
            env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=1), metadata=ada.md),
            REFUSED,
            "already_seated",
        )
        await unchanged(
            env,
            env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=2), metadata=bob.md),
            INVALID,
            "bad_seat",
        )
        await unchanged(
            env,
            env.lobby.LeaveSeat(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=bob.md),
            DENIED,
            "not_your_seat",
        )
        table = await env.lobby.LeaveSeat(
            lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md
        )
        assert table.seats[0].kind == lobby_pb2.SEAT_KIND_EMPTY and not table.seats[0].name
        await env.lobby.JoinSeat(join, metadata=bob.md)  # the seat is free again
        await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=1), metadata=ada.md)
        await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
        await unchanged(
            env,
            env.lobby.LeaveSeat(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=bob.md),
            REFUSED,
            "not_open",
        )
        await unchanged(
            env,
            env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id="nope")),
            grpc.StatusCode.NOT_FOUND,
            "unknown_table",
        )

    lobby_env(body)


def test_add_bot_seats_a_system_account_or_an_owned_hosted_bot_account(lobby_env):
    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        hosted = await env.bot_account(ada, "ada-bot-1", policy="greedy")
        hosted2 = await env.bot_account(ada, "ada-bot-2", policy="random")
        plays_itself = await env.bot_account(ada, "ada-bot-self")
        bobs = await env.bot_account(bob, "bob-bot", policy="random")
        table = await env.table(ada, 4)
        tid = table.table_id

        def add(seat, md=ada.md, **who):
            return env.lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=tid, seat=seat, **who), metadata=md
            )

        await unchanged(env, add(0, bot="bob-bot"), DENIED, "not_bot_owner")
        await unchanged(env, add(0, bot="bob"), REFUSED, "not_a_bot")
        await unchanged(env, add(0, bot="nobody"), grpc.StatusCode.NOT_FOUND, "unknown_account")
        await unchanged(env, add(0, policy="clairvoyant"), INVALID, "unknown_policy")
        await add(0, bot="ada-bot-1")
        await unchanged(env, add(1, bot="ada-bot-1"), REFUSED, "already_seated")
        await add(1, bot="ada-bot-2")
        # a self-playing bot account joins with its own bot:play token, like a person
        table = await env.lobby.JoinSeat(
            lobby_pb2.JoinSeatRequest(table_id=tid, seat=2), metadata=plays_itself.md
        )
        table = await add(3, policy="greedy")
        assert [(s.name, s.kind, s.policy) for s in table.seats] == [
            ("ada-bot-1", lobby_pb2.SEAT_KIND_BOT, "greedy"),
            ("ada-bot-2", lobby_pb2.SEAT_KIND_BOT, "random"),
            ("ada-bot-self", lobby_pb2.SEAT_KIND_PLAYER, ""),
            ("greedy-bot", lobby_pb2.SEAT_KIND_BOT, "greedy"),
        ]
        assert all(s.bot_account for s in table.seats)
        assert hosted.account.id == table.seats[0].account_id
        assert hosted2.account.id == table.seats[1].account_id
        assert bobs.account.id not in {s.account_id for s in table.seats}

    lobby_env(body)


def test_add_bot_seats_every_strength_tier_by_its_system_account(lobby_env):
    async def body(env):
        ada = await env.person("ada")
        tiers = ("random", "greedy", "search-easy", "search-medium", "search-hard")
        tid = (await env.table(ada, 5)).table_id
        for seat, policy in enumerate(tiers):
            table = await env.lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=tid, seat=seat, policy=policy), metadata=ada.md
            )
        assert [(s.name, s.kind, s.policy) for s in table.seats] == [
            (f"{p}-bot", lobby_pb2.SEAT_KIND_BOT, p) for p in tiers
        ]
        start = lobby_pb2.StartTableRequest(table_id=tid)
        live = await env.lobby.StartTable(start, metadata=ada.md)
        assert live.status == lobby_pb2.TABLE_STATUS_RUNNING
        assert (await env.hot.get(tid)).bot_seats() == dict(enumerate(tiers))

    lobby_env(body)


def test_abort_closes_an_open_table_for_good(lobby_env):
    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        table = await env.table(ada, 2)
        tid = table.table_id
        table = await env.lobby.AbortTable(
            lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md
        )
        assert table.status == lobby_pb2.TABLE_STATUS_ABORTED
        await unchanged(
            env,
            env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=bob.md),
            REFUSED,
            "table_aborted",
        )
        await unchanged(
            env,
            env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md),
            REFUSED,
            "table_aborted",
        )
        # a started table cannot be aborted
        other = await env.table(ada, 2)
        for seat in (0, 1):
            await env.lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=other.table_id, seat=seat, policy="random"),
                metadata=ada.md,
            )
        await env.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=other.table_id), metadata=ada.md
        )
        await unchanged(
            env,
            env.lobby.AbortTable(
                lobby_pb2.StartTableRequest(table_id=other.table_id), metadata=ada.md
            ),
            REFUSED,
            "not_open",
        )

    lobby_env(body)


def test_list_tables_filters_and_pages(lobby_env):
    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        made = []
        for i in range(5):
            t = await env.table(ada, 2)
            made.append(t.table_id)
            if i % 2 == 0:
                await env.lobby.JoinSeat(
                    lobby_pb2.JoinSeatRequest(table_id=t.table_id, seat=0), metadata=bob.md
                )
        full = made[4]
        await env.lobby.AddBot(
            lobby_pb2.AddBotRequest(table_id=full, seat=1, policy="random"), metadata=ada.md
        )
        await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=full), metadata=ada.md)
        await env.lobby.AbortTable(lobby_pb2.StartTableRequest(table_id=made[1]), metadata=ada.md)

        async def ids(**kw):
            answer = await env.lobby.ListTables(lobby_pb2.ListTablesRequest(**kw))
            return [t.table_id for t in answer.tables]

        newest_first = list(reversed(made))
        assert await ids() == newest_first
        assert await ids(player="BOB") == [made[4], made[2], made[0]]  # any case
        assert await ids(open_seat=True) == [made[3], made[2], made[0]]
        assert await ids(status=[lobby_pb2.TABLE_STATUS_RUNNING]) == [full]
        assert await ids(
            status=[lobby_pb2.TABLE_STATUS_ABORTED, lobby_pb2.TABLE_STATUS_RUNNING]
        ) == [full, made[1]]
        assert await ids(title="transsib") == []
        assert await ids(player="x' OR '1'='1") == []  # names are data, never SQL
        # pages of two: every table once, in order
        seen, token = [], ""
        while True:
            page = await env.lobby.ListTables(
                lobby_pb2.ListTablesRequest(page_size=2, page_token=token)
            )
            assert len(page.tables) <= 2
            seen += [t.table_id for t in page.tables]
            token = page.next_page_token
            if not token:
                break
        assert seen == newest_first
        await refused(
            env.lobby.ListTables(lobby_pb2.ListTablesRequest(page_size=201)),
            INVALID,
            "bad_page_size",
        )
        await refused(
            env.lobby.ListTables(lobby_pb2.ListTablesRequest(page_token="not-a-token")),
            INVALID,
            "bad_page_token",
        )

    lobby_env(body)


def test_watch_waits_for_the_start_and_an_abort_ends_the_wait(lobby_env, monkeypatch):
    import services.lobby.handlers.watch as watch

    monkeypatch.setattr(watch, "WATCH_ABORT_CHECK_S", 0.5)

    async def body(env):
        ada = await env.person("ada")
        table = await env.table(ada, 2)
        tid = table.table_id
        for seat in (0, 1):
            await env.lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=tid, seat=seat, policy="random"), metadata=ada.md
            )
        watch = env.lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=tid), timeout=20)
        first = asyncio.ensure_future(watch.read())
        await asyncio.sleep(0.6)
        assert not first.done()  # waiting, not failing
        table = await env.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md
        )
        # nobody plays the bots here: move for the first seat through the rules service
        rules = env.rules["railbarons"]
        from roundhouse.v1 import game_pb2
        from services.lobby.tests.harness import INTERNAL_SECRET
        from services.platform.auth import internal

        view = await rules.GetView(game_pb2.GetViewRequest(game_id=table.game_id))
        seat = view.active_seats[0]
        legal = await rules.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id=table.game_id, seat=seat)
        )
        await rules.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=table.game_id,
                seat=seat,
                expected_version=0,
                action_json=legal.actions_json[0],
            ),
            metadata=internal(INTERNAL_SECRET, "tests"),
        )
        update = await asyncio.wait_for(first, 10)
        assert (update.version, update.seat) == (1, seat)
        watch.cancel()

        other = await env.table(ada, 2)
        waiting = env.lobby.WatchTable(
            lobby_pb2.WatchTableRequest(table_id=other.table_id), timeout=20
        )
        pending = asyncio.ensure_future(waiting.read())
        await asyncio.sleep(0.3)
        await env.lobby.AbortTable(
            lobby_pb2.StartTableRequest(table_id=other.table_id), metadata=ada.md
        )
        try:
            await asyncio.wait_for(pending, 10)
        except grpc.aio.AioRpcError as err:
            assert err.code() == REFUSED
            from services.platform.grpc_errors import error_reason

            assert error_reason(err) == "table_aborted"
        else:
            raise AssertionError("the watch of an aborted table should end with table_aborted")
        missing = env.lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id="nope"), timeout=5)
        try:
            await missing.read()
        except grpc.aio.AioRpcError as err:
            assert err.code() == grpc.StatusCode.NOT_FOUND
        else:
            raise AssertionError("unknown table")

    lobby_env(body)


def test_get_table_and_list_tables_answer_every_change_at_once(lobby_env):
    """Both answer from the lobby's kept answers (services/lobby/table_cache.py) when nothing
    changed: a change is in the next answer (also one that moves the table out of a listing),
    and a refused call is refused again."""

    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        tid = (await env.table(ada, 2)).table_id
        get = lobby_pb2.GetTableRequest(table_id=tid)
        listing = lobby_pb2.ListTablesRequest(status=[lobby_pb2.TABLE_STATUS_OPEN])
        for _ in range(2):  # the second from the kept answers
            assert (await env.lobby.GetTable(get)).seats[0].kind == lobby_pb2.SEAT_KIND_EMPTY
            (listed,) = (await env.lobby.ListTables(listing)).tables
            assert listed.seats[0].kind == lobby_pb2.SEAT_KIND_EMPTY
        await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=bob.md)
        got = await env.lobby.GetTable(get)
        assert (got.seats[0].name, got.seats[0].account_id) == ("bob", bob.account.id)
        (listed,) = (await env.lobby.ListTables(listing)).tables
        assert listed.seats[0].name == "bob"
        await refused(
            env.lobby.ListTables(lobby_pb2.ListTablesRequest(page_token="not-a-token")),
            INVALID,
            "bad_page_token",
        )
        await refused(
            env.lobby.ListTables(lobby_pb2.ListTablesRequest(page_token="not-a-token")),
            INVALID,
            "bad_page_token",
        )
        await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=1), metadata=ada.md)
        await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
        assert not (await env.lobby.ListTables(listing)).tables
        assert (await env.lobby.GetTable(get)).status == lobby_pb2.TABLE_STATUS_RUNNING

    lobby_env(body)
