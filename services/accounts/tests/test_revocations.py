"""A revoked token leaves every server's token cache at once (Redis pub/sub,
``services/accounts/revocations.py``): an accounts server revokes it, and a second
verifier standing for another server (the lobby, another replica), which would trust
the cached token for an hour, refuses it right away."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from roundhouse.v1 import accounts_pb2
from services.accounts.revocations import follow_revocations
from services.accounts.tests.conftest import bearer, running_accounts
from services.accounts.verifier import StoreVerifier
from services.platform.auth import AuthError


async def _until(predicate, seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "not within the deadline"
        await asyncio.sleep(0.02)


def test_a_revocation_reaches_another_servers_cache_at_once(store_url, redis_url, key_prefix):
    async def go():
        async with running_accounts(store_url, redis_url, key_prefix, cache_seconds=3600) as env:
            client = aioredis.Redis.from_url(redis_url)
            other = StoreVerifier(env.store, cache_seconds=3600)  # another server's cache
            token = await env.person("rita")
            token_id = (await other.verify(token)).token_id
            stop = asyncio.Event()
            follower = asyncio.create_task(follow_revocations(client, key_prefix, other, stop))
            try:
                # once subscribed the follower empties the cache (it may have missed messages)
                await _until(lambda: not other.cached(token_id))
                assert (await other.verify(token)).username == "rita"
                assert other.cached(token_id)  # trusted for an hour from now on
                await env.stub.RevokeToken(
                    accounts_pb2.RevokeTokenRequest(token_id=token_id), metadata=bearer(token)
                )
                await _until(lambda: not other.cached(token_id))
                try:
                    await other.verify(token)
                except AuthError as err:
                    assert err.reason == "token_revoked"
                else:
                    raise AssertionError("the other server still trusts a revoked token")
            finally:
                stop.set()
                await follower
                await client.aclose()

    asyncio.run(go())
