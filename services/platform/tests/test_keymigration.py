"""``roundhouse hotstore migrate`` (services/platform/keymigration.py): keys of the layout
before the Redis Cluster one are moved to their new names, a game goes on where it was,
the lifecycle entries a group has not yet acknowledged reach every group again, and
nothing else is touched. On one Redis, and from one Redis into a cluster."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
import redis
import redis.asyncio as aioredis

from services.platform.gamelog import GameLog, LogEntry
from services.platform.hotstore import CLUSTER_LIFECYCLE_SHARDS, KeySpace, sync_client, turns_key
from services.platform.keymigration import StillRunning, migrate

GAMES = ("railbarons-t1", "transsib-t2", "e1894-t3")


def old_layout(r: redis.Redis, prefix: str) -> dict:
    """What a store written by the version before looks like: three games, the shared
    lifecycle stream read by two groups (one behind, with a pending entry), account
    events with a dedupe marker, the keeper's keys and the running bot turns."""
    for n, game_id in enumerate(GAMES):
        r.set(f"{prefix}:game:{game_id}:meta", json.dumps({"title": "x", "seed": n}))
        for v in (1, 2):
            fields = LogEntry(v, 0, '{"type":"pass"}', "[]", (0,), False).fields()
            r.xadd(f"{prefix}:game:{game_id}:log", fields, id=f"{v}-0")
        r.hset(f"{prefix}:game:{game_id}:idem", "0:k", json.dumps({"version": 2}))
    r.expire(f"{prefix}:game:{GAMES[2]}:meta", 3600)  # an archived game: it expires
    life = f"{prefix}:lifecycle"
    ids = [r.xadd(life, {"type": "turn", "game_id": g, "version": "2"}) for g in GAMES * 2]
    r.xgroup_create(life, "ahead", id=ids[-2])  # has read (and acknowledged) all but one
    r.xgroup_create(life, "behind", id=ids[1])  # acknowledged the first two...
    r.xreadgroup("behind", "old-pod", {life: ">"}, count=1)  # ...and holds the third
    r.xadd(f"{prefix}:events:acc1", {"type": "yourTurn"}, id="1700000000000-0")
    r.set(f"{prefix}:events:seen:acc1:yourTurn:g:2:0", "1", ex=600)
    r.zadd(f"{prefix}:clocks:deadlines", {GAMES[0]: 123})
    r.hset(f"{prefix}:clocks:games", GAMES[0], "{}")
    r.hset(f"{prefix}:bot-turns", "task-1", "[]")
    r.set(f"{prefix}:table:t1:live", "{}")  # not renamed
    return {"ids": ids}


def test_old_keys_move_to_the_new_layout_and_a_game_goes_on(redis_url, key_prefix):
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    old = old_layout(r, key_prefix)
    keys = KeySpace(key_prefix, 4)
    with pytest.raises(StillRunning):  # "old-pod" read the stream a moment ago
        migrate(r, r, keys, same_store=True)
    dry = migrate(r, r, keys, same_store=True, force=True, dry_run=True)
    assert r.exists(f"{key_prefix}:game:{GAMES[0]}:log")  # a dry run moves nothing
    report = migrate(r, r, keys, same_store=True, force=True)
    assert report.moved == dry.moved
    assert report.moved["game keys"] == 9 and report.conflicts == []
    for game_id in GAMES:
        assert [i for i, _ in r.xrange(keys.log(game_id))] == ["1-0", "2-0"]
        assert r.hget(keys.idem(game_id), "0:k") == json.dumps({"version": 2})
        assert not r.exists(f"{key_prefix}:game:{game_id}:log")
    assert 0 < r.ttl(keys.meta(GAMES[2])) <= 3600 and r.ttl(keys.meta(GAMES[0])) == -1
    # the lifecycle: from the oldest entry a group still needs (the held third) on, each
    # in its game's shard, and both groups on every shard
    assert not r.exists(f"{key_prefix}:lifecycle")
    copied = {s: r.xrange(s) for s in keys.lifecycle_streams}
    assert report.entries_copied == 4 == sum(len(v) for v in copied.values())
    for shard, entries in copied.items():
        assert all(keys.lifecycle(f["game_id"]) == shard for _, f in entries)
        assert {g["name"] for g in r.xinfo_groups(shard)} == {"ahead", "behind"}
    copied_games = sorted(f["game_id"] for v in copied.values() for _, f in v)
    assert copied_games == sorted([GAMES[2], *GAMES])  # the held third entry on
    assert r.xrange(f"{key_prefix}:events:{{acc1}}")[0][0] == "1700000000000-0"
    assert 0 < r.ttl(f"{key_prefix}:events:{{acc1}}:seen:yourTurn:g:2:0") <= 600
    assert r.zscore(f"{key_prefix}:{{clocks}}:deadlines", GAMES[0]) == 123
    assert r.hget(turns_key(key_prefix), "task-1") == "[]"
    assert r.exists(f"{key_prefix}:table:t1:live")
    assert old["ids"]
    # again: nothing left to move
    again = migrate(r, r, keys, same_store=True)
    assert sum(again.moved.values()) == 0 and again.entries_copied == 0

    async def goes_on():
        client = aioredis.from_url(redis_url, decode_responses=True)
        log = GameLog(client, key_prefix, shards=4)
        entry = LogEntry(3, 0, '{"type":"pass"}', "[]", (0,), False)
        outcome = await log.append(GAMES[0], 2, entry, "0:k2", "{}", {"type": "turn"})
        duplicate = await log.append(GAMES[0], 1, entry, "0:k", "{}", {"type": "turn"})
        await client.aclose()
        return outcome, duplicate

    outcome, duplicate = asyncio.run(goes_on())
    assert (outcome.status, outcome.version) == ("ok", 3)
    assert duplicate.status == "duplicate"  # the stored answers moved with the game
    r.close()


def test_a_single_redis_is_copied_into_a_cluster(redis_url, redis_cluster, key_prefix):
    single = redis.Redis.from_url(redis_url, decode_responses=True)
    old_layout(single, key_prefix)
    keys = KeySpace(key_prefix, CLUSTER_LIFECYCLE_SHARDS)
    with contextlib.closing(
        sync_client(redis_cluster.url, cluster=True, decode_responses=True)
    ) as cluster:
        report = migrate(single, cluster, keys, same_store=False, force=True)
        assert report.moved["game keys"] == 9 and report.entries_copied == 4
        for game_id in GAMES:
            assert len(cluster.xrange(keys.log(game_id))) == 2
        assert single.exists(f"{key_prefix}:game:{GAMES[0]}:log")  # the old server: as it was
        assert single.exists(f"{key_prefix}:lifecycle")
        for key in cluster.scan_iter(f"{key_prefix}:*"):
            cluster.delete(key)
    single.close()


def test_a_new_shard_count_re_tags_the_games_and_moves_the_unread_events(redis_url, key_prefix):
    """One Redis at the default single shard, then 4: the games' keys get the tags of their
    new shards, and what the groups had not read reaches them on the new shards."""

    async def write():
        client = aioredis.from_url(redis_url, decode_responses=True)
        log = GameLog(client, key_prefix, shards=1)
        for game_id in GAMES:
            await log.create(game_id, {"seed": 1}, {"type": "game_created", "game_id": game_id})
            entry = LogEntry(1, 0, '{"type":"pass"}', "[]", (0,), False)
            await log.append(game_id, 0, entry, "0:k", "{}", {"type": "turn", "game_id": game_id})
        await client.aclose()
        return log.lifecycle_keys[0]

    old_shard = asyncio.run(write())
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    r.xgroup_create(old_shard, "g", id="0")  # a group that has read nothing yet
    keys = KeySpace(key_prefix, 4)
    report = migrate(r, r, keys, same_store=True)
    assert report.moved["game keys"] == 9 and report.entries_copied == 6
    assert not r.exists(old_shard)
    for game_id in GAMES:
        assert [f["version"] for _, f in r.xrange(keys.log(game_id))] == ["1"]
        events = [
            f["type"] for _, f in r.xrange(keys.lifecycle(game_id)) if f["game_id"] == game_id
        ]
        assert events == ["game_created", "turn"]
        assert "g" in {g["name"] for g in r.xinfo_groups(keys.lifecycle(game_id))}
    r.close()
