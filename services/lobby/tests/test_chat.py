"""Table chat over the lobby (issue 32, item 3): the two channels and their audiences, the
rules of a message (each refusal stores nothing), the rate, mutes, a waiting read, and the
chat kept with the archived game and read from there by the same audiences."""

from __future__ import annotations

import asyncio

import grpc

from roundhouse.v1 import chat_pb2, lobby_pb2
from services.archive.archiver import Archiver
from services.lobby.chat import check_text
from services.lobby.tests.harness import refused
from services.lobby.tests.test_races_and_resignation import _two_player_table
from services.platform.db import create_engine
from services.platform.grpc_errors import ServiceError
from services.platform.settings import ArchiveSettings

DENIED = grpc.StatusCode.PERMISSION_DENIED
INVALID = grpc.StatusCode.INVALID_ARGUMENT
REFUSED = grpc.StatusCode.FAILED_PRECONDITION


def send(env, caller, tid, channel, text):
    return env.lobby.SendChat(
        chat_pb2.SendChatRequest(table_id=tid, channel=channel, text=text), metadata=caller.md
    )


async def read(env, caller, tid, channel="", after="", wait_ms=0):
    answer = await env.lobby.GetChat(
        chat_pb2.GetChatRequest(table_id=tid, channel=channel, after_id=after, wait_ms=wait_ms),
        metadata=caller.md,
    )
    return answer


def texts(answer) -> list[tuple[str, str, str]]:
    return [(m.channel, m.username, m.text) for m in answer.messages]


async def stored(env, tid) -> list:
    return await env.redis.xrange(env.servicer.chat.log_key(tid))


def test_each_channel_reaches_its_audience_only(lobby_env):
    async def body(env):
        table, ada, bob = await _two_player_table(env)
        tid = table.table_id
        eve = await env.person("eve")
        other = await env.table(eve, 2)  # eve's own table: she plays there, not here
        await env.lobby.JoinSeat(
            lobby_pb2.JoinSeatRequest(table_id=other.table_id, seat=0), metadata=eve.md
        )
        said = await send(env, ada, tid, "players", "good luck")
        assert (said.channel, said.username, said.seat, said.text) == (
            "players",
            "ada",
            0,
            "good luck",
        )
        kibitz = await send(env, eve, tid, "spectators", "ada will win")
        seen = await read(env, bob, tid)
        assert texts(seen) == [("players", "ada", "good luck")]
        assert list(seen.channels) == ["players"]
        assert seen.last_id == kibitz.id  # the cursor passes what bob does not see
        watched = await read(env, eve, tid)
        assert texts(watched) == [("spectators", "eve", "ada will win")]
        assert list(watched.channels) == ["spectators"]
        assert watched.messages[0].seat == -1
        # a spectator never reads the players' channel, a player never the spectators'
        await refused(read(env, eve, tid, "players"), DENIED, "not_in_channel")
        await refused(read(env, ada, tid, "spectators"), DENIED, "not_in_channel")
        before = await stored(env, tid)
        await refused(send(env, eve, tid, "players", "psst"), DENIED, "not_in_channel")
        await refused(send(env, bob, tid, "spectators", "hi all"), DENIED, "not_in_channel")
        # nor does another table's people read this one's players, nor this one theirs
        await send(env, eve, other.table_id, "players", "anyone?")
        assert texts(await read(env, ada, other.table_id)) == []
        anonymous = env.lobby.GetChat(chat_pb2.GetChatRequest(table_id=tid))
        await refused(anonymous, grpc.StatusCode.UNAUTHENTICATED)
        await refused(read(env, ada, "nosuchtable"), grpc.StatusCode.NOT_FOUND, "unknown_table")
        assert await stored(env, tid) == before

    lobby_env(body)


def test_each_bad_message_is_refused_with_its_reason_and_stores_nothing(lobby_env):
    async def body(env):
        table, ada, bob = await _two_player_table(env)
        tid = table.table_id
        await send(env, ada, tid, "players", "hello")
        before = await stored(env, tid)
        limit = env.settings.chat_max_length
        cases = [
            ("players", "   ", "empty_message"),
            ("players", "x" * (limit + 1), "message_too_long"),
            ("players", "ring \x07 bell", "bad_text"),
            ("players", "two\nlines", "bad_text"),
            ("players", "abc\u202edcba", "bad_text"),
            ("lobby", "hello", "bad_channel"),
            ("", "hello", "bad_channel"),
        ]
        for channel, text, reason in cases:
            err = await refused(send(env, ada, tid, channel, text), INVALID, reason)
            assert err.details()
        await refused(send(env, ada, "nosuchtable", "players", "hi"), grpc.StatusCode.NOT_FOUND)
        await refused(read(env, ada, tid, after="not-an-id!"), INVALID, "bad_chat_id")
        await refused(read(env, ada, tid, wait_ms=-1), INVALID, "bad_wait")
        await refused(read(env, ada, tid, wait_ms=30_001), INVALID, "bad_wait")
        at_limit = await send(env, ada, tid, "players", "y" * limit)
        assert len(at_limit.text) == limit
        assert await stored(env, tid) == before + [(at_limit.id, (await stored(env, tid))[-1][1])]
        # a token without play or bot:play does not write
        reader = await env.token(ada.account, ["tables:write"])
        await refused(send(env, reader, tid, "players", "hi"), DENIED, "scope_missing")
        # after the game the chat is closed (and nothing is stored)
        await env.lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md)
        count = len(await stored(env, tid))
        await refused(send(env, bob, tid, "players", "gg"), REFUSED, "chat_closed")
        assert len(await stored(env, tid)) == count

    lobby_env(body)


def test_lone_surrogates_and_direction_overrides_are_refused_by_the_rule():
    for text in ("a\ud800b", "\udfff", "name\u2066x"):
        try:
            check_text(text, 300)
        except ServiceError as err:
            assert err.reason == "bad_text"
        else:
            raise AssertionError(f"{text!r} was accepted")
    assert check_text("  gg 🚂 wp  ", 300) == "gg 🚂 wp"


def test_an_account_past_its_chat_rate_is_refused_with_a_retry_hint(lobby_env):
    async def body(env):
        table, ada, bob = await _two_player_table(env)
        tid = table.table_id
        await send(env, ada, tid, "players", "one")
        await send(env, ada, tid, "players", "two")
        before = await stored(env, tid)
        err = await refused(
            send(env, ada, tid, "players", "three"), grpc.StatusCode.RESOURCE_EXHAUSTED, "chat_rate"
        )
        assert "retry" in err.details()
        assert await stored(env, tid) == before
        await send(env, bob, tid, "players", "mine still goes")  # the limit is per account

    lobby_env(body, chat_per_account="2/minute")


def test_a_muted_account_is_not_delivered_to_the_muter(lobby_env):
    async def body(env):
        table, ada, bob = await _two_player_table(env)
        tid = table.table_id

        def mute(caller, username, unmute=False):
            return env.lobby.Mute(
                chat_pb2.MuteRequest(table_id=tid, username=username, unmute=unmute),
                metadata=caller.md,
            )

        assert list((await mute(bob, "ada")).muted) == ["ada"]
        await send(env, ada, tid, "players", "you will lose")
        await send(env, bob, tid, "players", "we will see")
        assert texts(await read(env, bob, tid)) == [("players", "bob", "we will see")]
        assert len((await read(env, ada, tid)).messages) == 2  # ada's own and bob's
        await refused(mute(bob, "bob"), INVALID, "cannot_mute_self")
        await refused(mute(bob, "nobody"), grpc.StatusCode.NOT_FOUND, "unknown_account")
        assert list((await mute(bob, "ada", unmute=True)).muted) == []
        assert len((await read(env, bob, tid)).messages) == 2

    lobby_env(body)


def test_a_waiting_read_returns_the_next_message(lobby_env):
    async def body(env):
        table, ada, bob = await _two_player_table(env)
        tid = table.table_id
        first = await send(env, ada, tid, "players", "first")
        waiting = asyncio.create_task(read(env, bob, tid, after=first.id, wait_ms=20_000))
        second = await send(env, ada, tid, "players", "second")
        answer = await asyncio.wait_for(waiting, 20)
        assert [m.id for m in answer.messages] == [second.id]
        assert answer.last_id == second.id
        # nothing after the last one, no wait: an empty answer that keeps the cursor
        empty = await read(env, bob, tid, after=second.id)
        assert list(empty.messages) == [] and empty.last_id == second.id

    lobby_env(body)


def test_the_chat_is_kept_with_the_archived_game_for_the_same_audiences(lobby_env, store_url):
    async def body(env):
        table, ada, bob = await _two_player_table(env)
        tid = table.table_id
        eve = await env.person("eve")
        await send(env, ada, tid, "players", "<script>alert(1)</script>")
        await send(env, eve, tid, "spectators", "nice opening")
        await env.lobby.Mute(chat_pb2.MuteRequest(table_id=tid, username="eve"), metadata=ada.md)
        table = await env.lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md)
        settings = ArchiveSettings(
            redis_url=env.settings.redis_url,
            key_prefix=env.settings.key_prefix,
            archived_game_ttl_s=0,  # Redis forgets the chat at once: reads come from the archive
        )
        engine = create_engine(store_url, settings)
        try:
            archiver = Archiver(settings, env.redis, engine)
            assert await archiver.archive(table.game_id) == "stored"
            assert await stored(env, tid) == []
            assert [k for k in await env.redis_keys() if ":chat:" in k] == []  # mutes too
            assert await archiver.archive(table.game_id) == "already"  # idempotent
        finally:
            await engine.dispose()
        # players now read both channels; the spectator still never reads the players'
        assert texts(await read(env, bob, tid)) == [
            ("players", "ada", "<script>alert(1)</script>"),
            ("spectators", "eve", "nice opening"),
        ]
        assert texts(await read(env, eve, tid)) == [("spectators", "eve", "nice opening")]
        await refused(read(env, eve, tid, "players"), DENIED, "not_in_channel")
        rest = await read(env, bob, tid, after=(await read(env, bob, tid)).messages[0].id)
        assert texts(rest) == [("spectators", "eve", "nice opening")]

    lobby_env(body)
