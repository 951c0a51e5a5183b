"""Lifecycle consumers (services/platform/consumer.py) against a real Redis: each
entry is handled and acknowledged; a failing handler leaves its entry pending
and it is retried; a crashed consumer's entries are claimed by another."""

from __future__ import annotations

import asyncio
import time

import redis.asyncio as aioredis

from services.platform import hotstore
from services.platform.consumer import consume
from services.platform.hotstore import KeySpace


def run(coro):
    return asyncio.run(coro)


async def _drive(r, stream, group, name, handle, done, timeout=10.0, **kw):
    """Run the consumer until ``await done()`` is true (or fail after ``timeout``)."""
    stop = asyncio.Event()
    task = asyncio.create_task(
        consume(r, stream, group, name, handle, block_ms=100, stop=stop, **kw)
    )
    deadline = asyncio.get_running_loop().time() + timeout
    while not await done():
        assert asyncio.get_running_loop().time() < deadline, "the consumer did not get there"
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(task, 5)


def _settled(r, stream, seen, count):
    async def done():
        return len(seen) >= count and (await r.xpending(stream, "g"))["pending"] == 0

    return done


def test_every_entry_is_handled_once_and_acknowledged(redis_url, key_prefix):
    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        stream = f"{key_prefix}:life"
        for i in range(5):
            await r.xadd(stream, {"n": str(i)})
        seen = []

        async def handle(fields):
            seen.append(fields["n"])

        await _drive(r, stream, "g", "c1", handle, _settled(r, stream, seen, 5))
        assert seen == ["0", "1", "2", "3", "4"]
        assert (await r.xpending(stream, "g"))["pending"] == 0
        await r.aclose()

    run(go())


def test_a_failing_handler_is_retried_until_it_succeeds(redis_url, key_prefix):
    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        stream = f"{key_prefix}:life"
        await r.xadd(stream, {"n": "x"})
        attempts = []

        async def handle(fields):
            attempts.append(fields["n"])
            if len(attempts) < 3:
                raise RuntimeError("transient")

        await _drive(
            r,
            stream,
            "g",
            "c1",
            handle,
            _settled(r, stream, attempts, 3),
            claim_idle_ms=50,
            claim_every_s=0.2,
        )
        assert attempts == ["x", "x", "x"]
        assert (await r.xpending(stream, "g"))["pending"] == 0
        await r.aclose()

    run(go())


def test_a_crashed_consumers_entries_are_claimed_and_own_pending_resumed(redis_url, key_prefix):
    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        stream = f"{key_prefix}:life"
        await r.xgroup_create(stream, "g", id="0", mkstream=True)
        await r.xadd(stream, {"n": "a"})
        await r.xadd(stream, {"n": "b"})
        # 'dead' reads both and crashes before acknowledging them
        await r.xreadgroup("g", "dead", {stream: ">"}, count=1)
        await r.xreadgroup("g", "restarted", {stream: ">"}, count=1)
        seen = []

        async def handle(fields):
            seen.append(fields["n"])

        # 'restarted' resumes its own pending entry at once; the dead one's is claimed
        await _drive(
            r,
            stream,
            "g",
            "restarted",
            handle,
            _settled(r, stream, seen, 2),
            claim_idle_ms=100,
            claim_every_s=0.3,
        )
        assert sorted(seen) == ["a", "b"]
        assert (await r.xpending(stream, "g"))["pending"] == 0
        await r.aclose()

    run(go())


def test_a_missing_group_is_created_again_and_the_loop_carries_on(redis_url, key_prefix):
    """Redis restarted empty (or the group was destroyed): ``NOGROUP`` does
    not end the loop; the group is created again and new entries are handled
    (issue 13, item 5)."""

    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        stream = f"{key_prefix}:life"
        await r.xadd(stream, {"n": "0"})
        seen = []

        async def handle(fields):
            seen.append(fields["n"])

        stop = asyncio.Event()
        task = asyncio.create_task(
            consume(r, stream, "g", "c1", handle, block_ms=100, claim_every_s=0.2, stop=stop)
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while seen != ["0"]:
            assert loop.time() < deadline
            await asyncio.sleep(0.05)
        await r.delete(stream)  # the stream and its groups are gone, as after a restart
        await asyncio.sleep(0.3)
        await r.xadd(stream, {"n": "1"})
        while seen != ["0", "1"] or (await r.xpending(stream, "g"))["pending"]:
            if task.done():
                raise task.exception()
            assert loop.time() < deadline, seen
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(task, 5)
        await r.aclose()

    run(go())


def test_a_lingering_consumer_reads_what_came_meanwhile_in_one_batch(redis_url, key_prefix):
    """With ``linger_ms`` the consumer waits after a batch, so entries appended meanwhile
    come in one read (one XACK), each handled once and in order."""

    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        stream = f"{key_prefix}:life"
        reads: list[list[str]] = []
        real_read = r.xreadgroup

        async def counted_read(*args, **kwargs):
            batch = await real_read(*args, **kwargs)
            reads.append([fields["n"] for _, fields in batch[0][1]] if batch else [])
            return batch

        r.xreadgroup = counted_read  # type: ignore[method-assign]
        seen: list[str] = []
        later: list[asyncio.Task] = []

        async def trickle():  # after entry 0 was handled: one entry every 30 ms
            for i in (1, 2, 3):
                await asyncio.sleep(0.03)
                await r.xadd(stream, {"n": str(i)})

        async def handle(fields):
            seen.append(fields["n"])
            if fields["n"] == "0":
                later.append(asyncio.create_task(trickle()))

        await r.xadd(stream, {"n": "0"})
        await _drive(r, stream, "g", "c1", handle, _settled(r, stream, seen, 4), linger_ms=300)
        assert seen == ["0", "1", "2", "3"]
        batches = [b for b in reads if b]
        assert ["1", "2", "3"] in batches, batches  # without lingering: ["1"], ["2"], ["3"]
        await asyncio.gather(*later)
        await r.aclose()

    run(go())


def _shards(key_prefix: str, n: int = 4) -> tuple[str, ...]:
    """``n`` lifecycle shard streams of different hash slots."""
    return KeySpace(key_prefix, n).lifecycle_streams


async def _pending(r, streams) -> int:
    return sum([(await r.xpending(s, "g"))["pending"] for s in streams])


def _sharded_case(r, streams):
    """Entries on every shard, two of them read by a consumer that crashed, one of them
    failing once: every entry of every shard is handled and acknowledged; the failing one
    is retried; a shard's own order is kept."""

    async def go():
        for s in streams:
            await r.xgroup_create(s, "g", id="0", mkstream=True)
        for i in range(12):
            await r.xadd(streams[i % len(streams)], {"n": str(i), "s": streams[i % len(streams)]})
        await r.xreadgroup("g", "dead", {streams[0]: ">"}, count=1)  # "0": claimed later
        await r.xreadgroup("g", "c1", {streams[1]: ">"}, count=1)  # "1": c1's own, resumed
        seen: list[tuple[str, int]] = []
        failed: list[str] = []

        async def handle(fields):
            if fields["n"] == "6" and not failed:
                failed.append("6")
                raise RuntimeError("once")
            seen.append((fields["s"], int(fields["n"])))

        async def done():
            return len(seen) == 12 and await _pending(r, streams) == 0

        await _drive(
            r, streams, "g", "c1", handle, done, claim_idle_ms=100, claim_every_s=0.3, timeout=20
        )
        assert sorted(n for _, n in seen) == list(range(12)) and failed == ["6"]
        for s in streams:
            mine = [n for stream, n in seen if stream == s and n not in (0, 6)]
            assert mine == sorted(mine)

    return go()


def test_every_shard_is_read_with_one_read_on_one_redis(redis_url, key_prefix):
    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        reads: list[int] = []
        real_read = r.xreadgroup

        async def counted_read(group, consumer, streams, **kwargs):
            if "block" in kwargs:  # the consumer's reads, not the set-up's
                reads.append(len(streams))
            return await real_read(group, consumer, streams, **kwargs)

        r.xreadgroup = counted_read  # type: ignore[method-assign]
        await _sharded_case(r, _shards(key_prefix))
        assert set(reads) == {4}  # every read names the 4 shards
        await r.aclose()

    run(go())


def test_every_shard_is_read_by_its_own_loop_on_a_cluster(redis_cluster, key_prefix):
    async def go():
        r = hotstore.async_client(redis_cluster.url, 16, cluster=True)
        streams = _shards(key_prefix)
        assert len({hotstore.slot_of(s) for s in streams}) == 4
        await _sharded_case(r, streams)
        for s in streams:
            await r.delete(s)
        await r.aclose()

    run(go())


def test_handled_entries_are_acknowledged_together_and_at_the_stop(
    redis_url, key_prefix, monkeypatch
):
    """Batches handled within ``ACK_EVERY_S`` of each other share one XACK (sent when the
    interval has passed, or when a read finds nothing new); none is acknowledged before its
    handler returned, and what is left is acknowledged when the loop stops."""
    from services.platform import consumer

    monkeypatch.setattr(consumer, "ACK_EVERY_S", 60.0)  # only a read finding nothing, or the stop

    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        stream = f"{key_prefix}:life"
        await consumer.ensure_group(r, stream, "g")
        for i in range(6):
            await r.xadd(stream, {"n": str(i)})
        acks: list[tuple] = []
        real_ack = r.xack

        async def counted_ack(*args):
            acks.append(args[2:])
            return await real_ack(*args)

        r.xack = counted_ack  # type: ignore[method-assign]
        seen: list[str] = []

        async def handle(fields):
            seen.append(fields["n"])

        me = consumer._Consumer(r, [stream], "g", "c1", handle, 100, 30_000, 60.0, 5)
        me.starts = {stream: ">"}  # past its own pending entries, as a running consumer
        me.next_ack = time.monotonic() + 60  # not due within this test
        read = await r.xreadgroup("g", "c1", {stream: ">"}, count=6)
        entries = read[0][1]
        for i in range(0, 6, 2):  # three batches
            await me.handle_all([(stream, entries[i : i + 2])])
        assert seen == [str(i) for i in range(6)] and acks == []
        assert (await r.xpending(stream, "g"))["pending"] == 6
        await me.step()  # the next read finds nothing: one XACK for the three batches
        assert len(acks) == 1 and len(acks[0]) == 6
        assert (await r.xpending(stream, "g"))["pending"] == 0
        six = await r.xadd(stream, {"n": "6"})
        stop = asyncio.Event()

        async def handle_and_stop(fields):
            seen.append(fields["n"])
            stop.set()

        acks.clear()
        await consumer.consume(r, stream, "g", "c1", handle_and_stop, block_ms=100, stop=stop)
        assert seen[-1] == "6" and (await r.xpending(stream, "g"))["pending"] == 0
        assert acks == [(six,)]  # one XACK, at the stop
        await r.aclose()

    run(go())
