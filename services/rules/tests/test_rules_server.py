"""The generic GameRules servicer (services/rules/servicer.py) driven in
process against a real Redis: two replicas sharing one game, a lost
compare-and-set race, idempotent twins, and rebuilds that refuse a log of
another rules version."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest
import redis.asyncio as aioredis

from roundhouse.v1 import game_pb2
from services.platform.gamelog import GameLog
from services.platform.grpc_errors import ServiceError, error_reason
from services.rules.servicer import GameRulesServicer

TITLE = "railbarons"


class Aborted(Exception):
    def __init__(self, status):
        super().__init__(status.details)
        self.code = status.code
        self.status = status

    def trailing_metadata(self):  # as on a failed call, for grpc_errors.error_reason
        return self.status.trailing_metadata


class FakeContext:
    async def abort_with_status(self, status):
        raise Aborted(status)


def servicer(redis_url, prefix):
    client = aioredis.from_url(redis_url, decode_responses=True)
    return GameRulesServicer(TITLE, GameLog(client, prefix))


async def legal(s, game_id, seat):
    res = await s.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat), FakeContext()
    )
    return list(res.actions_json)


async def view(s, game_id, seat=None):
    req = game_pb2.GetViewRequest(game_id=game_id)
    if seat is not None:
        req.seat = seat
    return await s.GetView(req, FakeContext())


async def submit(s, game_id, seat, version, action_json, key=""):
    return await s.SubmitAction(
        game_pb2.SubmitActionRequest(
            game_id=game_id,
            seat=seat,
            expected_version=version,
            action_json=action_json,
            idempotency_key=key,
        ),
        FakeContext(),
    )


def test_a_replica_that_loses_the_race_keeps_its_cache_equal_to_the_log(redis_url, key_prefix):
    async def go():
        a, b = servicer(redis_url, key_prefix), servicer(redis_url, key_prefix)
        created = await a.CreateGame(
            game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=1, game_id="g"),
            FakeContext(),
        )
        seat = created.active_seats[0]
        await view(b, "g")  # both replicas hold the game
        moves = await legal(a, "g", seat)
        await submit(b, "g", seat, 0, moves[-1])  # b wins version 1
        with pytest.raises(Aborted) as err:
            await submit(a, "g", seat, 0, moves[0])  # a's append loses
        assert err.value.code == grpc.StatusCode.ABORTED
        va, vb = await view(a, "g", 1), await view(b, "g", 1)
        assert (va.version, va.view_json) == (vb.version, vb.view_json) and va.version == 1
        # a plays on from the winner's move, and a fresh replica replays the log cleanly
        seat2 = va.active_seats[0]
        await submit(a, "g", seat2, 1, (await legal(a, "g", seat2))[0])
        c = servicer(redis_url, key_prefix)
        vc, va = await view(c, "g", 2), await view(a, "g", 2)
        assert (vc.version, vc.view_json) == (va.version, va.view_json) and vc.version == 2

    asyncio.run(go())


def test_waiting_calls_never_see_a_move_the_log_refused(redis_url, key_prefix):
    """Calls queued on the game's lock behind a submit whose append lost see
    the log's state, not the refused move."""

    async def go():
        a, b = servicer(redis_url, key_prefix), servicer(redis_url, key_prefix)
        created = await a.CreateGame(
            game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=2, game_id="g"),
            FakeContext(),
        )
        seat = created.active_seats[0]
        moves = await legal(a, "g", seat)
        await view(b, "g")
        await submit(b, "g", seat, 0, moves[-1])
        results = await asyncio.gather(
            submit(a, "g", seat, 0, moves[0]),
            view(a, "g", seat),
            view(a, "g", seat),
            return_exceptions=True,
        )
        assert isinstance(results[0], Aborted)
        log_entries = await b.gamelog.entries("g")
        assert [json.loads(e.action) for e in log_entries] == [json.loads(moves[-1])]
        for v in results[1:]:
            assert v.version == 1

    asyncio.run(go())


def test_concurrent_twins_get_one_answer_and_one_move(redis_url, key_prefix):
    async def go():
        a = servicer(redis_url, key_prefix)
        created = await a.CreateGame(
            game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=3, game_id="g"),
            FakeContext(),
        )
        seat = created.active_seats[0]
        move = (await legal(a, "g", seat))[0]
        answers = await asyncio.gather(*[submit(a, "g", seat, 0, move, key="k") for _ in range(6)])
        assert all(x == answers[0] for x in answers)
        assert len(await a.gamelog.entries("g")) == 1

    asyncio.run(go())


def test_a_log_of_another_rules_version_is_refused_not_replayed(redis_url, key_prefix):
    async def go():
        a = servicer(redis_url, key_prefix)
        await a.CreateGame(
            game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=4, game_id="g"),
            FakeContext(),
        )
        meta = await a.gamelog.meta("g")
        meta["rules_version"] = "0.0-old"
        await a.gamelog.r.set(a.gamelog.meta_key("g"), json.dumps(meta))
        fresh = servicer(redis_url, key_prefix)
        with pytest.raises(ServiceError) as err:
            await view(fresh, "g")
        assert err.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert err.value.reason == "rules_version_mismatch"

    asyncio.run(go())


def test_a_log_that_no_longer_replays_is_data_loss(redis_url, key_prefix):
    async def go():
        a = servicer(redis_url, key_prefix)
        created = await a.CreateGame(
            game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=5, game_id="g"),
            FakeContext(),
        )
        seat = created.active_seats[0]
        await submit(a, "g", seat, 0, (await legal(a, "g", seat))[0])
        # corrupt the stored move: a bid far above anyone's cash
        entry_id, fields = (await a.gamelog.r.xrange(a.gamelog.log_key("g")))[0]
        await a.gamelog.r.delete(a.gamelog.log_key("g"))
        fields["action"] = json.dumps({"type": "bid", "amount": 99999})
        await a.gamelog.r.xadd(a.gamelog.log_key("g"), fields, id="1-0")
        fresh = servicer(redis_url, key_prefix)
        with pytest.raises(ServiceError) as err:
            await view(fresh, "g")
        assert err.value.code == grpc.StatusCode.DATA_LOSS

    asyncio.run(go())


def test_ranges_are_listed_and_every_value_inside_is_accepted_none_outside(redis_url, key_prefix):
    """1894's opening auction: each private's bids are one ParameterRange; a bid at the range's
    max is applied, one step beyond it is refused with the rule's reason and changes nothing."""

    async def go():
        client = aioredis.from_url(redis_url, decode_responses=True)
        s = GameRulesServicer("e1894", GameLog(client, key_prefix))
        await s.CreateGame(
            game_pb2.CreateGameRequest(title="e1894", num_players=4, seed=92791301, game_id="r"),
            FakeContext(),
        )
        res = await s.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id="r", seat=0), FakeContext()
        )
        assert len(res.ranges) == len(res.actions) == len(res.actions_json)
        pairs = zip(res.actions_json, res.ranges, strict=True)
        ranged = [(json.loads(t), r) for t, r in pairs if r.field]
        first, span = ranged[0]
        assert first == {"type": "bid", "company": "AR", "price": 30}
        assert (span.field, span.min, span.max, span.step) == ("price", 30, 480, 5)
        too_much = json.dumps({**first, "price": span.max + span.step})
        with pytest.raises(Aborted) as err:
            await submit(s, "r", 0, 0, too_much)
        assert err.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert error_reason(err.value) == "insufficient_cash"
        assert (await view(s, "r")).version == 0
        done = await submit(s, "r", 0, 0, json.dumps({**first, "price": span.max}))
        assert done.version == 1

    asyncio.run(go())


def test_moves_come_with_labels_and_views_with_seat_summaries(redis_url, key_prefix):
    """ListLegalActions labels each entry (a range with its span), the streamed move
    carries the label it had when it was legal, a resignation is labelled too, and GetView
    has one summary line per seat."""

    async def go():
        s = servicer(redis_url, key_prefix)
        await s.CreateGame(
            game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=1, game_id="l"),
            FakeContext(),
        )
        res = await s.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id="l", seat=0), FakeContext()
        )
        assert len(res.labels) == len(res.actions_json) > 2
        assert list(res.labels[:3]) == [
            "Pass (PRR opening auction)",
            "Bid $7 on PRR",
            "Bid $8 on PRR",
        ]
        assert len(set(res.labels)) == len(res.labels)
        await submit(s, "l", 0, 0, res.actions_json[2])
        await s.Resign(game_pb2.ResignRequest(game_id="l", seat=2), FakeContext())
        stream = s.WatchGame(game_pb2.WatchGameRequest(game_id="l", from_version=0), FakeContext())
        first = await anext(stream)
        second = await anext(stream)
        await stream.aclose()
        assert (first.version, first.label) == (1, "Bid $8 on PRR")
        assert second.label == "Seat 2 resigns"
        for seat in (None, 0, 1):
            lines = list((await view(s, "l", seat)).seat_summaries)
            assert len(lines) == 3
            assert lines[0].startswith("Seat 0: $40 cash")
        e = GameRulesServicer("e1894", s.gamelog)
        await e.CreateGame(
            game_pb2.CreateGameRequest(title="e1894", num_players=4, seed=92791301, game_id="e"),
            FakeContext(),
        )
        res = await e.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id="e", seat=0), FakeContext()
        )
        ranged = [label for label, r in zip(res.labels, res.ranges, strict=True) if r.field]
        assert ranged[0].startswith("Bid 30-480 F in steps of 5 on AR (Antwerpen-")

    asyncio.run(go())


def test_the_bot_seats_go_into_the_creation_record_and_a_bad_seat_is_refused(redis_url, key_prefix):
    """CreateGame's bot_policies are the game's own record of its hosted bots (the
    dispatcher reads them there); a seat outside the table is INVALID_ARGUMENT bad_seat, a
    policy that is not hosted unknown_policy, and neither creates anything."""

    async def go():
        s = servicer(redis_url, key_prefix)
        request = game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=1, game_id="b")
        request.bot_policies[2] = "greedy"
        request.bot_policies[0] = "random"
        await s.CreateGame(request, FakeContext())
        meta = await s.gamelog.meta("b")
        assert meta["bots"] == {"0": "random", "2": "greedy"}
        bad = game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=1, game_id="b3")
        bad.bot_policies[3] = "random"
        with pytest.raises(Aborted) as err:
            await s.CreateGame(bad, FakeContext())
        assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert error_reason(err.value) == "bad_seat"
        assert await s.gamelog.meta("b3") is None
        unknown = game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=1, game_id="bp")
        unknown.bot_policies[1] = "no-such-bot"
        with pytest.raises(Aborted) as err:
            await s.CreateGame(unknown, FakeContext())
        assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert error_reason(err.value) == "unknown_policy"
        assert await s.gamelog.meta("bp") is None

    asyncio.run(go())


def test_the_rules_run_on_the_pool_not_on_the_loop(redis_url, key_prefix):
    """apply, legal_actions and view run on the servicer's rules threads (``workers``), so a
    dear call never blocks the event loop; ``workers=0`` keeps them on the loop's thread."""
    import threading

    class SpyGame:
        """The title's game, noting the thread of every describe_all and summarize_view
        (called next to legal_actions and view)."""

        def __init__(self, game):
            self.game, self.threads = game, set()

        def __getattr__(self, name):
            return getattr(self.game, name)

        def describe_all(self, state, legal):
            self.threads.add(threading.current_thread().name)
            return self.game.describe_all(state, legal)

        def summarize_view(self, view, num_players):
            self.threads.add(threading.current_thread().name)
            return self.game.summarize_view(view, num_players)

    async def go(workers: int) -> set[str]:
        client = aioredis.from_url(redis_url, decode_responses=True)
        s = GameRulesServicer(TITLE, GameLog(client, f"{key_prefix}-{workers}"), workers=workers)
        s.game = spy = SpyGame(s.game)
        created = await s.CreateGame(
            game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=1, game_id="p"),
            FakeContext(),
        )
        seat = created.active_seats[0]
        moves = await legal(s, "p", seat)
        await submit(s, "p", seat, 0, moves[0])
        assert (await view(s, "p", seat)).version == 1
        await client.aclose()
        return spy.threads

    loop_thread = threading.current_thread().name
    assert asyncio.run(go(0)) == {loop_thread}
    pooled = asyncio.run(go(2))
    assert pooled and all(name.startswith(f"rules-{TITLE}") for name in pooled)


def test_each_entry_stores_the_legal_moves_of_the_seats_people_play(redis_url, key_prefix):
    """With the creation and every entry the servicer stores the legal moves after it: for
    each active seat not played by a hosted bot, exactly ListLegalActions' answer; none for a
    hosted bot's seat; nothing once the game is over."""
    import base64

    async def stored(s, game_id, seat):
        found = await s.gamelog.legal_moves(game_id, seat)
        if found is None or not found[2]:
            return found
        return game_pb2.ListLegalActionsResponse.FromString(base64.b64decode(found[2]))

    async def answer(s, game_id, seat):
        return await s.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat), FakeContext()
        )

    async def go():
        s = servicer(redis_url, key_prefix)
        request = game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=1, game_id="m")
        request.bot_policies[1] = "greedy"
        created = await s.CreateGame(request, FakeContext())
        seat = created.active_seats[0]
        assert seat != 1
        assert await stored(s, "m", seat) == await answer(s, "m", seat)
        for version in range(12):
            active = list((await view(s, "m")).active_seats)
            for other in range(3):
                found = await stored(s, "m", other)
                if other == 1 or other not in active:
                    assert found == (version, active, "")
                else:
                    listed = await answer(s, "m", other)
                    assert found == listed and listed.version == version and listed.labels
            seat = active[0]
            await submit(s, "m", seat, version, (await legal(s, "m", seat))[0])
        await s.Resign(game_pb2.ResignRequest(game_id="m", seat=0), FakeContext())
        assert (await view(s, "m")).finished
        assert await s.gamelog.legal_moves("m", 2) is None

    asyncio.run(go())


def test_a_kept_view_is_the_view_a_fresh_replica_builds_after_every_change(redis_url, key_prefix):
    """GetView keeps each seat's view of a state (services/rules/cache.py, ``LiveGame.views``):
    asked again, every seat (and a spectator) gets what a replica building it afresh gets,
    after a move here, a move another replica appended and a resignation."""

    async def go():
        a, b = servicer(redis_url, key_prefix), servicer(redis_url, key_prefix)
        await a.CreateGame(
            game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=3, game_id="g"),
            FakeContext(),
        )
        await view(b, "g")

        async def same_as_fresh(version: int) -> None:
            fresh = servicer(redis_url, key_prefix)
            for seat in (None, 0, 1, 2):
                for _ in range(2):  # the second from the kept view
                    kept, built = await view(a, "g", seat), await view(fresh, "g", seat)
                    assert kept.version == version
                    kept.ClearField("clocks"), built.ClearField("clocks")
                    assert kept == built, seat

        await same_as_fresh(0)
        seat = (await view(a, "g")).active_seats[0]
        await submit(a, "g", seat, 0, (await legal(a, "g", seat))[0])
        await same_as_fresh(1)
        seat = (await view(b, "g")).active_seats[0]
        await submit(b, "g", seat, 1, (await legal(b, "g", seat))[-1])  # the other replica
        await same_as_fresh(2)
        await a.Resign(game_pb2.ResignRequest(game_id="g", seat=2), FakeContext())
        await same_as_fresh(3)
        assert list((await view(a, "g", 0)).resigned_seats) == [2]

    asyncio.run(go())
