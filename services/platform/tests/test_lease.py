"""Leader leases (services/platform/lease.py) on a real Redis and on a real Redis
Cluster: one holder at a time; a holder that stops renewing loses the lease, and
knows it, before another replica can take it; a clean release hands it over at
the other's next try."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from services.platform.lease import Lease

TTL_S = 0.6


async def until(condition, limit_s: float = 10.0) -> None:
    """Poll ``condition`` every 20 ms, at most ``limit_s`` (a bound, not a timing)."""
    for _ in range(int(limit_s / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the condition never held")


async def handover(client_a, client_b, prefix: str) -> None:
    a = Lease(client_a, prefix, "job", TTL_S)
    b = Lease(client_b, prefix, "job", TTL_S)
    assert await a.try_hold() and a.held
    assert not await b.try_hold() and not b.held
    assert await a.try_hold(), "the holder renews"
    assert not await b.try_hold()
    # a stops renewing (frozen, or killed -9): it knows it lost the lease before b can take it
    await until(lambda: not a.held)
    for _ in range(200):
        if await b.try_hold():
            break
        await asyncio.sleep(0.05)
    assert b.held and not a.held
    assert not await a.try_hold(), "the old holder does not take it back while b renews"
    assert b.terms == 1 and a.terms == 1
    # a clean stop releases: the next try of the other replica takes it
    await b.release()
    assert not b.held
    assert await a.try_hold() and a.held and a.terms == 2


def handover_between_two_clients(client_class, url: str, prefix: str) -> None:
    """:func:`handover` between two clients of ``client_class`` on ``url`` (two replicas)."""

    async def go():
        a = client_class.from_url(url, decode_responses=True)
        b = client_class.from_url(url, decode_responses=True)
        try:
            await handover(a, b, prefix)
        finally:
            await a.aclose()
            await b.aclose()

    asyncio.run(go())


def test_one_holder_at_a_time_and_failover_when_the_holder_stops_renewing(redis_url, key_prefix):
    handover_between_two_clients(aioredis.Redis, redis_url, key_prefix)


@pytest.mark.integration
def test_the_same_lease_works_on_a_redis_cluster(redis_cluster, key_prefix):
    handover_between_two_clients(RedisCluster, redis_cluster.url, key_prefix)


def test_keep_renews_until_stopped_then_releases(redis_url, key_prefix):
    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        try:
            a = Lease(r, key_prefix, "job", TTL_S)
            b = Lease(r, key_prefix, "job", TTL_S)
            stop = asyncio.Event()
            keeper = asyncio.create_task(a.keep(stop))
            assert await a.wait_held(stop)
            for _ in range(5):  # several TTLs: renewed all along
                await asyncio.sleep(TTL_S / 2)
                assert a.held
                assert not await b.try_hold()
            stop.set()
            await keeper
            assert not a.held
            assert await b.try_hold()
            assert not await a.wait_held(stop), "a stopped waiter returns False"
        finally:
            await r.aclose()

    asyncio.run(go())


def test_a_ttl_must_be_positive(redis_url):
    with pytest.raises(ValueError, match="positive"):
        Lease(aioredis.from_url(redis_url), "p", "job", 0)
