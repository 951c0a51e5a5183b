"""When Redis no longer has a finished game, the rules service answers its
view, watch and result from the archive (PostgreSQL and SQLite): the same
answers as while Redis had it; bad input gets the same errors; a game stored
under another rules version is not rebuilt under the new rules."""

from __future__ import annotations

import asyncio

import grpc
import pytest
import sqlalchemy as sa

from roundhouse.v1 import game_pb2
from services.archive.models import ArchivedGame
from services.archive.tests.helpers import Aborted, FakeContext, rig
from services.platform.grpc_errors import ServiceError
from services.rules.servicer import GameRulesServicer


def run(coro):
    return asyncio.run(coro)


async def view(s, game_id, seat=None):
    req = game_pb2.GetViewRequest(game_id=game_id)
    if seat is not None:
        req.seat = seat
    return await s.GetView(req, FakeContext())


async def watch(s, game_id, from_version=0):
    req = game_pb2.WatchGameRequest(game_id=game_id, from_version=from_version)
    return [u async for u in s.WatchGame(req, FakeContext())]


async def result(s, game_id):
    return await s.GetResult(game_pb2.GetResultRequest(game_id=game_id), FakeContext())


async def code_of(coro):
    try:
        await coro
    except Aborted as exc:
        return exc.code
    except ServiceError as exc:
        return exc.code, exc.reason
    raise AssertionError("no error")


def test_view_watch_and_result_come_from_the_archive_once_redis_dropped_the_game(
    redis_url, key_prefix, store_url
):
    async def go():
        async with rig(redis_url, key_prefix, store_url, ttl_s=0) as r:
            await r.finished_game("g", players=4, seed=21)
            live_views = [await view(r.rules, "g", seat) for seat in (None, 0, 3)]
            live_updates = await watch(r.rules, "g")
            live_tail = await watch(r.rules, "g", 7)
            live_result = await result(r.rules, "g")
            r.rules._cache.clear()
            await r.archiver.archive("g")
            assert not await r.redis.exists(r.gamelog.meta_key("g"))  # Redis has nothing now

            fresh = GameRulesServicer("railbarons", r.gamelog, archive=r.rules.archive)
            assert [await view(fresh, "g", seat) for seat in (None, 0, 3)] == live_views
            assert await watch(fresh, "g") == live_updates
            assert live_updates[-1].finished and live_updates[-1].result.ranks
            assert await watch(fresh, "g", 7) == live_tail
            assert await watch(fresh, "g", len(live_updates)) == []  # ends at once
            archived = await result(fresh, "g")
            assert archived == live_result and archived.seed == "21"
            legal = await fresh.ListLegalActions(
                game_pb2.ListLegalActionsRequest(game_id="g", seat=0), FakeContext()
            )
            assert (legal.version, list(legal.actions_json)) == (len(live_updates), [])

    run(go())


def test_bad_input_on_an_archived_game_gets_the_usual_errors(redis_url, key_prefix, store_url):
    async def go():
        async with rig(redis_url, key_prefix, store_url, ttl_s=0) as r:
            await r.finished_game("g", players=3, seed=2)
            await r.archiver.archive("g")
            s = r.rules
            n = (await result(s, "g")).info.num_players
            assert n == 3
            bad = grpc.StatusCode.INVALID_ARGUMENT
            assert await code_of(view(s, "g", 3)) == (bad, "bad_seat")
            assert await code_of(watch(s, "g", -1)) == (bad, "bad_version")
            updates = await watch(s, "g")
            assert await code_of(watch(s, "g", len(updates) + 1)) == (
                grpc.StatusCode.OUT_OF_RANGE,
                "bad_version",
            )
            submit = game_pb2.SubmitActionRequest(
                game_id="g", seat=0, expected_version=len(updates), action_json='{"type": "pass"}'
            )
            assert await code_of(s.SubmitAction(submit, FakeContext())) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "game_over",
            )
            assert await code_of(view(s, "nope")) == grpc.StatusCode.NOT_FOUND
            assert await code_of(view(s, "bad id!")) == bad
            # a railbarons game is not a transsib game, archived or not
            other = GameRulesServicer("transsib", r.gamelog, archive=None)
            assert await code_of(view(other, "g")) == grpc.StatusCode.NOT_FOUND
            from services.archive.fallback import ArchiveFallback

            other.archive = ArchiveFallback("transsib", r.store)
            assert await code_of(result(other, "g")) == grpc.StatusCode.NOT_FOUND
            # the archive is unchanged by all of it
            assert len(await watch(s, "g")) == len(updates)

    run(go())


def test_a_game_archived_under_other_rules_is_not_rebuilt_under_new_rules(
    redis_url, key_prefix, store_url
):
    async def go():
        async with rig(redis_url, key_prefix, store_url, ttl_s=0) as r:
            await r.finished_game("old", seed=3)
            await r.archiver.archive("old")
            async with r.engine.begin() as conn:
                await conn.execute(
                    sa.update(ArchivedGame)
                    .where(ArchivedGame.game_id == "old")
                    .values(rules_version="0.9")
                )
            with pytest.raises(ServiceError) as err:
                await view(r.rules, "old")
            assert (err.value.code, err.value.reason) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "rules_version_mismatch",
            )
            assert "0.9" in err.value.message
            # its record needs no replay: result and watch are still served
            res = await result(r.rules, "old")
            assert res.info.rules_version == "0.9" and res.result.ranks
            assert (await watch(r.rules, "old"))[-1].finished

    run(go())


def test_a_replica_caching_a_game_whose_keys_expired_watches_it_from_the_archive(
    redis_url, key_prefix, store_url
):
    """The replica that served the game still holds its final state, but its
    stream is gone: the watch must not wait on the missing stream for ever."""

    async def go():
        async with rig(redis_url, key_prefix, store_url, ttl_s=0) as r:
            await r.finished_game("c", seed=8)
            updates = await watch(r.rules, "c")
            assert "c" in r.rules._cache
            await r.archiver.archive("c")  # keys deleted (ttl 0); the cache stays
            assert "c" in r.rules._cache
            assert await asyncio.wait_for(watch(r.rules, "c"), 10) == updates
            assert await asyncio.wait_for(watch(r.rules, "c", 3), 10) == updates[3:]

    run(go())


def test_the_id_of_an_archived_game_is_not_free_again(redis_url, key_prefix, store_url):
    """Its Redis keys expired, but CreateGame (and an import) with that id is
    ALREADY_EXISTS, and nothing is written to Redis."""

    async def go():
        async with rig(redis_url, key_prefix, store_url, ttl_s=0) as r:
            await r.finished_game("taken", seed=4)
            await r.archiver.archive("taken")
            create = game_pb2.CreateGameRequest(title="railbarons", num_players=3, game_id="taken")
            assert await code_of(r.rules.CreateGame(create, FakeContext())) == (
                grpc.StatusCode.ALREADY_EXISTS
            )
            assert await r.rules.store_game("taken", 3, 4, {}, []) is None
            assert not await r.redis.exists(r.gamelog.meta_key("taken"), r.gamelog.log_key("taken"))
            create.game_id = "free"
            assert (await r.rules.CreateGame(create, FakeContext())).info.game_id == "free"

    run(go())
