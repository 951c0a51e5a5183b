"""Bounded resources per client (issue 13, items 1-3): canonical options,
string and message bounds, quotas and rates, watch shares and the fan-out of
one upstream watch, expiry of tables that never start, Redis out of memory.
Each test failed before its fix."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
from datetime import timedelta

import grpc
import pytest
import redis.exceptions
from prometheus_client import REGISTRY

from roundhouse.v1 import game_pb2, lobby_pb2
from services.cli.launcher import free_port, redis_server_command, wait_for_redis
from services.lobby.sweeper import abort_expired
from services.lobby.tests.harness import refused, running_lobby
from services.platform import bounds
from services.platform.db import utcnow
from services.platform.grpc_errors import error_info
from services.platform.hotstore import KeySpace

TITLE = "railbarons"
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
INVALID = grpc.StatusCode.INVALID_ARGUMENT


@pytest.fixture
def env_on(sqlite_database_url, redis_url, key_prefix):
    """Run ``body(env)`` on an in-process lobby on SQLite with settings overrides."""

    def run(body, redis=None, **overrides):
        async def main():
            async with running_lobby(
                sqlite_database_url, redis or redis_url, key_prefix, **overrides
            ) as env:
                return await body(env)

        return asyncio.run(main())

    return run


async def _running_table(env, owner):
    """A started 2-seat table: ``owner`` at seat 0, a random bot at seat 1."""
    table = await env.table(owner, 2)
    await env.lobby.JoinSeat(
        lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=0), metadata=owner.md
    )
    await env.lobby.AddBot(
        lobby_pb2.AddBotRequest(table_id=table.table_id, seat=1, policy="random"),
        metadata=owner.md,
    )
    return await env.lobby.StartTable(
        lobby_pb2.StartTableRequest(table_id=table.table_id), metadata=owner.md
    )


def test_options_are_stored_and_echoed_in_canonical_form(env_on):
    async def body(env):
        ada = await env.person("ada")
        padded = "{" + " " * 3000 + "}"
        table = await env.table(ada, 2, options_json=padded)
        assert table.options_json == ""  # {} = the defaults
        spaced = '{ "start_incomes" :  "digitisation" ,\n "auction_dial_uses": 2 }'
        table = await env.table(ada, 2, options_json=spaced)
        canonical = '{"auction_dial_uses":2,"start_incomes":"digitisation"}'
        assert table.options_json == canonical
        got = await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table.table_id))
        assert got.options_json == canonical
        async with env.store.sessions() as s:
            from services.lobby.models import Table

            assert (await s.get(Table, table.table_id)).options_json == canonical

    env_on(body)


def test_every_lobby_string_and_message_is_bounded(env_on):
    async def body(env):
        ada = await env.person("ada")
        before = await env.rows()
        err = await refused(
            env.table(ada, 2, options_json="{" + " " * (bounds.OPTIONS_JSON_MAX + 1) + "}"),
            INVALID,
            "too_long",
        )
        assert error_info(err).metadata["field"] == "options_json"
        assert error_info(err).metadata["max_length"] == str(bounds.OPTIONS_JSON_MAX)
        await refused(
            env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id="t" * 65)), INVALID, "too_long"
        )
        # a move is small: 64 KiB of JSON is refused before it is parsed
        err = await refused(
            env.lobby.SubmitMove(
                lobby_pb2.SubmitMoveRequest(table_id="x", seat=0, action_json="[" * 65536),
                metadata=ada.md,
            ),
            INVALID,
            "message_too_large",
        )
        assert int(error_info(err).metadata["max_bytes"]) < 16 * 1024
        await refused(
            env.lobby.ListTables(lobby_pb2.ListTablesRequest(page_token="p" * 300)),
            INVALID,
            "too_long",
        )
        assert await env.rows() == before

    env_on(body)


def test_open_tables_and_their_creation_rate_are_bounded_per_account(env_on):
    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        for _ in range(3):
            await env.table(ada, 2)
        err = await refused(env.table(ada, 2), EXHAUSTED, "too_many_tables")
        assert int(error_info(err).metadata["retry_after_s"]) >= 1
        before = await env.rows()
        await refused(env.table(ada, 2), EXHAUSTED, "too_many_tables")
        assert await env.rows() == before  # a refusal writes nothing
        # aborting one frees a place; the creation rate (4 per hour) is then spent
        tables = (await env.lobby.ListTables(lobby_pb2.ListTablesRequest())).tables
        await env.lobby.AbortTable(
            lobby_pb2.StartTableRequest(table_id=tables[0].table_id), metadata=ada.md
        )
        await env.table(ada, 2)
        await env.lobby.AbortTable(
            lobby_pb2.StartTableRequest(table_id=tables[1].table_id), metadata=ada.md
        )
        err = await refused(env.table(ada, 2), EXHAUSTED, "table_rate")
        assert float(error_info(err).metadata["retry_after_s"]) > 60
        await env.table(bob, 2)  # another account has its own budget

    env_on(body, tables_per_account=3, tables_created_per_account="4/hour")


def test_concurrent_creations_never_pass_the_open_tables_quota(env_on):
    """The count and the insert were two steps: 8 creations at once by one
    account all saw 0 open tables and all passed a quota of 3."""

    async def body(env):
        ada = await env.person("ada")
        answers = await asyncio.gather(
            *(env.table(ada, 2) for _ in range(8)), return_exceptions=True
        )
        made = [a for a in answers if isinstance(a, lobby_pb2.Table)]
        refusals = [a for a in answers if isinstance(a, grpc.aio.AioRpcError)]
        assert len(made) == 3 and len(refusals) == 5
        assert {error_info(err).reason for err in refusals} == {"too_many_tables"}
        assert len((await env.lobby.ListTables(lobby_pb2.ListTablesRequest())).tables) == 3

    env_on(body, tables_per_account=3)


def test_moves_are_rate_limited_per_account(env_on):
    async def body(env):
        ada = await env.person("ada")
        table = await _running_table(env, ada)
        move = lobby_pb2.SubmitMoveRequest(
            table_id=table.table_id, seat=0, expected_version=99, action_json='{"type":"pass"}'
        )
        for _ in range(3):  # refused by the rules (a future version), but counted
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await env.lobby.SubmitMove(move, metadata=ada.md)
            assert caught.value.code() != EXHAUSTED
        err = await refused(env.lobby.SubmitMove(move, metadata=ada.md), EXHAUSTED, "move_rate")
        assert float(error_info(err).metadata["retry_after_s"]) >= 1

    env_on(body, moves_per_account="3/hour")


def _watchers() -> float:
    return REGISTRY.get_sample_value("roundhouse_rules_watchers", {"title": TITLE}) or 0.0


def test_500_watches_from_one_client_do_not_deny_others_and_share_one_upstream(env_on):
    async def body(env):
        ada = await env.person("ada")
        table = await _running_table(env, ada)
        request = lobby_pb2.WatchTableRequest(table_id=table.table_id)
        calls = [env.lobby.WatchTable(request, timeout=30) for _ in range(500)]

        async def first(call):
            try:
                return await call.read()
            except grpc.aio.AioRpcError as err:
                return err

        reads = [asyncio.ensure_future(first(c)) for c in calls]

        async def settled():
            while sum(r.done() for r in reads) < 500 - 8:
                await asyncio.sleep(0.05)

        await asyncio.wait_for(settled(), 60)
        refusals = [r.result() for r in reads if r.done()]
        assert len(refusals) == 500 - 8, len(refusals)
        assert all(
            e.code() == EXHAUSTED and error_info(e).reason == "too_many_watches" for e in refusals
        )
        assert env.servicer.watches.upstreams == 1
        assert _watchers() == 1  # one WatchGame on the rules service for 8 watchers
        # another client (another connection) still watches, on the same upstream
        other = grpc.aio.insecure_channel(  # its own connection (no shared subchannel)
            env.lobby_address, options=[("grpc.use_local_subchannel_pool", 1)]
        )
        from roundhouse.v1 import lobby_pb2_grpc

        theirs = lobby_pb2_grpc.LobbyStub(other).WatchTable(request, timeout=30)
        their_read = asyncio.ensure_future(theirs.read())
        await asyncio.sleep(0.3)
        assert not their_read.done()
        # a move reaches every admitted watcher
        view = await env.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=table.table_id))
        seat = view.active_seats[0]
        rules = env.rules[TITLE]
        legal = await rules.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id=table.game_id, seat=seat)
        )
        from services.lobby.tests.harness import INTERNAL_SECRET
        from services.platform.auth import internal

        await rules.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=table.game_id, seat=seat, action_json=legal.actions_json[0]
            ),
            metadata=internal(INTERNAL_SECRET, "tests"),
        )
        update = await asyncio.wait_for(their_read, 10)
        assert update.version == 1
        admitted = [r for r in reads if r not in [x for x in reads if x.done()]]
        for r in await asyncio.gather(*admitted) if admitted else []:
            assert r.version == 1
        for c in [*calls, theirs]:
            c.cancel()
        await asyncio.sleep(0.3)
        assert env.servicer.watches.open == 0
        assert env.servicer.watches.upstreams == 0
        await other.close()

    env_on(body, watches_per_peer=8)


def test_event_streams_are_bounded_per_account(env_on):
    """StreamEvents had no bound: one account could hold every call slot of a
    lobby with event streams."""

    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        hub = env.servicer.hub

        async def open_stream(who):
            before = hub.readers
            call = env.lobby.StreamEvents(lobby_pb2.StreamEventsRequest(), metadata=who.md)
            while hub.readers == before and not call.done():
                await asyncio.sleep(0.01)
            return call

        held = [await open_stream(ada) for _ in range(2)]
        third = env.lobby.StreamEvents(lobby_pb2.StreamEventsRequest(), metadata=ada.md)
        # (without the bound the third stream stays open: wait_for ends the test then)
        err = await asyncio.wait_for(refused(third.read(), EXHAUSTED, "too_many_streams"), 30)
        assert error_info(err).metadata["limit"] == "2"
        assert int(error_info(err).metadata["retry_after_s"]) >= 1
        other = await open_stream(bob)  # another account has its own share
        assert not other.done()
        held[0].cancel()
        while hub.readers > 2:
            await asyncio.sleep(0.01)
        held.append(await open_stream(ada))  # a slot freed by a stream that ended
        assert not held[-1].done()
        for call in [*held, other]:
            call.cancel()

    env_on(body, event_streams_per_account=2)


def test_open_tables_that_never_start_expire(env_on):
    async def body(env):
        ada = await env.person("ada")
        old = await env.table(ada, 2)
        started = await _running_table(env, ada)
        assert await abort_expired(env.store, 3600, utcnow()) == []
        later = utcnow() + timedelta(seconds=3601)
        assert await abort_expired(env.store, 3600, later) == [old.table_id]
        got = await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=old.table_id))
        assert got.status == lobby_pb2.TABLE_STATUS_ABORTED
        got = await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=started.table_id))
        assert got.status == lobby_pb2.TABLE_STATUS_RUNNING
        await env.table(ada, 2)  # the expired table no longer holds the quota

    env_on(body, tables_per_account=2)


@pytest.fixture
def small_redis():
    """A private Redis at ``maxmemory`` 64 MB with ``noeviction`` (our production policy)."""
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    port, workdir = free_port(), tempfile.mkdtemp(prefix="rh-oom-")
    argv = [*redis_server_command(port, workdir), "--maxmemory", "64mb"]
    argv += ["--maxmemory-policy", "noeviction"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    wait_for_redis(url)
    yield url
    proc.terminate()
    proc.wait(10)
    shutil.rmtree(workdir, ignore_errors=True)


async def _fill(client) -> None:
    """2 MB of junk, then ``maxmemory`` 256 KB under the memory used: Redis
    refuses every write that may grow memory until the junk is deleted (a
    fixed point, where filling to the brim would leave a margin that wobbles)."""
    for i in range(32):
        await client.set(f"junk:{i}", "x" * 65536)
    used = (await client.info("memory"))["used_memory"]
    await client.config_set("maxmemory", used - 256 * 1024)
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        await client.set("junk:last", "x")


def test_redis_out_of_memory_refuses_writes_cleanly_and_resumes(env_on, small_redis):
    async def body(env):
        ada = await env.person("ada")
        table = await _running_table(env, ada)
        view = await env.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=table.table_id))
        legal = await env.lobby.ListMoves(
            lobby_pb2.SeatRequest(table_id=table.table_id, seat=0), metadata=ada.md
        )
        other = await env.table(ada, 2)
        for seat in (0, 1):
            await env.lobby.AddBot(
                lobby_pb2.AddBotRequest(table_id=other.table_id, seat=seat, policy="random"),
                metadata=ada.md,
            )
        await _fill(env.redis)
        length = await env.redis.xlen(KeySpace(env.settings.key_prefix).log(table.game_id))
        if view.active_seats[0] == 0:
            move = lobby_pb2.SubmitMoveRequest(
                table_id=table.table_id,
                seat=0,
                expected_version=view.version,
                action_json=legal.actions_json[0],
            )
            err = await refused(
                env.lobby.SubmitMove(move, metadata=ada.md),
                grpc.StatusCode.UNAVAILABLE,
                "storage_full",
            )
            assert int(error_info(err).metadata["retry_after_s"]) >= 1
        # creating counts in Redis (the creation rate), starting writes the hot index
        before = await env.rows()
        await refused(env.table(ada, 2), grpc.StatusCode.UNAVAILABLE, "storage_full")
        await refused(
            env.lobby.StartTable(
                lobby_pb2.StartTableRequest(table_id=other.table_id), metadata=ada.md
            ),
            grpc.StatusCode.UNAVAILABLE,
            "storage_full",
        )
        assert (await env.rows())[1] == before[1]  # seats unchanged
        got = await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=other.table_id))
        assert got.status == lobby_pb2.TABLE_STATUS_OPEN
        # reads still work
        again = await env.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=table.table_id))
        assert again.version == view.version
        assert await env.redis.xlen(KeySpace(env.settings.key_prefix).log(table.game_id)) == length
        # memory freed: the same calls succeed, nothing restarted
        async for key in env.redis.scan_iter("junk:*"):
            await env.redis.delete(key)
        if view.active_seats[0] == 0:
            answer = await env.lobby.SubmitMove(move, metadata=ada.md)
            assert answer.version == view.version + 1
        started = await env.lobby.StartTable(
            lobby_pb2.StartTableRequest(table_id=other.table_id), metadata=ada.md
        )
        assert started.status == lobby_pb2.TABLE_STATUS_RUNNING

    env_on(body, redis=small_redis)


async def _bot_move(env, game_id: str) -> None:
    from services.lobby.tests.harness import INTERNAL_SECRET
    from services.platform.auth import internal

    rules = env.rules[TITLE]
    view = await rules.GetView(game_pb2.GetViewRequest(game_id=game_id))
    seat = view.active_seats[0]
    legal = await rules.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat)
    )
    await rules.SubmitAction(
        game_pb2.SubmitActionRequest(
            game_id=game_id,
            seat=seat,
            expected_version=view.version,
            action_json=legal.actions_json[0],
        ),
        metadata=internal(INTERNAL_SECRET, "tests"),
    )


def test_shared_watches_keep_each_watchers_from_version(env_on):
    async def body(env):
        ada = await env.person("ada")
        table = await _running_table(env, ada)
        for _ in range(3):
            await _bot_move(env, table.game_id)
        tid = table.table_id
        early = env.lobby.WatchTable(lobby_pb2.WatchTableRequest(table_id=tid), timeout=20)
        late = env.lobby.WatchTable(
            lobby_pb2.WatchTableRequest(table_id=tid, from_version=2), timeout=20
        )
        assert [(await early.read()).version for _ in range(3)] == [1, 2, 3]
        assert (await late.read()).version == 3
        await _bot_move(env, table.game_id)
        assert (await early.read()).version == 4
        assert (await late.read()).version == 4
        assert env.servicer.watches.upstreams == 1
        err = await refused(
            env.lobby.WatchTable(
                lobby_pb2.WatchTableRequest(table_id=tid, from_version=9), timeout=5
            ).read(),
            grpc.StatusCode.OUT_OF_RANGE,
            "bad_version",
        )
        assert error_info(err).metadata["current_version"] == "4"
        await refused(
            env.lobby.WatchTable(
                lobby_pb2.WatchTableRequest(table_id=tid, from_version=-1), timeout=5
            ).read(),
            INVALID,
            "bad_version",
        )
        early.cancel()
        late.cancel()

    env_on(body)


def test_retry_hints_are_in_thousandths_of_a_second():
    """A 10-per-second move budget frees a slot within the second: the hint says when, to the
    millisecond rounded up (never 0, never a whole second for 87 ms)."""
    from services.lobby.quotas import wait_s

    assert wait_s(100.087, 100.0) == 0.087
    assert wait_s(100.0861, 100.0) == 0.087
    assert wait_s(100.0, 100.5) == 0.001
    assert wait_s(3700.0, 100.0) == 3600.0
