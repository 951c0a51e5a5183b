"""The hot store's key layout (services/platform/hotstore.py): every key a script or a
transaction touches at once lies in one hash slot, and the lifecycle shards spread
evenly over the slots. No Redis needed: slots are CRC16 arithmetic."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from services.bots import heartbeat
from services.lobby.events import AccountEvents
from services.platform.hotstore import (
    SLOTS,
    KeySpace,
    limits_uri,
    shard_of,
    shard_tags,
    slot_of,
)
from services.platform.settings import Settings

GAME_IDS = [f"railbarons-{uuid.UUID(int=n * 7919 + 1).hex}" for n in range(2000)]


def masters_of(slot: int, masters: int) -> int:
    """The master owning ``slot`` when ``masters`` masters own equal contiguous ranges
    (what ``redis-cli --cluster create`` gives)."""
    return min(slot * masters // SLOTS, masters - 1)


@pytest.mark.parametrize("shards", [1, 3, 12, 16, 48])
def test_every_shard_tag_lies_in_the_middle_of_its_range_of_slots(shards):
    tags = shard_tags(shards)
    assert len(set(tags)) == shards
    for k, tag in enumerate(tags):
        assert slot_of(tag) == (2 * k + 1) * SLOTS // (2 * shards)
        assert k * SLOTS // shards <= slot_of(tag) < (k + 1) * SLOTS // shards


@pytest.mark.parametrize(("shards", "masters"), [(12, 3), (12, 4), (12, 6), (48, 3), (48, 8)])
def test_masters_with_equal_slot_ranges_carry_equal_numbers_of_shards(shards, masters):
    per_master = Counter(masters_of(slot_of(tag), masters) for tag in shard_tags(shards))
    assert sorted(per_master.values()) == [shards // masters] * masters


def test_a_game_and_its_lifecycle_shard_share_one_slot():
    keys = KeySpace("rh", 12)
    for game_id in GAME_IDS:
        slots = {slot_of(keys.game(game_id, part)) for part in ("meta", "log", "idem")}
        assert slots == {slot_of(keys.lifecycle(game_id))}
        assert keys.lifecycle(game_id) in keys.lifecycle_streams


def test_a_game_goes_to_the_shard_whose_range_holds_its_own_slot():
    keys = KeySpace("rh", 12)
    for game_id in GAME_IDS[:200]:
        own = slot_of(game_id)  # the slot a literal {game_id} tag would give
        shard = shard_of(game_id, 12)
        assert shard * SLOTS // 12 <= own < (shard + 1) * SLOTS // 12
        assert keys.lifecycle(game_id) == keys.shard_stream(shard)
        # the shard's slot is in the same range, so the same master as {game_id}'s
        assert masters_of(slot_of(keys.log(game_id)), 3) == masters_of(own, 3)


def test_games_spread_evenly_over_the_shards():
    counts = Counter(shard_of(game_id, 12) for game_id in GAME_IDS)
    assert len(counts) == 12
    assert max(counts.values()) < 1.4 * len(GAME_IDS) / 12


def test_the_keys_of_other_scripts_and_transactions_share_a_slot():
    # account events: stream and dedupe marker (one Lua script)
    events = AccountEvents(_NoScripts(), "rh")  # type: ignore[arg-type]
    stream = events.key("acc-1")
    assert slot_of(stream) == slot_of(f"{stream}:seen:yourTurn:g:3:0")
    # bot heartbeats: the hash of running tasks and each task's keys (one transaction)
    turns = heartbeat.turns_key("rh")
    assert slot_of(heartbeat.alive_key("rh", "t1")) == slot_of(turns)
    assert slot_of(heartbeat.seen_key("rh", "t2")) == slot_of(turns)


def test_the_clock_keepers_keys_share_a_slot():
    from services.clocks.keeper import ClockKeeper

    keeper = ClockKeeper(_NoScripts(), "rh", fire=None)  # type: ignore[arg-type]
    keys = [keeper.deadlines_key, keeper.games_key, keeper.inflight_key, keeper.low_key]
    assert len({slot_of(k) for k in keys}) == 1


class _NoScripts:
    def register_script(self, _text):
        return None


def test_a_prefix_with_braces_is_refused():
    with pytest.raises(ValueError, match="braces"):
        KeySpace("rh{x}")
    with pytest.raises(ValueError, match="braces"):
        Settings(key_prefix="a{b")
    with pytest.raises(ValueError):
        shard_tags(0)
    with pytest.raises(ValueError):
        Settings(lifecycle_shards=SLOTS + 1)


def test_a_cluster_without_a_broker_of_its_own_is_refused_with_what_to_set():
    Settings(redis_cluster=False).check_broker()  # the embedded default: the Redis
    Settings(redis_cluster=True, broker_url="amqp://guest:guest@h:5672//").check_broker()
    with pytest.raises(ValueError, match="ROUNDHOUSE_BROKER_URL"):
        Settings(redis_cluster=True, broker_url=None).check_broker()


def test_the_rate_limits_use_the_limits_librarys_cluster_storage():
    assert limits_uri("redis://h:7000/0", cluster=True) == "async+redis+cluster://h:7000"
    assert limits_uri("redis://h:6379/0", cluster=False) == "async+redis://h:6379/0"
