"""``gateway_env``: run ``async def body(env)`` against a fresh gateway
(services/web/tests/harness.py) on SQLite and a private Redis."""

from __future__ import annotations

import asyncio

import pytest

from services.web.tests.harness import running_gateway


@pytest.fixture
def gateway_env(sqlite_database_url, redis_url, key_prefix):
    def run(body, **options):
        async def main():
            url = sqlite_database_url
            async with running_gateway(url, redis_url, key_prefix, **options) as env:
                return await body(env)

        return asyncio.run(main())

    return run
