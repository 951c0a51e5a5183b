"""The durable store: SQLAlchemy 2 (asyncio) over PostgreSQL, or SQLite when embedded.

One setting picks the database, ``ROUNDHOUSE_DATABASE_URL``:

* ``postgresql+asyncpg://user@host:5432/roundhouse`` (production, the tests'
  store; ``postgresql://`` and ``postgres://`` are read as asyncpg);
* empty (the default): the embedded SQLite file ``roundhouse.db`` (aiosqlite)
  in ``ROUNDHOUSE_DATA_DIR`` (default ``$XDG_DATA_HOME/roundhouse``, i.e.
  ``~/.local/share/roundhouse``), so ``make demo`` needs nothing but Redis.

Every model derives from :class:`Base` and lives with the service that owns it
(``services/accounts/models.py``, ...). The schema is made only by the Alembic
migrations in ``services/migrations/`` (revision ids ``0001_accounts``,
``0002_...``), applied by ``roundhouse db upgrade`` or :func:`upgrade`.

Use::

    engine = create_engine(database_url())
    sessions = session_factory(engine)
    async with sessions.begin() as session:   # one transaction
        session.add(...)

Redis stays the hot store (live game logs, queues, the lifecycle stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy.exc
from sqlalchemy import DateTime, MetaData, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.ext.asyncio import create_async_engine as _create_async_engine
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.types import TypeDecorator

from services.platform.settings import StoreSettings, get_settings

SQLITE_FILE = "roundhouse.db"
MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"

# Constraint names are fixed, so migrations can name what they alter or drop.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """The declarative base of every Roundhouse model (one metadata for all)."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(TypeDecorator):
    """A timezone-aware UTC ``datetime`` on every database (SQLite stores naive
    text; values come back aware, in UTC). Naive values written are refused."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("UTCDateTime needs an aware datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    """Now, aware, in UTC."""
    return datetime.now(UTC)


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/roundhouse``, or ``~/.local/share/roundhouse``."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "roundhouse"


def database_url(settings: StoreSettings | None = None) -> str:
    """The async SQLAlchemy URL of the store: ``settings.database_url`` (made
    async, see :func:`async_url`), or the embedded SQLite file (its folder is
    created readable by its owner only, mode 0700: the file holds password and token
    hashes)."""
    settings = settings or get_settings(StoreSettings)
    if settings.database_url:
        return async_url(settings.database_url)
    folder = Path(settings.data_dir) if settings.data_dir else default_data_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)  # (an existing folder is left as is)
    return f"sqlite+aiosqlite:///{folder / SQLITE_FILE}"


def private_sqlite_file(url: str) -> None:
    """Creates the SQLite file of ``url`` readable by its owner only (mode 0600) if it does not
    exist yet, before SQLite would create it with the umask's mode (0644); SQLite gives its WAL
    and shared-memory files the database file's mode. Not SQLite, in memory, an existing file or
    a missing folder (SQLite's own error: an outage): nothing is done."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return
    path = Path(parsed.database)
    if path.exists() or not path.parent.is_dir():
        return
    with contextlib.suppress(FileExistsError):  # another process made it first
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def async_url(url: str) -> str:
    """``url`` with an asyncio driver: ``postgresql://`` / ``postgres://`` ->
    ``postgresql+asyncpg://``, ``sqlite://`` -> ``sqlite+aiosqlite://``; other
    URLs unchanged. Raises ``sqlalchemy.exc.ArgumentError`` on a malformed URL."""
    parsed = make_url(url.replace("postgres://", "postgresql://", 1))
    driver = {"postgresql": "postgresql+asyncpg", "sqlite": "sqlite+aiosqlite"}.get(
        parsed.drivername
    )
    if driver:
        parsed = parsed.set(drivername=driver)
    return parsed.render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    """Whether ``url`` names an SQLite database (the embedded mode)."""
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str, settings: StoreSettings | None = None, **kwargs) -> AsyncEngine:
    """An ``AsyncEngine`` for ``url``. PostgreSQL: a pool of ``db_pool_size``
    connections, checked before use (a restarted server is noticed), connect
    and pool timeouts of ``db_timeout_s``. SQLite: foreign keys on, WAL
    journal (several processes share the file), a busy timeout."""
    settings = settings or get_settings(StoreSettings)
    timeout = settings.db_timeout_s
    if is_sqlite(url):
        private_sqlite_file(url)
        engine = _create_async_engine(url, connect_args={"timeout": timeout}, **kwargs)

        @event.listens_for(engine.sync_engine, "connect")
        def _pragmas(dbapi_conn, _record) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            cursor.close()

        return engine
    options = {
        "pool_size": settings.db_pool_size,
        "max_overflow": 0,
        "pool_timeout": timeout,
        "pool_pre_ping": True,
        "connect_args": {"timeout": timeout},
    }
    options.update(kwargs)
    return _create_async_engine(url, **options)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions on ``engine``; objects stay readable after commit."""
    return async_sessionmaker(engine, expire_on_commit=False)


async def ping(engine: AsyncEngine) -> bool:
    """``SELECT 1`` (readiness). Raises the driver's error when the store is down."""
    async with engine.connect() as conn:
        await conn.execute(text("SELECT 1"))
    return True


def alembic_config(url: str):
    """The Alembic ``Config`` of our migrations, bound to ``url``."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["url"] = async_url(url)
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Apply the migrations to ``url`` up to ``revision`` (idempotent).

    Synchronous (Alembic runs its own event loop): from async code call
    ``await asyncio.to_thread(upgrade, url)``."""
    from alembic import command

    private_sqlite_file(url)
    command.upgrade(alembic_config(url), revision)


async def upgrade_async(url: str, revision: str = "head") -> None:
    """:func:`upgrade` from a running event loop (in a worker thread)."""
    await asyncio.to_thread(upgrade, url, revision)


def current_revision(url: str) -> str | None:
    """The revision ``url`` is at (``None`` before the first migration)."""
    from alembic.runtime.migration import MigrationContext

    async def read() -> str | None:
        engine = create_engine(url)
        try:
            async with engine.connect() as conn:
                return await conn.run_sync(
                    lambda c: MigrationContext.configure(c).get_current_revision()
                )
        finally:
            await engine.dispose()

    return asyncio.run(read())


# The connection-level failures that mean "the store is down, try again": the
# interceptor in services/platform/grpc_errors.py answers them with UNAVAILABLE.
_UNAVAILABLE_SQLSTATE_CLASSES = ("08", "53", "57")  # connection, resources, operator
_SQLITE_OUTAGES = ("database is locked", "unable to open database file", "disk i/o error")


def is_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` means the database cannot be reached right now (refused
    or dropped connection, server shutting down, pool or connect timeout), as
    opposed to a bug or a constraint violation."""
    if isinstance(exc, sqlalchemy.exc.TimeoutError):  # pool exhausted
        return True
    if isinstance(exc, sqlalchemy.exc.DBAPIError):
        if exc.connection_invalidated or isinstance(exc, sqlalchemy.exc.InterfaceError):
            return True
        orig = exc.orig
        cause = getattr(orig, "__cause__", None) or orig
        if isinstance(cause, ConnectionError | socket.gaierror | asyncio.TimeoutError):
            return True
        sqlstate = getattr(cause, "sqlstate", None) or getattr(orig, "sqlstate", None)
        if sqlstate and str(sqlstate)[:2] in _UNAVAILABLE_SQLSTATE_CLASSES:
            return True
        if isinstance(exc, sqlalchemy.exc.OperationalError):
            # SQLite reports outages and bugs alike as OperationalError: only these are outages
            text_ = str(orig).lower()
            return any(m in text_ for m in _SQLITE_OUTAGES)
        return False
    import asyncpg

    # asyncpg's connect raises these unwrapped (e.g. ConnectionRefusedError)
    return isinstance(
        exc,
        ConnectionError
        | socket.gaierror
        | asyncio.TimeoutError
        | asyncpg.exceptions.ConnectionDoesNotExistError
        | asyncpg.exceptions.CannotConnectNowError
        | asyncpg.exceptions.AdminShutdownError
        | asyncpg.exceptions.TooManyConnectionsError,
    )
