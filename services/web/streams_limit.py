"""How many NDJSON streams one token may hold open at once, over every
gateway that shares the Redis.

A Redis sorted set per token (``P:gw:streams:<token fingerprint>``;
anonymous streams count per client address): one member per open stream,
scored with the time it last showed life. Opening is one Lua script: it drops
members not refreshed for ``ttl_s`` (a gateway that died holding streams),
counts, and adds the new stream if under the limit. An open stream refreshes
its score every keep-alive and removes itself when it ends. So a crashed
gateway's slots free themselves after ``ttl_s`` (three keep-alives).
"""

from __future__ import annotations

import time
import uuid

import grpc
import redis.asyncio as aioredis

from services.web.errors import ApiError

_OPEN_LUA = """
-- KEYS: the token's set; ARGV: now, ttl, limit, member
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tostring(oldest[2])}
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
return {1, ''}
"""


class StreamSlots:
    """Args: ``client`` (redis.asyncio), ``prefix`` (key prefix), ``limit``
    (streams per token), ``ttl_s`` (a slot not refreshed this long is free)."""

    def __init__(self, client: aioredis.Redis, prefix: str, limit: int, ttl_s: float) -> None:
        self.r, self.prefix, self.limit, self.ttl_s = client, prefix, limit, ttl_s
        self._open = client.register_script(_OPEN_LUA)

    def key(self, who: str) -> str:
        return f"{self.prefix}:gw:streams:{who}"

    async def acquire(self, who: str) -> str:
        """A slot for a new stream of ``who``; its id. Raises ApiError 429
        ``too_many_streams`` (``Retry-After``) past the limit."""
        member = uuid.uuid4().hex
        ok, oldest = await self._open(
            keys=[self.key(who)], args=[time.time(), self.ttl_s, self.limit, member]
        )
        if not int(ok):
            retry = max(1, round(self.ttl_s - (time.time() - float(oldest or 0))))
            raise ApiError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too_many_streams",
                f"at most {self.limit} open streams per token; close one first",
                max_streams=self.limit,
                retry_after_s=min(retry, round(self.ttl_s)),
            )
        return member

    async def refresh(self, who: str, member: str) -> None:
        await self.r.zadd(self.key(who), {member: time.time()}, xx=True)

    async def release(self, who: str, member: str) -> None:
        await self.r.zrem(self.key(who), member)
