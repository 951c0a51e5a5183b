"""The hot store: one Redis or a Redis Cluster, behind the same code.

``ROUNDHOUSE_REDIS_CLUSTER=1`` makes every process talk to a Redis Cluster
(``ROUNDHOUSE_REDIS_URL`` names any one node; the client finds the others and
follows failovers and resharding), through redis-py's cluster clients; off (the
default), to one Redis. Everything that touches several keys at once (a Lua
script, a MULTI/EXEC transaction, a multi-key command) names keys of one hash
slot, so it runs on either:

* **a game's keys and its lifecycle shard share one hash tag** (:class:`KeySpace`): the
  creation record ``P:game:{T}:G:meta``, the log ``P:game:{T}:G:log``, the idempotency
  answers ``P:game:{T}:G:idem`` and the lifecycle shard stream ``P:lifecycle:{T}``, where
  ``T`` is the tag of the game's shard. The shard is the one whose range of hash slots
  holds the game id's own slot (``CRC16(game id) mod 16384``; shard ``k`` of ``S`` covers
  slots ``k*16384/S`` to ``(k+1)*16384/S - 1``), and the shard's tag is a short string
  whose slot is the middle of that range (:func:`shard_tags`), so the ``S`` shards lie
  evenly over the slot space and masters that own equal slot ranges get equal shares.
* the other multi-key scripts and transactions (account events, the clock keeper, bot
  heartbeats) tag their keys likewise; see each module.

Why not the literal ``{game_id}`` tag: Redis Cluster runs a script only if all its keys
hash to one slot (else ``CROSSSLOT``), so the script that appends a move and its lifecycle
event atomically needs a lifecycle stream in the game's slot; with ``{game_id}`` that is
any of 16,384 slots, so there would have to be a stream per slot and every consumer group
would read 16,384 streams. With the shard's tag there are ``S`` (``lifecycle_shards``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import itertools
import os
import traceback
from binascii import crc_hqx
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.cluster import PipelineCommand
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

SLOTS = REDIS_CLUSTER_HASH_SLOTS
"""Hash slots of a Redis Cluster (16,384)."""

DEFAULT_LIFECYCLE_SHARDS = 1
"""``lifecycle_shards`` by default on one Redis: one stream, read as before the cluster
layout (with more, each consumer's reads and acknowledgements cost more: one ``XACK`` per
shard that had entries; ``docs/benchmarks.md``, "Redis Cluster")."""
CLUSTER_LIFECYCLE_SHARDS = 12
"""``lifecycle_shards`` by default on a Redis Cluster: a multiple of 1, 2, 3, 4 and 6 masters."""

OUTAGE: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ClusterDownError,  # a failover under way (also MasterDownError)
    redis.exceptions.TryAgainError,  # a slot being moved
    redis.exceptions.SlotNotCoveredError,
)
"""The errors of a store that is (for now) away: a lost connection, a timeout, and on a
cluster a failover or a slot migration under way. Callers retry or answer UNAVAILABLE
(:func:`is_outage`)."""

_REDIS_PACKAGE = os.path.dirname(redis.__file__) + os.sep


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` means the store is (for now) away: one of :data:`OUTAGE`, or the
    low-level error redis-py 8.1's asyncio connections let out when a connection is closed
    under a write (``RuntimeError`` "handler is closed" from uvloop, ``AttributeError`` /
    ``TypeError`` on a writer set to None: redis/redis-py#4287, #3546), raised inside
    redis-py. The asyncio cluster client closes every connection of the client when a
    command meets ``CLUSTERDOWN`` during a failover, under the feet of the other tasks'
    commands, which then fail that way."""
    if isinstance(exc, OUTAGE):
        return True
    if not isinstance(exc, RuntimeError | AttributeError | TypeError):
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    return any(frame.filename.startswith(_REDIS_PACKAGE) for frame in frames)


class NotReplicated(redis.exceptions.RedisError):
    """A write went to the primary but ``WAIT`` did not see it on enough replicas within
    its timeout: it may still be lost in a failover, so it is not acknowledged.

    Attributes: ``replicas`` (how many had it), ``wanted``, ``timeout_ms``.
    """

    def __init__(self, replicas: int, wanted: int, timeout_ms: int) -> None:
        super().__init__(
            f"the write reached {replicas} of the {wanted} replicas asked for in {timeout_ms} ms"
        )
        self.replicas, self.wanted, self.timeout_ms = replicas, wanted, timeout_ms


# ---------------------------------------------------------------------- slots and shards


def slot_of(text: str) -> int:
    """The hash slot of a key or tag (``{...}`` tags honoured, as Redis Cluster does)."""
    return key_slot(text.encode())


def shard_of(game_id: str, shards: int) -> int:
    """The lifecycle shard of a game: the shard whose range of slots holds the slot of
    the game id itself (``0 <= shard < shards``)."""
    return key_slot(game_id.encode(), SLOTS) * shards // SLOTS


@functools.lru_cache(maxsize=8)
def shard_tags(shards: int) -> tuple[str, ...]:
    """The hash tag of each of ``shards`` shards: for shard ``k``, the first of
    ``"S.0", "S.1", "S.2", ...`` (``S`` = ``shards``, so that no two shard counts share a
    tag) whose slot is the middle slot of the shard's range,
    ``(2k + 1) * 16384 // (2 * shards)``. Deterministic (every process finds the same);
    about 50,000 CRC16s for 12 shards (~20 ms, once per process).

    Raises:
        ValueError: ``shards`` outside 1..16384.
    """
    if not 1 <= shards <= SLOTS:
        raise ValueError(f"lifecycle shards must be 1 to {SLOTS}, not {shards}")
    wanted = {(2 * k + 1) * SLOTS // (2 * shards): k for k in range(shards)}
    tags: dict[int, str] = {}
    head = f"{shards}.".encode()
    for n in itertools.count():
        k = wanted.get(crc_hqx(b"%s%d" % (head, n), 0) % SLOTS)  # no braces: key_slot's value
        if k is not None and k not in tags:
            tags[k] = f"{shards}.{n}"
            if len(tags) == shards:
                return tuple(tags[k] for k in range(shards))
    raise AssertionError("unreachable")  # pragma: no cover - itertools.count never ends


def turns_key(prefix: str) -> str:
    """The hash of running bot tasks: task id -> JSON list of the task's args."""
    return f"{prefix}:{{bot-turns}}"


@dataclasses.dataclass(frozen=True)
class KeySpace:
    """Names of the game keys and the lifecycle shard streams (module docstring).

    Args:
        prefix: the key prefix (``key_prefix``; may not contain ``{``).
        shards: lifecycle shards (``lifecycle_shards``); fixed for a deployment's life
            (changing it renames every game's keys: ``roundhouse hotstore migrate``).
    """

    prefix: str
    shards: int = DEFAULT_LIFECYCLE_SHARDS

    def __post_init__(self) -> None:
        if "{" in self.prefix or "}" in self.prefix:
            raise ValueError(f"the key prefix may not contain braces: {self.prefix!r}")
        shard_tags(self.shards)  # checks the count, computes the tags once

    def tag(self, game_id: str) -> str:
        """The hash tag of a game's keys (its shard's)."""
        return shard_tags(self.shards)[shard_of(game_id, self.shards)]

    def game(self, game_id: str, part: str) -> str:
        """A game's key: ``part`` is ``meta``, ``log``, ``idem`` or ``moves``."""
        return f"{self.prefix}:game:{{{self.tag(game_id)}}}:{game_id}:{part}"

    def meta(self, game_id: str) -> str:
        return self.game(game_id, "meta")

    def log(self, game_id: str) -> str:
        return self.game(game_id, "log")

    def idem(self, game_id: str) -> str:
        return self.game(game_id, "idem")

    def lifecycle(self, game_id: str) -> str:
        """The lifecycle shard stream a game's events go to."""
        return self.shard_stream(shard_of(game_id, self.shards))

    def shard_stream(self, shard: int) -> str:
        return f"{self.prefix}:lifecycle:{{{shard_tags(self.shards)[shard]}}}"

    @property
    def lifecycle_streams(self) -> tuple[str, ...]:
        """Every lifecycle shard stream, shard 0 first (what every consumer group reads)."""
        return tuple(self.shard_stream(k) for k in range(self.shards))


# ---------------------------------------------------------------------- clients


def async_client(
    url: str, max_connections: int, timeout_s: float = 5.0, *, cluster: bool = False
) -> aioredis.Redis | AsyncRedisCluster:
    """An asyncio client with ``decode_responses``. One Redis: a pool of at most
    ``max_connections``, where a call waits up to ``timeout_s`` for a free connection.
    A cluster (``url`` naming any node): at most ``max_connections`` per node (past that a
    call fails at once with ``MaxConnectionsError``, a ``ConnectionError``)."""
    if cluster:
        return AsyncRedisCluster.from_url(
            url, max_connections=max_connections, decode_responses=True
        )
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=timeout_s, decode_responses=True
    )
    return aioredis.Redis(connection_pool=pool)


def sync_client(url: str, *, cluster: bool = False, **kwargs: Any) -> redis.Redis | RedisCluster:
    """A synchronous client (``kwargs`` go to redis-py: ``decode_responses``,
    ``socket_timeout``...) of one Redis, or of the cluster ``url``'s node belongs to."""
    if cluster:
        return RedisCluster.from_url(url, **kwargs)
    return redis.Redis.from_url(url, **kwargs)


async def pubsub(client: aioredis.Redis | AsyncRedisCluster) -> Any:
    """A pub/sub of ``client``. On a cluster (where a ``PUBLISH`` reaches every node) it
    subscribes on the node of the channel's slot, which the client must know first: so it
    learns the cluster's layout before (redis-py's cluster pub/sub does not)."""
    if is_cluster(client):
        await client.initialize()  # type: ignore[union-attr]
    return client.pubsub()


async def publish_id(client: aioredis.Redis | AsyncRedisCluster, channel: str, id: str) -> str:
    """Send ``id`` on ``channel`` (what :func:`follow_ids` follows), best effort: "" when sent,
    else the outage's ``repr`` for the caller's log (a follower that misses it relies on its
    cache's time bound)."""
    try:
        await client.publish(channel, id)
    except OUTAGE as exc:
        return repr(exc)
    return ""


async def follow_ids(
    client: aioredis.Redis | AsyncRedisCluster,
    channel: str,
    forget: Callable[[str], None],
    clear: Callable[[], None],
    stop: asyncio.Event,
) -> None:
    """Call ``forget`` with each message of ``channel`` (an id: a revoked token, a changed
    table) until ``stop`` is set; ``clear`` once subscribed, since pub/sub delivers at most
    once and messages sent before may have been missed. Raises what Redis raises (run it under
    :class:`services.platform.supervise.Supervisor`, which restarts it)."""
    subscription = await pubsub(client)
    try:
        await subscription.subscribe(channel)
        clear()
        while not stop.is_set():
            message = await subscription.get_message(ignore_subscribe_messages=True, timeout=1.0)
            if message is not None:
                data = message["data"]
                forget(data.decode() if isinstance(data, bytes) else str(data))
    finally:
        await subscription.aclose()


def is_cluster(client: object) -> bool:
    """Whether ``client`` talks to a Redis Cluster."""
    return isinstance(client, AsyncRedisCluster | RedisCluster)


def limits_uri(url: str, cluster: bool) -> str:
    """The ``limits`` library's storage URI for the asyncio redis-py client: one Redis
    (``async+redis://...``) or a cluster (``async+redis+cluster://host:port``)."""
    if not cluster:
        return "async+" + url
    parts = urlsplit(url)
    return urlunsplit(("async+redis+cluster", parts.netloc, "", "", ""))


# ---------------------------------------------------------------------- WAIT


async def eval_then_wait(
    client: aioredis.Redis | AsyncRedisCluster,
    sha: str,
    script: str,
    keys: Sequence[str],
    args: Sequence[Any],
    replicas: int,
    timeout_ms: int,
) -> tuple[Any, int]:
    """Run a Lua script (by its SHA1, loading it on ``NOSCRIPT``) and then ``WAIT replicas
    timeout_ms`` on the same connection, in one round trip; returns ``(the script's
    answer, replicas that acknowledged)``.

    WAIT counts the replicas that have every write *this connection* made, so it must
    follow the script on its connection and nowhere else (on another connection it would
    answer at once with every replica: a false acknowledgement). One Redis: a pipeline
    (one connection). A cluster: both commands sent by hand on one connection of the
    primary of the keys' slot, never retried by the client library (redis-py's cluster
    pipeline retries a failed pipeline with its routing recomputed, which sends the WAIT
    elsewhere); a slot that moved (``MOVED``) is looked up again and the pair sent once
    more; a lost connection is raised (the caller answers UNAVAILABLE and the client retries
    with the same idempotency key).
    """
    for attempt in range(3):
        try:
            if is_cluster(client):
                return await _eval_then_wait_cluster(
                    client,  # type: ignore[arg-type]
                    sha,
                    keys,
                    args,
                    replicas,
                    timeout_ms,
                )
            async with client.pipeline(transaction=False) as pipe:
                pipe.evalsha(sha, len(keys), *keys, *args)
                pipe.wait(replicas, timeout_ms)
                answer, acked = await pipe.execute()
            return answer, int(acked)
        except redis.exceptions.NoScriptError:
            await client.script_load(script)
        except redis.exceptions.MovedError:
            if attempt == 2:
                raise
            await client.nodes_manager.initialize()  # type: ignore[union-attr]
    raise redis.exceptions.NoScriptError("the script could not be loaded")


async def _eval_then_wait_cluster(
    client: AsyncRedisCluster,
    sha: str,
    keys: Sequence[str],
    args: Sequence[Any],
    replicas: int,
    timeout_ms: int,
) -> tuple[Any, int]:
    await client.initialize()
    node = client.get_node_from_key(keys[0])
    commands = [
        PipelineCommand(0, "EVALSHA", sha, len(keys), *keys, *args),
        PipelineCommand(1, "WAIT", replicas, timeout_ms),
    ]
    try:
        await node.execute_pipeline(commands)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
        await _relearn(client)
        raise
    for command in commands:
        if isinstance(command.result, redis.exceptions.AskError | redis.exceptions.MovedError):
            if not isinstance(command.result, redis.exceptions.MovedError):  # ASK: migrating
                raise redis.exceptions.TryAgainError("the slot is being moved; retry")
            raise command.result
        if isinstance(command.result, Exception):
            if isinstance(command.result, OUTAGE):
                await _relearn(client)
            raise command.result
    return commands[0].result, int(commands[1].result)


async def _relearn(client: AsyncRedisCluster) -> None:
    """Ask the cluster for its layout again (a failover may have moved the slot)."""
    with contextlib.suppress(*OUTAGE):
        await client.nodes_manager.initialize()
