"""``lobby_env``: run ``async def body(env)`` against a fresh in-process lobby
(services/lobby/tests/harness.py) on ``store_url`` (PostgreSQL and SQLite)."""

from __future__ import annotations

import asyncio

import pytest

from services.lobby.tests.harness import running_lobby


@pytest.fixture
def lobby_env(store_url, redis_url, key_prefix):
    def run(body, **options):
        async def main():
            async with running_lobby(store_url, redis_url, key_prefix, **options) as env:
                return await body(env)

        return asyncio.run(main())

    return run


@pytest.fixture
def pg_lobby_env(database_url, redis_url, key_prefix):
    """The same on PostgreSQL only (row-lock races)."""

    def run(body, **options):
        async def main():
            async with running_lobby(database_url, redis_url, key_prefix, **options) as env:
                return await body(env)

        return asyncio.run(main())

    return run
