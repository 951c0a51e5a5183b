"""``roundhouse archive verify`` on PostgreSQL and SQLite: archived games that
replay are ok; a changed event, action or result is a mismatch naming the
version (exit 1); a game stored under another rules version is reported as
such and not replayed (exit 0)."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa

from services.archive.models import ArchivedAction, ArchivedGame
from services.archive.tests.helpers import rig
from services.archive.verify import MISMATCH, NOT_REPLAYED, OK, check_game, verify
from services.cli.main import main
from services.platform.settings import get_settings


def run(coro):
    return asyncio.run(coro)


async def archive_games(r, ids, **kw) -> None:
    for i, game_id in enumerate(ids):
        await r.finished_game(game_id, seed=40 + i, **kw)
        await r.archiver.archive(game_id)


async def change(r, model, where, **values) -> None:
    async with r.engine.begin() as conn:
        await conn.execute(sa.update(model).where(*where).values(**values))


async def verdicts(r, title=None, limit=None) -> dict:
    out = {}
    await verify(r.store, title, limit, lambda v: out.__setitem__(v.game_id, v))
    return out


def test_replays_report_ok_mismatch_and_not_replayed(redis_url, key_prefix, store_url):
    async def go():
        async with rig(redis_url, key_prefix, store_url) as r:
            await archive_games(r, ["a", "b", "c", "d", "e", "f"])
            await change(
                r,
                ArchivedAction,
                (ArchivedAction.game_id == "f", ArchivedAction.version == 2),
                action="{not json",
            )
            await change(
                r,
                ArchivedAction,
                (ArchivedAction.game_id == "b", ArchivedAction.version == 5),
                events="[]",
            )
            await change(r, ArchivedGame, (ArchivedGame.game_id == "c",), rules_version="0.9-old")
            await change(
                r,
                ArchivedGame,
                (ArchivedGame.game_id == "d",),
                result='{"end_reason": "x", "ranks": [1, 1, 1], "scores": [0, 0, 0]}',
            )
            stored_e = await r.store.load("e")
            await change(
                r,
                ArchivedAction,
                (ArchivedAction.game_id == "e", ArchivedAction.version == 1),
                seat=(stored_e.entries[0].seat + 1) % 3,
            )
            got = await verdicts(r)
            assert {k: v.status for k, v in got.items()} == {
                "a": OK,
                "b": MISMATCH,
                "c": NOT_REPLAYED,
                "d": MISMATCH,
                "e": MISMATCH,
                "f": MISMATCH,
            }
            assert got["f"].detail == "entry 2: the stored action is not JSON"
            assert got["b"].detail == "entry 5: the engine's events differ from the stored"
            assert got["c"].detail == (
                "stored under rules version 0.9-old, engine is 1.1: not replayed"
            )
            assert got["d"].detail.startswith("result ")
            assert got["e"].detail.startswith("entry 1 is refused: not_your_turn")
            assert list(await verdicts(r, limit=2)) == ["a", "b"]
            assert await verdicts(r, title="transsib") == {}
            async for batch in r.store.batches(limit=1):
                ((record, entries),) = batch
                assert record.game_id == "a" and check_game(record, entries).status == OK

    run(go())


@pytest.fixture
def store_env(store_url, monkeypatch):
    monkeypatch.setenv("ROUNDHOUSE_DATABASE_URL", store_url)
    get_settings.cache_clear()
    yield store_url
    get_settings.cache_clear()


def test_the_command_exits_1_on_a_mismatch_only(redis_url, key_prefix, store_env, capsys):
    async def setup(tamper: bool):
        async with rig(redis_url, key_prefix, store_env) as r:
            if not tamper:
                await archive_games(r, ["x", "y"])
                await change(r, ArchivedGame, (ArchivedGame.game_id == "y",), rules_version="0")
            else:
                await change(
                    r,
                    ArchivedAction,
                    (ArchivedAction.game_id == "x", ArchivedAction.version == 3),
                    events='[{"type": "forged"}]',
                )

    run(setup(tamper=False))
    assert main(["archive", "verify"]) == 0
    out = capsys.readouterr().out
    assert "stored under rules version 0, engine is 1.1: not replayed" in out
    assert main(["archive", "verify", "--title", "railbarons", "--limit", "1"]) == 0
    run(setup(tamper=True))
    assert main(["archive", "verify"]) == 1
    assert "mismatch railbarons x: entry 3" in capsys.readouterr().out
    assert main(["archive", "verify", "--title", "chess"]) == 2
