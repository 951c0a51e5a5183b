"""The durable store: migrations from empty on PostgreSQL and SQLite, models
that match the migrations, UTC datetimes, URL handling, outage detection."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone

import pytest
import sqlalchemy as sa
import sqlalchemy.exc
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from services.accounts.models import Account
from services.cli.launcher import free_port
from services.platform.db import (
    Base,
    async_url,
    create_engine,
    current_revision,
    database_url,
    is_unavailable,
    session_factory,
    upgrade,
)
from services.platform.settings import Settings


def head_revision() -> str:
    """The newest migration (the head the tests expect after an upgrade)."""
    from alembic.script import ScriptDirectory

    from services.platform.db import alembic_config

    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def run(coro):
    return asyncio.run(coro)


async def _with_engine(url, fn):
    engine = create_engine(url)
    try:
        return await fn(engine)
    finally:
        await engine.dispose()


def test_the_migrations_form_one_line():
    """get_current_head raises when the migrations have more than one head."""
    assert head_revision() == "0010_oauth_refresh"


def test_migrations_from_empty_reach_head_with_the_system_bots(store_url):
    assert current_revision(store_url) == head_revision()

    async def read(engine):
        async with session_factory(engine)() as s:
            rows = await s.execute(sa.select(Account.username, Account.kind, Account.hosted_policy))
            return sorted(rows.all())

    assert run(_with_engine(store_url, read)) == [
        ("greedy-bot", "system", "greedy"),
        ("random-bot", "system", "random"),
    ]
    upgrade(store_url)  # idempotent
    assert current_revision(store_url) == head_revision()


@pytest.mark.filterwarnings("ignore:.*expression-based index")  # SQLite cannot reflect them
def test_models_match_the_migrations(store_url):
    """Autogenerate finds nothing to do: every model change comes with a migration."""

    async def diff(engine):
        async with engine.connect() as conn:
            return await conn.run_sync(
                lambda c: compare_metadata(MigrationContext.configure(c), Base.metadata)
            )

    assert run(_with_engine(store_url, diff)) == []


def test_downgrade_to_empty_and_back(store_url):
    upgrade(store_url, "head")
    from alembic import command

    from services.platform.db import alembic_config

    command.downgrade(alembic_config(store_url), "base")
    assert current_revision(store_url) is None

    async def tables(engine):
        async with engine.connect() as conn:
            return await conn.run_sync(lambda c: sa.inspect(c).get_table_names())

    assert set(run(_with_engine(store_url, tables))) <= {"alembic_version"}
    upgrade(store_url)
    assert current_revision(store_url) == head_revision()


def test_usernames_are_unique_regardless_of_case_in_the_schema(store_url):
    async def insert(engine):
        now = datetime.now(UTC)
        sessions = session_factory(engine)
        async with sessions.begin() as s:
            s.add(Account(id="a" * 32, username="Alice", kind="human", created_at=now))
        with pytest.raises(sqlalchemy.exc.IntegrityError):
            async with sessions.begin() as s:
                s.add(Account(id="b" * 32, username="aLICE", kind="human", created_at=now))
        async with sessions() as s:
            return (await s.execute(sa.select(sa.func.count()).select_from(Account))).scalar()

    assert run(_with_engine(store_url, insert)) == 3  # Alice + the two system bots


def test_a_bot_account_needs_an_owner_in_the_schema(store_url):
    async def insert(engine):
        with pytest.raises(sqlalchemy.exc.IntegrityError):
            async with session_factory(engine).begin() as s:
                s.add(
                    Account(id="c" * 32, username="b0t", kind="bot", created_at=datetime.now(UTC))
                )

    run(_with_engine(store_url, insert))


def test_datetimes_come_back_aware_in_utc(store_url):
    moment = datetime(2026, 3, 1, 12, 30, tzinfo=timezone(timedelta(hours=2)))

    async def roundtrip(engine):
        sessions = session_factory(engine)
        async with sessions.begin() as s:
            s.add(Account(id="d" * 32, username="tz", kind="human", created_at=moment))
        async with sessions() as s:
            return (await s.get(Account, "d" * 32)).created_at

    got = run(_with_engine(store_url, roundtrip))
    assert got == moment and got.tzinfo == UTC


def test_naive_datetimes_are_refused(sqlite_database_url):
    async def insert(engine):
        with pytest.raises(sqlalchemy.exc.StatementError):
            async with session_factory(engine).begin() as s:
                naive = datetime.now()  # noqa: DTZ005 - the point of the test
                s.add(Account(id="e" * 32, username="naive", kind="human", created_at=naive))

    run(_with_engine(sqlite_database_url, insert))


def test_urls():
    assert async_url("postgresql://u:p@h:5/db") == "postgresql+asyncpg://u:p@h:5/db"
    assert async_url("postgres://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert async_url("sqlite:////tmp/x.db") == "sqlite+aiosqlite:////tmp/x.db"
    assert async_url("postgresql+asyncpg://u@h/db") == "postgresql+asyncpg://u@h/db"


def test_the_embedded_default_is_sqlite_in_the_data_dir(tmp_path):
    url = database_url(Settings(database_url="", data_dir=str(tmp_path / "data")))
    assert url == f"sqlite+aiosqlite:///{tmp_path / 'data' / 'roundhouse.db'}"
    assert (tmp_path / "data").is_dir()
    upgrade(url)
    assert current_revision(url) == head_revision()


def test_a_refused_connection_is_an_outage_and_a_constraint_is_not(sqlite_database_url):
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/nothing"

    async def fail(engine):
        async with engine.connect() as conn:
            await conn.execute(sa.text("SELECT 1"))

    with pytest.raises(Exception) as refused:
        run(_with_engine(url, fail))
    assert is_unavailable(refused.value), repr(refused.value)

    async def duplicate(engine):
        now = datetime.now(UTC)
        async with session_factory(engine).begin() as s:
            s.add(Account(id="f" * 32, username="random-BOT", kind="human", created_at=now))

    with pytest.raises(sqlalchemy.exc.IntegrityError) as integrity:
        run(_with_engine(sqlite_database_url, duplicate))
    assert not is_unavailable(integrity.value)
    assert not is_unavailable(ValueError("x"))

    async def bug(engine):  # a missing table is a bug, not an outage
        async with engine.connect() as conn:
            await conn.execute(sa.text("SELECT * FROM no_such_table"))

    with pytest.raises(sqlalchemy.exc.OperationalError) as missing:
        run(_with_engine(sqlite_database_url, bug))
    assert not is_unavailable(missing.value)


def test_an_unreachable_sqlite_file_is_an_outage(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'missing-dir' / 'x.db'}"

    async def fail(engine):
        async with engine.connect() as conn:
            await conn.execute(sa.text("SELECT 1"))

    with pytest.raises(sqlalchemy.exc.OperationalError) as err:
        run(_with_engine(url, fail))
    assert is_unavailable(err.value), repr(err.value)


def test_the_embedded_store_folder_is_private(tmp_path, monkeypatch):
    """The SQLite file holds password and token hashes: the folder ``database_url`` makes for
    it is readable by its owner only."""
    from services.platform.db import database_url
    from services.platform.settings import Settings

    folder = tmp_path / "data" / "roundhouse"
    url = database_url(Settings(data_dir=str(folder), database_url=""))
    assert url.endswith(f"{folder}/roundhouse.db")
    assert folder.stat().st_mode & 0o777 == 0o700
