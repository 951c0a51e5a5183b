"""``roundhouse db upgrade`` and ``roundhouse accounts create-admin`` as a user runs them
(real processes, the embedded SQLite store in a data dir, and PostgreSQL)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from alembic.script import ScriptDirectory

from services.accounts.store import AccountStore
from services.platform.db import alembic_config, create_engine, current_revision, session_factory

PASSWORD = "admin password 1"


def roundhouse(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "services.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def _account(url: str, name: str):
    async def read():
        engine = create_engine(url)
        try:
            return await AccountStore(session_factory(engine)).by_username(name)
        finally:
            await engine.dispose()

    return asyncio.run(read())


def _head() -> str:
    """The newest migration (other services add theirs after 0001_accounts)."""

    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def test_db_upgrade_makes_the_embedded_store_in_the_data_dir(tmp_path):
    env = {"ROUNDHOUSE_DATA_DIR": str(tmp_path / "data"), "ROUNDHOUSE_DATABASE_URL": ""}
    done = roundhouse("db", "upgrade", env=env)
    assert done.returncode == 0, done.stderr
    head = _head()
    assert head in done.stdout
    url = f"sqlite+aiosqlite:///{tmp_path / 'data' / 'roundhouse.db'}"
    assert current_revision(url) == head
    assert _account(url, "random-bot").kind == "system"


def test_create_admin_and_promote(database_url):
    env = {"ROUNDHOUSE_DATABASE_URL": database_url}
    done = roundhouse("accounts", "create-admin", "Boss", env=env, stdin=PASSWORD + "\n")
    assert done.returncode == 0, done.stderr
    boss = _account(database_url, "boss")
    assert boss.is_admin and boss.kind == "human" and boss.password_hash.startswith("$argon2")
    again = roundhouse("accounts", "create-admin", "BOSS", env=env, stdin=PASSWORD + "\n")
    assert again.returncode == 2 and "taken" in again.stderr
    bad = roundhouse("accounts", "create-admin", "<b>x</b>", env=env, stdin=PASSWORD + "\n")
    assert bad.returncode == 2 and "bad_username" in bad.stderr
    short = roundhouse("accounts", "create-admin", "shorty", env=env, stdin="short\n")
    assert short.returncode == 2 and "bad_password" in short.stderr
    assert _account(database_url, "shorty") is None
    missing = roundhouse("accounts", "create-admin", "nobody", "--promote", env=env)
    assert missing.returncode == 2 and "no person" in missing.stderr
