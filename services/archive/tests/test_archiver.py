"""The archiver on PostgreSQL and SQLite against a real Redis: a finished game
is copied whole (meta, options, seed, every entry, result, seats with their
accounts), a second delivery changes nothing, Redis keeps the game only for
the configured time, and it all runs through the lifecycle consumer group."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import asyncpg
import pytest
import sqlalchemy as sa
import sqlalchemy.exc

from services.accounts.models import BOT as BOT_ACCOUNT
from services.accounts.store import AccountStore
from services.archive.archiver import ALREADY, MISSING, STORED, UNFINISHED
from services.archive.models import ArchivedAction, ArchivedGame, ArchivedSeat
from services.archive.tests.helpers import random_log, rig
from services.lobby.store import BOT, PLAYER, SeatRecord, TableRecord, TableStore
from services.platform.db import session_factory


def run(coro):
    return asyncio.run(coro)


async def rows(engine, model, *order):
    async with engine.connect() as conn:
        return (await conn.execute(sa.select(model).order_by(*order))).all()


async def counts(engine) -> tuple[int, int, int]:
    out = []
    async with engine.connect() as conn:
        for model in (ArchivedGame, ArchivedAction, ArchivedSeat):
            out.append((await conn.execute(sa.select(sa.func.count()).select_from(model))).scalar())
    return tuple(out)


def test_a_finished_lobby_game_is_archived_whole(redis_url, key_prefix, store_url):
    async def go():
        async with rig(redis_url, key_prefix, store_url, ttl_s=600) as r:
            sessions = session_factory(r.engine)
            accounts = AccountStore(sessions)
            ada = await accounts.create_account("ada", None)
            greedy = await accounts.create_account(
                "greedy-1", None, kind=BOT_ACCOUNT, owner_id=ada.id, hosted_policy="greedy"
            )
            await TableStore(sessions).create(
                TableRecord(
                    "T1",
                    "railbarons",
                    3,
                    "",
                    None,
                    [
                        SeatRecord(PLAYER, ada.id, "ada"),
                        SeatRecord(BOT, greedy.id, "greedy-1", True, "greedy"),
                        SeatRecord(BOT, greedy.id, "greedy-1", True, "random"),
                    ],
                    ada.id,
                )
            )
            await r.finished_game("g1", players=3, seed=5, owner="table:T1")
            meta = await r.gamelog.meta("g1")
            entries = await r.gamelog.entries("g1")
            assert await r.archiver.archive("g1") == STORED

            (game,) = await rows(r.engine, ArchivedGame)
            assert (game.game_id, game.title, game.rules_version) == (
                "g1",
                "railbarons",
                meta["rules_version"],
            )
            assert (game.num_players, int(game.seed), game.owner) == (3, 5, "table:T1")
            assert json.loads(game.options) == meta["options"]
            assert json.loads(game.result) == json.loads(entries[-1].result)
            assert game.num_actions == len(entries) > 50
            assert game.created_at <= game.finished_at <= game.archived_at
            actions = await rows(r.engine, ArchivedAction, ArchivedAction.version)
            got = [(a.version, a.seat, a.action, a.events, json.loads(a.active)) for a in actions]
            want = [(e.version, e.seat, e.action, e.events, list(e.active)) for e in entries]
            assert got == want
            seats = await rows(r.engine, ArchivedSeat, ArchivedSeat.seat)
            result = json.loads(game.result)
            assert [(s.seat, s.name, s.kind, s.policy, s.account_id) for s in seats] == [
                (0, "ada", PLAYER, "", ada.id),
                (1, "greedy-1", BOT, "greedy", greedy.id),
                (2, "greedy-1", BOT, "random", greedy.id),
            ]
            assert [s.score for s in seats] == result["scores"]
            assert [s.rank for s in seats] == result["ranks"]
            # Redis keeps the game for the configured time only
            for key in (r.gamelog.meta_key("g1"), r.gamelog.log_key("g1")):
                assert 0 < await r.redis.ttl(key) <= 600

    run(go())


def test_a_second_delivery_changes_nothing(redis_url, key_prefix, store_url):
    async def go():
        async with rig(redis_url, key_prefix, store_url) as r:
            await r.finished_game("g2", seed=2)
            assert await r.archiver.archive("g2") == STORED
            before = await counts(r.engine)
            (game,) = await rows(r.engine, ArchivedGame)
            assert await r.archiver.archive("g2") == ALREADY
            # even a twin that got past the first check stores nothing twice
            stored = await r.store.load("g2")
            assert await r.store.save(stored.record, stored.entries) is False
            assert await counts(r.engine) == before
            (again,) = await rows(r.engine, ArchivedGame)
            assert again.archived_at == game.archived_at
            assert before[0] == 1 and before[2] == 3  # unnamed seats of a game without a table

    run(go())


def test_seats_given_in_the_creation_record_carry_their_accounts(redis_url, key_prefix, store_url):
    """The way the lobby on accounts supplies seats: ``meta["seats"]``."""

    async def go():
        async with rig(redis_url, key_prefix, store_url) as r:
            seats = [
                {"name": "ada", "kind": "player", "policy": "", "account_id": "a" * 32},
                {"name": "greedy-bot", "kind": "bot", "policy": "greedy", "account_id": "b" * 32},
                {"name": "guest", "kind": "player", "policy": "", "account_id": None},
            ]
            await r.finished_game("g3", seed=3, owner="table:gone", seats=seats)
            assert await r.archiver.archive("g3") == STORED
            got = await rows(r.engine, ArchivedSeat, ArchivedSeat.seat)
            assert [(s.name, s.kind, s.account_id) for s in got] == [
                ("ada", "player", "a" * 32),
                ("greedy-bot", "bot", "b" * 32),
                ("guest", "player", None),
            ]

    run(go())


def test_a_ttl_of_zero_deletes_the_keys_and_unfinished_or_unknown_games_store_nothing(
    redis_url, key_prefix, store_url
):
    async def go():
        async with rig(redis_url, key_prefix, store_url, ttl_s=0) as r:
            assert await r.archiver.archive("nothing") == MISSING
            log_entries = random_log("railbarons", 3, 4)[:10]
            live = await r.rules.store_game("half", 3, 4, {}, log_entries)
            assert live is not None and not live.state.is_terminal()
            assert await r.archiver.archive("half") == UNFINISHED
            assert await counts(r.engine) == (0, 0, 0)
            assert await r.redis.exists(r.gamelog.log_key("half"))  # untouched
            assert await r.redis.ttl(r.gamelog.log_key("half")) == -1
            await r.finished_game("g4", seed=4)
            assert await r.archiver.archive("g4") == STORED
            assert not await r.redis.exists(r.gamelog.meta_key("g4"), r.gamelog.log_key("g4"))

    run(go())


def test_the_archiver_consumes_the_lifecycle_stream_through_its_group(
    redis_url, key_prefix, store_url
):
    async def go():
        async with rig(redis_url, key_prefix, store_url) as r:
            for i in range(3):
                await r.finished_game(f"c{i}", seed=10 + i)
            task = asyncio.create_task(r.archiver.run())
            try:
                for _ in range(200):
                    if (await counts(r.engine))[0] == 3:
                        break
                    await asyncio.sleep(0.05)
                assert (await counts(r.engine))[0] == 3
                for _ in range(100):  # acknowledged once handled
                    pending = sum(
                        [
                            (await r.redis.xpending(key, "archiver"))["pending"]
                            for key in r.gamelog.lifecycle_keys
                        ]
                    )
                    if pending == 0:
                        break
                    await asyncio.sleep(0.05)
                assert pending == 0
                for key in r.gamelog.lifecycle_keys:  # every shard is read
                    assert "archiver" in {g["name"] for g in await r.redis.xinfo_groups(key)}
                (game,) = [g for g in await rows(r.engine, ArchivedGame) if g.game_id == "c0"]
                assert game.finished_at >= game.created_at
            finally:
                r.archiver.stop.set()
                await asyncio.wait_for(task, 10)

    run(go())


def test_a_failed_save_leaves_nothing_half_written(redis_url, key_prefix, store_url):
    """The game row, its seats and its actions go in one transaction: an
    action the database refuses (here a missing seat) leaves no game row."""

    async def go():
        async with rig(redis_url, key_prefix, store_url) as r:
            await r.finished_game("g5", seed=5)
            assert await r.archiver.archive("g5") == STORED
            stored = await r.store.load("g5")
            broken = list(stored.entries)
            broken[-2] = dataclasses.replace(broken[-2], seat=None)
            record = dataclasses.replace(stored.record, game_id="g6")
            refused = (sqlalchemy.exc.IntegrityError, asyncpg.IntegrityConstraintViolationError)
            with pytest.raises(refused):
                await r.store.save(record, broken)
            assert not await r.store.has("g6")
            assert await counts(r.engine) == (1, len(broken), 3)
            with pytest.raises(ValueError):
                await r.store.save(record, broken[:-1])  # not finished
            assert not await r.store.has("g6")

    run(go())
