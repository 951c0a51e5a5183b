"""The checks of the load and fault benchmark (``tests/integration/invariants.py``) find
what they are for: a game stored whole passes, and each kind of damage a fault could do
(a lost entry, a move applied twice, a turn applied at another version, an acknowledged
move that is not in the stream, a wrong result, a partial archive, an unfinished game)
is reported with its reason code. A real Redis holds the game (a random Chicago Express
game played with the engine); the lobby and the archive are stand-ins that answer what a
real one would have recorded."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import json

import pytest
import redis.asyncio as aioredis

from roundhouse.v1 import lobby_pb2
from services.archive.store import GameRecord, StoredGame
from services.kernel.engine import canonical_json
from services.kernel.playout import random_choice
from services.kernel.rng import SeededRandom
from services.platform.gamelog import GameLog, LogEntry
from services.rules.titles import available_titles, get_game
from tests.integration.invariants import check_games, person_key

pytestmark = pytest.mark.skipif(
    "railbarons" not in available_titles(), reason="needs Chicago Express"
)
TITLE, PLAYERS, SEED = "railbarons", 2, 7
TABLE, GAME = "t1", "railbarons-t1"


def _played() -> tuple[list[LogEntry], dict]:
    """A whole random game as the stream entries a rules service would append."""
    state = get_game(TITLE).new_state(PLAYERS, SEED)
    rng = SeededRandom(SEED)
    entries = []
    while not state.is_terminal():
        seat = state.active_seats()[0]
        action = random_choice(state, seat, rng)
        events = state.apply(seat, action)
        result = state.result() if state.is_terminal() else None
        entries.append(
            LogEntry(
                version=state.version,
                seat=seat,
                action=canonical_json(action.to_json()),
                events=json.dumps(events),
                active=tuple(state.active_seats()),
                finished=state.is_terminal(),
                result=json.dumps(dataclasses.asdict(result)) if result else "",
            )
        )
    final = state.result()
    return entries, {
        "scores": [int(s) for s in final.scores],
        "ranks": list(final.ranks),
        "end_reason": final.end_reason,
    }


class _Lobby:
    def __init__(self, result: dict, status=lobby_pb2.TABLE_STATUS_FINISHED) -> None:
        self.result, self.status = result, status

    async def GetTable(self, request, metadata=()):
        return lobby_pb2.Table(
            table_id=TABLE, title=TITLE, num_players=PLAYERS, status=self.status, game_id=GAME
        )

    async def GetTableResult(self, request, metadata=()):
        return lobby_pb2.TableResult(
            standings=[
                lobby_pb2.Standing(seat=i, score=s, rank=r)
                for i, (s, r) in enumerate(
                    zip(self.result["scores"], self.result["ranks"], strict=True)
                )
            ],
            end_reason=self.result["end_reason"],
        )


class _Archive:
    def __init__(self, entries: list[LogEntry], result: dict) -> None:
        now = datetime.datetime.now(datetime.UTC)
        record = GameRecord(GAME, TITLE, "1", PLAYERS, {}, SEED, "o", now, now, 0, result)
        self.stored = StoredGame(record, list(entries))

    async def load(self, game_id: str):
        return self.stored if game_id == GAME else None


async def _store(r: aioredis.Redis, log: GameLog, entries: list[LogEntry], keys: dict) -> None:
    meta = {"num_players": PLAYERS, "seed": SEED, "options": {}}
    await r.set(log.meta_key(GAME), json.dumps(meta))
    for e in entries:
        await r.xadd(log.log_key(GAME), e.fields(), id=f"{e.version}-0")
    if keys:
        await r.hset(log.idem_key(GAME), mapping=keys)


def _bot_keys(entries: list[LogEntry]) -> dict[str, str]:
    """Every move's idempotency answer, as a bot's turn stores it."""
    return {
        f"{e.seat}:bot:{GAME}:{e.version - 1}:{e.seat}": json.dumps({"version": e.version})
        for e in entries
    }


def _check(redis_url, key_prefix, entries, keys, lobby, archive, acknowledged=None):
    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        try:
            log = GameLog(r, key_prefix)
            await _store(r, log, entries, keys)
            found = await check_games(
                [TABLE], lobby, (), log, archive, acknowledged, archive_wait_s=0
            )
            return sorted({v.code for v in found}), found
        finally:
            await r.aclose()

    return asyncio.run(go())


@pytest.fixture(scope="module")
def game():
    return _played()


def test_a_game_stored_whole_passes_every_check(redis_url, key_prefix, game):
    entries, result = game
    codes, _ = _check(
        redis_url,
        key_prefix,
        entries,
        _bot_keys(entries),
        _Lobby(result),
        _Archive(entries, result),
    )
    assert codes == []


def test_a_lost_entry_is_a_gap_and_fails_the_replay(redis_url, key_prefix, game):
    entries, result = game
    kept = [e for e in entries if e.version != 5]
    codes, found = _check(
        redis_url, key_prefix, kept, _bot_keys(kept), _Lobby(result), _Archive(entries, result)
    )
    assert "gap" in codes and "archive" in codes, found
    assert any("first wrong id 6-0" in v.detail for v in found)


def test_a_turn_applied_twice_shows_as_a_keyless_move(redis_url, key_prefix, game):
    """The same bot turn (key of version 9) appended at version 10 and again at 11: the
    second answer overwrote the first, so version 10 has no key and the key names 9 but
    answers 11."""
    entries, result = game
    keys = _bot_keys(entries)
    at_10, at_11 = entries[9], entries[10]
    del keys[f"{at_11.seat}:bot:{GAME}:10:{at_11.seat}"]
    keys[f"{at_10.seat}:bot:{GAME}:9:{at_10.seat}"] = json.dumps({"version": 11})
    codes, found = _check(
        redis_url, key_prefix, entries, keys, _Lobby(result), _Archive(entries, result)
    )
    assert codes == ["key_version", "keyless_entry"], found
    assert any("sent at version 9 applied as 11" in v.detail for v in found)


def test_an_acknowledged_move_not_in_the_stream_is_reported(redis_url, key_prefix, game):
    entries, result = game
    keys = _bot_keys(entries)
    seat, version = entries[3].seat, entries[3].version
    key = f"{seat}:{person_key(TABLE, version - 1)}"
    acked = {TABLE: {key: (version, {"type": "not-what-was-played"})}}
    codes, found = _check(
        redis_url, key_prefix, entries, keys, _Lobby(result), _Archive(entries, result), acked
    )
    assert codes == ["acknowledged"], found


def test_a_result_other_than_the_replay_and_a_partial_archive_are_reported(
    redis_url, key_prefix, game
):
    entries, result = game
    wrong = {**result, "scores": [s + 1 for s in result["scores"]]}
    codes, found = _check(
        redis_url,
        key_prefix,
        entries,
        _bot_keys(entries),
        _Lobby(wrong),
        _Archive(entries[:-1], result),
    )
    assert codes == ["archive", "replay"], found


def test_an_unfinished_table_is_reported_and_nothing_else_checked(redis_url, key_prefix, game):
    entries, result = game
    lobby = _Lobby(result, status=lobby_pb2.TABLE_STATUS_RUNNING)
    codes, found = _check(redis_url, key_prefix, entries[:20], {}, lobby, _Archive([], result))
    assert codes == ["not_finished"], found
    assert "stream at version 20" in found[0].detail
