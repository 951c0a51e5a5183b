"""The clock keeper and the rules service on one fake clock (real Redis, real
gRPC on loopback): timeouts, takeovers, correspondence, pauses, a move racing
its timeout, the keeper's restart, and the bad input of issue 12."""

from __future__ import annotations

import asyncio
import json
import random

import grpc
import pytest

from roundhouse.v1 import game_pb2
from services.clocks.keeper import ClockKeeper, grpc_firer
from services.clocks.tests.harness import CLOCKS, LOBBY, clock_env
from services.lobby.hot_tables import HotTables, LiveSeat, LiveTable
from services.platform.grpc_errors import error_info
from services.platform.lease import Lease

LIVE = {"kind": "live", "base_s": 60, "increment_s": 5}


@pytest.fixture
def env_run(redis_url, key_prefix):
    def run(body, **kw):
        async def main():
            async with clock_env(redis_url, key_prefix, **kw) as env:
                return await body(env)

        return asyncio.run(main())

    return run


async def refused(call, code, reason):
    try:
        await call
    except grpc.aio.AioRpcError as err:
        assert err.code() == code, (err.code(), err.details())
        assert error_info(err).reason == reason, error_info(err).reason
        return err
    raise AssertionError("the call succeeded")


async def seat_table(env, game_id: str, players: int = 3) -> None:
    """A lobby table in the hot index, so the keeper finds the seats' accounts."""
    await HotTables(env.redis, env.prefix).put(
        LiveTable(
            "t1", game_id, env.title, "running", [LiveSeat(f"acct{i}") for i in range(players)]
        )
    )


async def timeouts_in_log(env, game_id: str) -> list[int]:
    return [
        e.version
        for e in await env.gamelog.entries(game_id)
        if json.loads(e.action) == {"type": "timeout"}
    ]


async def play_out(env, game_id, rng, bot_seats=(), step_ms=100, limit=3000):
    """Play to the end: every active seat moves after ``step_ms``; seats in
    ``bot_seats`` (or taken over) with the bots' credentials."""
    for _ in range(limit):
        view = await env.view(game_id)
        if view.finished:
            return view
        await env.time.advance(step_ms)
        seat = view.active_seats[0]
        taken = {t.seat for t in view.takeovers if not t.until_version}
        await env.move(game_id, seat, rng, as_bot=seat in taken or seat in bot_seats)
    raise AssertionError("the game did not end")


def test_a_live_seat_times_out_once_and_a_bot_finishes_its_game(env_run):
    async def body(env):
        rng = random.Random(3)
        game = await env.create({"time_control": LIVE, "timeout_policy": "takeover"})
        await seat_table(env, game)
        for _ in range(4):  # a few moves, 2 s each
            view = await env.view(game)
            await env.time.advance(2_000)
            await env.move(game, view.active_seats[0], rng)
        view = await env.view(game)
        late = view.active_seats[0]
        clock = view.clocks[late]
        assert clock.running and 0 < clock.remaining_ms <= 70_000
        assert await env.keeper.fire_due() == 0  # not due yet
        await env.time.advance(clock.remaining_ms - 1)
        assert await env.keeper.fire_due() == 0
        await env.time.advance(1)
        assert await env.keeper.fire_due() == 1
        await env.pump()
        assert await env.keeper.fire_due() == 0  # never twice
        after = await env.view(game)
        assert after.version == view.version + 1
        assert [(t.seat, t.from_version, t.policy, t.reason) for t in after.takeovers] == [
            (late, view.version + 1, "greedy", "timeout")
        ]
        assert after.clocks[late].flagged and not after.clocks[late].running
        # the player's own moves are refused now; the bot plays the seat
        if late in after.active_seats:
            legal = await env.rules.ListLegalActions(
                game_pb2.ListLegalActionsRequest(game_id=game, seat=late)
            )
            await refused(
                env.rules.SubmitAction(
                    game_pb2.SubmitActionRequest(
                        game_id=game,
                        seat=late,
                        action_json=legal.actions_json[0],
                        expected_version=after.version,
                    ),
                    metadata=LOBBY,
                ),
                grpc.StatusCode.PERMISSION_DENIED,
                "seat_taken_over",
            )
        final = await play_out(env, game, rng)
        assert final.finished and final.result.end_reason != "resignation"
        weights = list(final.result.seat_weights)
        assert len(weights) == 3 and 0 < weights[late] < 1
        assert all(w == 1.0 for s, w in enumerate(weights) if s != late)
        assert [t.seat for t in final.result.takeovers] == [late]
        assert await timeouts_in_log(env, game) == [view.version + 1]
        events = await env.events.after(f"acct{late}", "0-0")
        kinds = [e.type for e in events]
        assert kinds.count("timeout") == 1 and "clockLow" in kinds
        low = next(e for e in events if e.type == "clockLow")
        assert 0 < low.data["remaining_ms"] <= 60_000 and low.seat == late
        timeout = next(e for e in events if e.type == "timeout")
        assert timeout.data == {"policy": "takeover"} and timeout.table_id == "t1"
        assert {e.seat for e in events} == {late}  # the account hears of its own seat only

    env_run(body)


def test_a_correspondence_game_banks_time_and_a_forfeit_ends_a_railbarons_game(env_run):
    async def body(env):
        rng = random.Random(5)
        day = 86_400
        game = await env.create(
            {
                "time_control": {
                    "kind": "correspondence",
                    "per_move_s": day,
                    "max_bank_s": 2 * day,
                },
                "timeout_policy": "forfeit",
            }
        )
        first = (await env.view(game)).active_seats[0]
        await env.time.advance(10 * 3_600_000)  # ten hours
        await env.move(game, first, rng)
        view = await env.view(game)
        assert view.clocks[first].remaining_ms == (2 * day - 10 * 3_600) * 1000
        nxt = view.active_seats[0]
        await env.time.advance(day * 1000 - 1)  # the next seat waits almost a day: still in time
        assert await env.keeper.fire_due() == 0
        await env.time.advance(1)
        assert await env.keeper.fire_due() == 1
        over = await env.view(game)
        # railbarons' resignation rule ends the game; the forfeited seat is last
        assert over.finished and over.result.end_reason == "resignation"
        assert over.result.ranks[nxt] == 3 and list(over.resigned_seats) == [nxt]

    env_run(body)


def test_a_move_racing_its_timeout_exactly_one_wins(env_run):
    async def body(env):
        rng = random.Random(11)
        wins = {"move": 0, "timeout": 0}
        for n in range(8):
            game = await env.create({"time_control": LIVE, "timeout_policy": "takeover"}, seed=n)
            view = await env.view(game)
            seat = view.active_seats[0]
            legal = await env.rules.ListLegalActions(
                game_pb2.ListLegalActionsRequest(game_id=game, seat=seat)
            )
            await env.time.advance(60_000)  # exactly at the deadline
            move = env.rules.SubmitAction(
                game_pb2.SubmitActionRequest(
                    game_id=game,
                    seat=seat,
                    action_json=rng.choice(list(legal.actions_json)),
                    expected_version=view.version,
                ),
                metadata=LOBBY,
            )
            timeout = env.rules.Timeout(
                game_pb2.TimeoutRequest(game_id=game, seat=seat, expected_version=view.version),
                metadata=CLOCKS,
            )
            if n % 2:
                move, timeout = timeout, move
            results = await asyncio.gather(move, timeout, return_exceptions=True)
            ok = [r for r in results if not isinstance(r, BaseException)]
            lost = [r for r in results if isinstance(r, BaseException)]
            assert len(ok) == 1 and len(lost) == 1
            assert lost[0].code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.PERMISSION_DENIED)
            entries = await env.gamelog.entries(game)
            assert [e.version for e in entries] == [view.version + 1]
            kind = "timeout" if json.loads(entries[0].action) == {"type": "timeout"} else "move"
            wins[kind] += 1
            # the keeper's firing afterwards is a no-op either way
            await env.pump()
            await env.keeper.fire_due()
            assert len(await env.gamelog.entries(game)) == 1
        assert sum(wins.values()) == 8

    env_run(body)


def test_the_keeper_survives_its_restart_without_losing_or_doubling_a_timeout(env_run):
    async def body(env):
        games = [
            await env.create({"time_control": {**LIVE, "base_s": 10 + i}}, seed=i)
            for i in range(12)
        ]
        await env.time.advance(30_000)
        # a keeper claims every due game, fires half of them and "dies" before finishing
        # any: half had their call reach the rules service, half not
        claimed = await env.keeper._claim(
            keys=[env.keeper.deadlines_key, env.keeper.inflight_key, env.keeper.games_key],
            args=[env.time.now_ms(), env.time.now_ms() + 30_000, 100],
        )
        assert len(claimed) == 3 * 12
        for i in range(0, 18, 3):
            info = json.loads(claimed[i + 2])
            seat = int(next(iter(info["deadlines"])))
            await env.rules.Timeout(
                game_pb2.TimeoutRequest(
                    game_id=claimed[i], seat=seat, expected_version=info["version"]
                ),
                metadata=CLOCKS,
            )
        # a new keeper process on the same Redis
        fresh = ClockKeeper(
            env.redis,
            env.prefix,
            grpc_firer({env.title: env.address}, CLOCKS),
            time=env.time,
        )
        assert await fresh.recover() == 12
        assert await fresh.fire_due() == 12
        await env.pump()
        assert await fresh.fire_due() == 0
        for game in games:
            assert len(await timeouts_in_log(env, game)) == 1
        # six answered with the first answer (their timeout was already in), six fresh
        assert fresh.outcomes == {"timed_out": 12}

    env_run(body)


def test_the_organiser_pauses_and_resumes_and_no_clock_runs_meanwhile(env_run):
    async def body(env):
        rng = random.Random(2)
        game = await env.create({"time_control": {**LIVE, "grace_s": 10}})
        seat = (await env.view(game)).active_seats[0]
        await env.time.advance(4_000)
        await env.rules.SetPaused(
            game_pb2.SetPausedRequest(game_id=game, paused=True), metadata=LOBBY
        )
        await env.pump()
        paused = await env.view(game)
        assert paused.paused and list(paused.active_seats) == []
        assert await env.redis.zcard(env.keeper.deadlines_key) == 0
        await env.time.advance(3_600_000)  # an hour: nothing runs out
        assert await env.keeper.fire_due() == 0
        legal = await env.rules.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id=game, seat=seat)
        )
        assert list(legal.actions_json) == []
        await refused(
            env.rules.SetPaused(
                game_pb2.SetPausedRequest(game_id=game, paused=True), metadata=LOBBY
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "already_paused",
        )
        await env.rules.SetPaused(
            game_pb2.SetPausedRequest(game_id=game, paused=False), metadata=LOBBY
        )
        await env.pump()
        resumed = await env.view(game)
        assert resumed.clocks[seat].remaining_ms == 66_000  # 6 s grace + 60 s bank
        assert resumed.clocks[seat].deadline_ms == env.time.now_ms() + 66_000
        await env.move(game, seat, rng)

    env_run(body)


def test_reclaim_within_the_window_and_refused_after_it(env_run):
    async def body(env):
        rng = random.Random(9)
        game = await env.create(
            {"time_control": LIVE, "timeout_policy": "reclaim", "reclaim_moves": 4}
        )
        seat = (await env.view(game)).active_seats[0]
        await env.time.advance(60_000)
        assert await env.keeper.fire_due() == 1
        at = (await env.view(game)).version
        await env.rules.Reclaim(game_pb2.ResignRequest(game_id=game, seat=seat), metadata=LOBBY)
        back = await env.view(game)
        assert [t.until_version for t in back.takeovers] == [at + 1]
        assert not back.clocks[seat].flagged
        assert back.clocks[seat].remaining_ms == 60_000 or not back.clocks[seat].running
        # time out again, then let the window close
        await env.pump()
        while seat not in (await env.view(game)).active_seats:
            await env.move(game, (await env.view(game)).active_seats[0], rng)
        await env.time.advance(61_000)
        assert await env.keeper.fire_due() == 1
        for _ in range(5):
            v = await env.view(game)
            await env.move(game, v.active_seats[0], rng, as_bot=True)
        before = await env.gamelog.entries(game)
        await refused(
            env.rules.Reclaim(game_pb2.ResignRequest(game_id=game, seat=seat), metadata=LOBBY),
            grpc.StatusCode.FAILED_PRECONDITION,
            "reclaim_window_closed",
        )
        assert await env.gamelog.entries(game) == before

    env_run(body)


def test_bad_input_is_refused_and_changes_nothing(env_run):
    async def body(env):
        await refused(
            env.rules.CreateGame(
                game_pb2.CreateGameRequest(
                    title="railbarons",
                    num_players=3,
                    clock_json=json.dumps({"time_control": {"kind": "live", "base_s": 0}}),
                ),
                metadata=LOBBY,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_time_control",
        )
        assert [k async for k in env.redis.scan_iter(f"{env.prefix}:game:*")] == []
        # a timeout against a finished game is a no-op
        game = await env.create({"time_control": LIVE, "timeout_policy": "forfeit"})
        seat = (await env.view(game)).active_seats[0]
        await env.rules.Resign(game_pb2.ResignRequest(game_id=game, seat=seat), metadata=LOBBY)
        over = await env.view(game)
        assert over.finished
        before = await env.gamelog.entries(game)
        await env.time.advance(10**7)
        await refused(
            env.rules.Timeout(
                game_pb2.TimeoutRequest(game_id=game, seat=seat, expected_version=over.version),
                metadata=CLOCKS,
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "game_over",
        )
        # the keeper has not read the end yet: it fires, the rules service says game_over
        assert await env.keeper.fire_due() == 1 and env.keeper.outcomes == {"over": 1}
        assert await env.gamelog.entries(game) == before
        await env.pump()
        assert await env.keeper.fire_due() == 0
        # a timeout before the deadline says when the deadline is
        game = await env.create({"time_control": LIVE})
        seat = (await env.view(game)).active_seats[0]
        err = await refused(
            env.rules.Timeout(
                game_pb2.TimeoutRequest(game_id=game, seat=seat, expected_version=0),
                metadata=CLOCKS,
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "not_timed_out",
        )
        assert int(error_info(err).metadata["deadline_ms"]) == env.time.now_ms() + 60_000
        # a timeout needs internal credentials
        assert env.bare_rules is not None
        await refused(
            env.bare_rules.Timeout(
                game_pb2.TimeoutRequest(game_id=game, seat=seat, expected_version=0)
            ),
            grpc.StatusCode.UNAUTHENTICATED,
            "token_missing",
        )
        assert await env.gamelog.entries(game) == []

    env_run(body)


def test_the_keepers_loop_fires_when_the_clock_reaches_a_deadline(env_run):
    async def body(env):
        game = await env.create({"time_control": LIVE})
        stop = asyncio.Event()
        task = asyncio.create_task(env.keeper.run(stop))
        try:
            await env.time.advance(59_999)
            for _ in range(20):  # let the loop look a few times (real I/O, not time)
                await asyncio.sleep(0.01)
            assert await timeouts_in_log(env, game) == []
            await env.time.advance(1)
            for _ in range(500):
                if await timeouts_in_log(env, game):
                    break
                await asyncio.sleep(0.01)
            assert await timeouts_in_log(env, game) == [1]
        finally:
            stop.set()
            env.keeper.wake.set()
            await asyncio.wait_for(task, 5)

    env_run(body)


def test_of_two_keepers_the_lease_holder_fires_and_the_other_takes_over_when_it_stops(env_run):
    """Two replicas: only the one holding the ``clocks-firing`` lease looks for due
    timeouts, and fires each once; when it stops renewing, the other takes the lease
    and fires the next one (also once)."""

    async def body(env):
        second = ClockKeeper(
            env.redis,
            env.prefix,
            grpc_firer({env.title: env.address}, CLOCKS),
            time=env.time,
            events=env.events,
        )
        keepers = [env.keeper, second]
        leases = [Lease(env.redis, env.prefix, "clocks-firing", 0.6) for _ in keepers]
        stops = [asyncio.Event() for _ in keepers]
        tasks = [
            asyncio.create_task(lease.keep(stop)) for lease, stop in zip(leases, stops, strict=True)
        ] + [
            asyncio.create_task(k.run(stop, lease))
            for k, lease, stop in zip(keepers, leases, stops, strict=True)
        ]

        async def fired(game, answers: int) -> list[int]:
            # the rules service appends the timeout before its answer reaches the
            # keeper, which counts the outcome only then: wait for both
            for _ in range(500):
                found = await timeouts_in_log(env, game)
                if found and sum(sum(k.outcomes.values()) for k in keepers) >= answers:
                    return found
                await asyncio.sleep(0.02)
            raise AssertionError("no timeout, or no keeper counted its answer")

        try:
            for _ in range(500):
                if any(lease.held for lease in leases):
                    break
                await asyncio.sleep(0.02)
            first = 0 if leases[0].held else 1
            game = await env.create({"time_control": LIVE})
            await env.time.advance(60_000)
            for k in keepers:
                k.wake.set()
            assert await fired(game, 1) == [1]
            assert keepers[first].outcomes == {"timed_out": 1}
            assert keepers[1 - first].outcomes == {}

            async def frozen() -> bool:  # renews nothing from now on
                return leases[first].held

            leases[first].try_hold = frozen
            for _ in range(500):
                if leases[1 - first].held:
                    break
                await asyncio.sleep(0.02)
            assert leases[1 - first].held and not leases[first].held
            later = await env.create({"time_control": LIVE}, seed=8)
            await env.time.advance(60_000)
            for k in keepers:
                k.wake.set()
            assert await fired(later, 2) == [1]
            assert keepers[1 - first].outcomes == {"timed_out": 1}
            assert keepers[first].outcomes == {"timed_out": 1}
            assert await timeouts_in_log(env, game) == [1]
        finally:
            for stop in stops:
                stop.set()
            for k in keepers:
                k.wake.set()
            await asyncio.wait_for(asyncio.gather(*tasks), 10)

    env_run(body)
