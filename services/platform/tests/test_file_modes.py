"""The embedded store is private to its owner (issue 33, item 5): the data folder is created
mode 0700, the SQLite file (and its WAL and shared-memory files) 0600, whatever the umask;
the store holds password and token hashes."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import sqlalchemy as sa

from services.platform.db import create_engine, database_url, upgrade
from services.platform.settings import Settings


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_data_folder_and_the_sqlite_file_are_private(tmp_path):
    old = os.umask(0o022)
    try:
        folder = tmp_path / "new" / "data"
        url = database_url(Settings(data_dir=str(folder), database_url=""))
        assert _mode(folder) == 0o700
        upgrade(url)
        db = folder / "roundhouse.db"
        assert _mode(db) == 0o600

        async def write() -> None:
            engine = create_engine(url, Settings(db_timeout_s=2.0))
            async with engine.begin() as conn:
                await conn.execute(sa.text("CREATE TABLE t (x INTEGER)"))
                await conn.execute(sa.text("INSERT INTO t VALUES (1)"))
                for suffix in ("-wal", "-shm"):
                    side = db.with_name(db.name + suffix)
                    if side.exists():
                        assert _mode(side) == 0o600, suffix
            await engine.dispose()

        asyncio.run(write())
        # a store opened first by the engine (no migration yet) is private too
        other = tmp_path / "other.db"
        engine = create_engine(f"sqlite+aiosqlite:///{other}", Settings(db_timeout_s=2.0))

        async def touch() -> None:
            async with engine.connect() as conn:
                await conn.execute(sa.text("SELECT 1"))
            await engine.dispose()

        asyncio.run(touch())
        assert _mode(other) == 0o600
    finally:
        os.umask(old)


def test_the_run_folder_of_up_is_private(tmp_path):
    from services.cli.launcher import Stack

    old = os.umask(0o022)
    try:
        stack = Stack(["railbarons"], run_dir=tmp_path / "run", redis_url="redis://127.0.0.1:1/0")
        assert _mode(stack.run_dir) == 0o700
    finally:
        os.umask(old)
