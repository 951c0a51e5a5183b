"""``roundhouse.v1.Archive/ListGames`` on PostgreSQL and SQLite: an account's
history newest first, by account id or username, filtered by title, paged
with opaque tokens; bad input gets INVALID_ARGUMENT / NOT_FOUND with a reason
and no seed ever shows."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from roundhouse.v1 import archive_pb2
from services.accounts.models import Account
from services.archive.server import ArchiveServicer
from services.archive.store import GameRecord, SeatInfo
from services.archive.tests.helpers import Aborted, FakeContext, rig
from services.platform.db import session_factory

ADA, BOB = "a" * 32, "b" * 32


async def seed_archive(r) -> list[str]:
    """Two accounts; 7 finished games (ada in 5 of them, bob in 3), finished a
    minute apart (g0 first). Returns the game ids."""
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    async with session_factory(r.engine).begin() as s:
        s.add(Account(id=ADA, username="Ada", kind="human", created_at=now))
        s.add(Account(id=BOB, username="bob", kind="human", created_at=now))
    await r.finished_game("src", players=3, seed=9)
    entries = await r.gamelog.entries("src")
    ids = []
    for i in range(7):
        accounts = [ADA if i < 5 else None, BOB if i >= 4 else None, None]
        record = GameRecord(
            game_id=f"g{i}",
            title="railbarons" if i != 3 else "transsib",
            rules_version="1.1",
            num_players=3,
            options={},
            seed=1000 + i,
            owner="",
            created_at=now,
            finished_at=now + timedelta(minutes=i),
            num_actions=len(entries),
            result={"scores": [10, 20, 30], "ranks": [3, 2, 1], "end_reason": "x"},
            seats=tuple(SeatInfo(k, f"p{k}", "player", "", a) for k, a in enumerate(accounts)),
        )
        assert await r.store.save(record, entries)
        ids.append(record.game_id)
    return ids


async def list_games(s, **kw):
    return await s.ListGames(archive_pb2.ListGamesRequest(**kw), FakeContext())


async def error(coro):
    """(status code, ErrorInfo reason) of a refused call."""
    with pytest.raises(Aborted) as err:
        await coro
    status = err.value.status
    for key, value in status.trailing_metadata:
        if key == rpc_status.GRPC_DETAILS_METADATA_KEY:
            info = error_details_pb2.ErrorInfo()
            status_pb2.Status.FromString(value).details[0].Unpack(info)
            return status.code, info.reason
    raise AssertionError("no ErrorInfo")


def test_an_accounts_history_newest_first_paged(redis_url, key_prefix, store_url):
    async def go():
        async with rig(redis_url, key_prefix, store_url) as r:
            await seed_archive(r)
            s = ArchiveServicer(r.store)
            first = await list_games(s, account_id=ADA, page_size=2)
            assert [g.info.game_id for g in first.games] == ["g4", "g3"]
            assert first.next_page_token
            token = first.next_page_token
            second = await list_games(s, account_id=ADA, page_size=2, page_token=token)
            assert [g.info.game_id for g in second.games] == ["g2", "g1"]
            third = await list_games(
                s, account_id=ADA, page_size=2, page_token=second.next_page_token
            )
            assert [g.info.game_id for g in third.games] == ["g0"]
            assert third.next_page_token == ""
            by_name = await list_games(s, username="ADA", page_size=10)
            assert [g.info.game_id for g in by_name.games] == ["g4", "g3", "g2", "g1", "g0"]
            bob = await list_games(s, username="bob", title="railbarons")
            assert [g.info.game_id for g in bob.games] == ["g6", "g5", "g4"]
            everyone = await list_games(s)
            assert len(everyone.games) == 7
            g4 = by_name.games[0]
            assert [(x.seat, x.name, x.account_id, x.score, x.rank) for x in g4.seats] == [
                (0, "p0", ADA, 10, 3),
                (1, "p1", BOB, 20, 2),
                (2, "p2", "", 30, 1),
            ]
            assert g4.finished_at.ToDatetime(tzinfo=UTC) == datetime(
                2026, 11, 30, 12, 4, tzinfo=UTC
            )
            assert "1004" not in str(g4)  # the seed is not part of a listing

    run(go())


def test_bad_list_requests_are_refused_with_a_reason(redis_url, key_prefix, store_url):
    async def go():
        async with rig(redis_url, key_prefix, store_url) as r:
            await seed_archive(r)
            s = ArchiveServicer(r.store)
            bad = grpc.StatusCode.INVALID_ARGUMENT
            assert await error(list_games(s, page_size=-1)) == (bad, "bad_page_size")
            assert await error(list_games(s, page_token="not-a-token")) == (bad, "bad_page_token")
            assert await error(list_games(s, title="chess")) == (bad, "unknown_title")
            assert await error(list_games(s, account_id=ADA, username="Ada")) == (
                bad,
                "account_and_username",
            )
            nf = grpc.StatusCode.NOT_FOUND
            assert await error(list_games(s, username="'; DROP TABLE x; --")) == (
                nf,
                "unknown_account",
            )
            assert await error(list_games(s, account_id="c" * 32)) == (nf, "unknown_account")
            assert len((await list_games(s, page_size=1000)).games) == 7  # read as 100

    run(go())


def run(coro):
    return asyncio.run(coro)
