"""Alembic environment of the Roundhouse store (async: asyncpg or aiosqlite).

The database is ``config.attributes["url"]`` when set (``services.platform.db.upgrade``,
the tests), else ``ROUNDHOUSE_DATABASE_URL`` / the embedded SQLite file (the
``alembic`` command with the repository's ``alembic.ini``). Every model module
is imported here so ``target_metadata`` knows all tables (autogenerate): a
service that adds models adds its import below.
"""

from __future__ import annotations

import asyncio
import warnings
from logging.config import fileConfig

from alembic import context
from sqlalchemy.exc import SAWarning

import services.accounts.models  # noqa: F401 - registers the accounts tables
import services.archive.models  # noqa: F401 - registers the archive tables
import services.lobby.chat  # noqa: F401 - registers the archived chat table
import services.lobby.models  # noqa: F401 - registers the lobby tables
import services.platform.reviews  # noqa: F401 - registers the game review table
import services.tournaments.service.models  # noqa: F401 - registers the tournament and rating tables
import services.web.oauth_models  # noqa: F401 - registers the OAuth tables
from services.platform.db import Base, create_engine, database_url, is_sqlite

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata

# SQLite's batch migrations (0006) reflect the tables they copy and the ones their foreign keys
# name; SQLAlchemy cannot reflect the accounts' expression index (lower(username)) and says so.
# That table is never copied, so the index is untouched: the warning only worried newcomers.
warnings.filterwarnings(
    "ignore", message="Skipped unsupported reflection of expression-based index", category=SAWarning
)


def _url() -> str:
    return config.attributes.get("url") or database_url()


def _configure(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=is_sqlite(_url()),  # SQLite alters tables by copying them
        compare_type=True,
    )


def run_migrations_offline() -> None:
    context.configure(
        url=_url(), target_metadata=target_metadata, literal_binds=True, render_as_batch=True
    )
    with context.begin_transaction():
        context.run_migrations()


def _run_sync(connection) -> None:
    _configure(connection)
    with context.begin_transaction():
        context.run_migrations()


async def run_migrations_online() -> None:
    engine = create_engine(_url())
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run_sync)
            await connection.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    asyncio.run(run_migrations_online())
