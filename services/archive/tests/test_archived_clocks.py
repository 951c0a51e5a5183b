"""Timed games in the archive (PostgreSQL and SQLite), with the injectable clock: a
game a seat lost on time, and one with a pause, a timeout handed to the takeover bot, a
reclaim and a resignation, are answered from the archive exactly as while Redis had them
(view, watch, result) and ``archive verify`` replays them as ok; an archived timeout moved
before its seat's deadline is a mismatch naming the entry."""

from __future__ import annotations

import asyncio
import json

import sqlalchemy as sa

from roundhouse.v1 import game_pb2
from services.archive.models import ArchivedAction
from services.archive.tests.helpers import FakeContext, rig
from services.archive.tests.test_fallback import result, view, watch
from services.archive.verify import MISMATCH, OK, check_game
from services.kernel.rng import SeededRandom
from services.match.timesource import FakeTime
from services.rules.servicer import GameRulesServicer

LIVE = {"kind": "live", "base_s": 60, "increment_s": 5}


async def _create(s, game_id: str, policy: str, seed: int) -> None:
    clock = {"time_control": LIVE, "timeout_policy": policy}
    await s.CreateGame(
        game_pb2.CreateGameRequest(
            title="railbarons",
            num_players=3,
            seed=seed,
            game_id=game_id,
            clock_json=json.dumps(clock),
        ),
        FakeContext(),
    )


async def _play_out(s, game_id: str, seed: int) -> None:
    rng = SeededRandom(seed)
    while True:
        v = await view(s, game_id)
        if v.finished:
            return
        seat = v.active_seats[0]
        legal = await s.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat), FakeContext()
        )
        await s.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=game_id,
                seat=seat,
                action_json=rng.choice(list(legal.actions_json)),
                expected_version=v.version,
                idempotency_key=f"k{v.version}",
            ),
            FakeContext(),
        )


def _without_clocks(updates):
    out = []
    for u in updates:
        u = type(u).FromString(u.SerializeToString())
        del u.clocks[:]  # the archive keeps each entry's time, not its clocks' JSON
        out.append(u)
    return out


def test_timed_games_replay_from_the_archive_and_verify(redis_url, key_prefix, store_url):
    time = FakeTime()

    async def go():
        async with rig(redis_url, key_prefix, store_url, ttl_s=0) as r:
            s = GameRulesServicer("railbarons", r.gamelog, archive=r.rules.archive, time=time)
            # 1: a seat's time runs out under "forfeit": the game ends, the seat last
            await _create(s, "lost", "forfeit", 5)
            late = (await view(s, "lost")).active_seats[0]
            await time.advance(60_000)
            await s.Timeout(
                game_pb2.TimeoutRequest(game_id="lost", seat=late, expected_version=0),
                FakeContext(),
            )
            # 2: pause, resume, a timeout taken over by the bot, a reclaim, a resignation
            await _create(s, "mixed", "reclaim", 6)
            await s.SetPaused(
                game_pb2.SetPausedRequest(game_id="mixed", paused=True), FakeContext()
            )
            await time.advance(10**6)
            await s.SetPaused(
                game_pb2.SetPausedRequest(game_id="mixed", paused=False), FakeContext()
            )
            slow = (await view(s, "mixed")).active_seats[0]
            await time.advance(60_000)
            await s.Timeout(
                game_pb2.TimeoutRequest(game_id="mixed", seat=slow, expected_version=2),
                FakeContext(),
            )
            await s.Reclaim(game_pb2.ResignRequest(game_id="mixed", seat=slow), FakeContext())
            await s.Resign(
                game_pb2.ResignRequest(game_id="mixed", seat=(slow + 1) % 3), FakeContext()
            )
            await _play_out(s, "mixed", 6)

            live = {}
            for g in ("lost", "mixed"):
                live[g] = (
                    [await view(s, g, seat) for seat in (None, 0, 1, 2)],
                    await watch(s, g),
                    await result(s, g),
                )
            lost = live["lost"][2].result
            assert list(lost.forfeited_seats) == [late] and list(lost.timed_out_seats) == [late]
            assert lost.ranks[late] == 3
            mixed = live["mixed"][2].result
            assert list(mixed.timed_out_seats) == [slow]
            assert [(t.seat, t.reason) for t in mixed.takeovers] == [
                (slow, "timeout"),
                ((slow + 1) % 3, "resigned"),
            ]
            types = [json.loads(u.action_json)["type"] for u in live["mixed"][1][:5]]
            assert types == ["pause", "resume", "timeout", "reclaim", "resign"]

            for g in live:
                s._cache.clear()
                await r.archiver.archive(g)
                assert not await r.redis.exists(r.gamelog.meta_key(g))
            fresh = GameRulesServicer("railbarons", r.gamelog, archive=r.rules.archive, time=time)
            for g, (views, updates, res) in live.items():
                assert [await view(fresh, g, seat) for seat in (None, 0, 1, 2)] == views
                assert await watch(fresh, g) == _without_clocks(updates)
                assert await result(fresh, g) == res

            verdicts = {}
            async for batch in r.store.batches():
                for record, entries in batch:
                    verdicts[record.game_id] = check_game(record, entries)
            assert {g: v.status for g, v in verdicts.items()} == {"lost": OK, "mixed": OK}

            # the timeout of "lost" moved to before its seat's deadline: refused on replay
            async with r.engine.begin() as conn:
                await conn.execute(
                    sa.update(ArchivedAction)
                    .where(ArchivedAction.game_id == "lost", ArchivedAction.version == 1)
                    .values(at_ms=ArchivedAction.at_ms - 1)
                )
            async for batch in r.store.batches(limit=1):
                ((record, entries),) = batch
                verdict = check_game(record, entries)
                assert verdict.status == MISMATCH
                assert verdict.detail.startswith("entry 1 is refused: not_timed_out")

    asyncio.run(go())
