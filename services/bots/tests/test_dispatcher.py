"""The bot dispatcher (services/bots/dispatcher.py) against a real Redis with a
recording stand-in for Celery: one task per active bot seat, nothing for
players or unknown games; the sweeper enqueues a stalled bot turn again; a
task lost in the broker before any worker started it is sent again within
``bot_pickup_s``. The dispatcher learns the bot seats from the game's own records
(the creation record's ``bots`` and the events' ``takeover``), never from the
lobby's keys."""

from __future__ import annotations

import asyncio
import json

import redis.asyncio as aioredis

from services.bots.dispatcher import Dispatcher
from services.platform.gamelog import GameLog, LogEntry
from services.platform.settings import BotSettings
from services.rules.titles import get_game

GAME = get_game("railbarons")


def meta(bots: dict[int, str], seed: int = 5) -> dict:
    record = {
        "title": "railbarons",
        "rules_version": GAME.rules_version,
        "num_players": 3,
        "seed": seed,
        "options": {},
    }
    if bots:
        record["bots"] = {str(k): v for k, v in bots.items()}
    return record


class RecordingCelery:
    def __init__(self):
        self.sent = []
        self.ids = []

    def send_task(self, name, args, queue, **options):
        self.sent.append((name, tuple(args), queue))
        self.ids.append(options["task_id"])


def test_one_task_per_active_bot_seat(redis_url, key_prefix):
    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        celery = RecordingCelery()
        d = Dispatcher(BotSettings(redis_url=redis_url, key_prefix=key_prefix), r, celery)
        log = GameLog(r, key_prefix)
        await log.create("g1", meta({1: "greedy", 2: "random"}), {"type": "x", "game_id": "g1"})
        await log.create("imported", meta({}), {"type": "x", "game_id": "imported"})
        event = {
            "type": "turn",
            "game_id": "g1",
            "title": "railbarons",
            "version": "7",
            "active": json.dumps([0, 1, 2]),
        }
        assert await d.handle(event) == 2
        assert celery.sent == [
            (
                "roundhouse.bots.play_turn",
                ("railbarons", "g1", 1, 7, "greedy"),
                f"{key_prefix}-bots",
            ),
            (
                "roundhouse.bots.play_turn",
                ("railbarons", "g1", 2, 7, "random"),
                f"{key_prefix}-bots",
            ),
        ]
        assert await d.handle({**event, "active": json.dumps([0])}) == 0  # a player's turn
        assert await d.handle({**event, "game_id": "imported"}) == 0  # no bots in its record
        assert await d.handle({**event, "game_id": "unknown"}) == 0  # no record at all
        celery_queue = f"{key_prefix}-bots"
        celery.sent.clear()  # a game back at version 4 after lost moves: its bots play again
        rewound = {**event, "type": "game_rewound", "version": "4", "lost_from": "7"}
        assert await d.handle({**rewound, "active": json.dumps([2])}) == 1
        assert celery.sent == [
            ("roundhouse.bots.play_turn", ("railbarons", "g1", 2, 4, "random"), celery_queue)
        ]
        # a seat a bot took over (a timeout): named by the event, played like a hosted one
        celery.sent.clear()
        took = {**event, "active": json.dumps([0]), "takeover": json.dumps({"0": "greedy"})}
        assert await d.handle(took) == 1
        assert celery.sent[-1][1] == ("railbarons", "g1", 0, 7, "greedy")
        assert await r.hexists(d.games_key, "g1")
        assert await d.handle({**event, "type": "game_finished"}) == 0
        assert not await r.hexists(d.games_key, "g1")  # a finished game leaves the index
        await r.aclose()

    asyncio.run(go())


def test_the_lobby_s_keys_play_no_part(redis_url, key_prefix):
    """A lobby table record naming bot seats is ignored: only the game's record counts."""
    from services.lobby.hot_tables import RUNNING, HotTables, LiveSeat, LiveTable

    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        celery = RecordingCelery()
        d = Dispatcher(BotSettings(redis_url=redis_url, key_prefix=key_prefix), r, celery)
        seats = [LiveSeat("a", "random")] * 3
        await HotTables(r, key_prefix).put(LiveTable("t1", "g1", "railbarons", RUNNING, seats))
        await GameLog(r, key_prefix).create("g1", meta({}), {"type": "x", "game_id": "g1"})
        event = {"type": "turn", "game_id": "g1", "title": "railbarons", "version": "3"}
        assert await d.handle({**event, "active": json.dumps([0, 1, 2])}) == 0
        assert await d.sweep(now=0.0) == 0 and await d.sweep(now=1000.0) == 0
        assert celery.sent == []
        await r.aclose()

    asyncio.run(go())


def test_a_game_started_before_records_named_bots_plays_once_they_are_recorded(
    redis_url, key_prefix
):
    """A game whose creation record has no ``bots`` (started before records named them) gets
    no bot turns; once the lobby's backfill records them and announces ``bots_recorded``, the
    bot holding the move is asked to play at the game's current version, with no new move."""

    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        celery = RecordingCelery()
        d = Dispatcher(BotSettings(redis_url=redis_url, key_prefix=key_prefix), r, celery)
        log = GameLog(r, key_prefix)
        await log.create("old", meta({}), {"type": "x", "game_id": "old"})
        await log.append("old", 0, LogEntry(1, 0, "{}", "[]", (2,), False), "", "{}", None)
        turn = {"type": "turn", "game_id": "old", "title": "railbarons", "version": "1"}
        assert await d.handle({**turn, "active": json.dumps([2])}) == 0  # nothing known yet
        assert await log.record_bots("old", {2: "random", 1: "greedy"})
        assert not await log.record_bots("old", {2: "greedy"})  # never twice
        assert (await log.meta("old"))["bots"] == {"1": "greedy", "2": "random"}
        recorded = {"type": "bots_recorded", "game_id": "old", "title": "railbarons"}
        assert await d.handle(recorded) == 1
        assert celery.sent == [
            (
                "roundhouse.bots.play_turn",
                ("railbarons", "old", 2, 1, "random"),
                f"{key_prefix}-bots",
            )
        ]
        assert await r.hexists(d.games_key, "old")  # the stall sweep covers it from now on
        # before the first move the seats to act come from the creation record
        await log.create("fresh", meta({}, seed=9), {"type": "x", "game_id": "fresh"})
        first = GAME.new_state(3, 9, {}).active_seats()
        assert await log.record_bots("fresh", {s: "random" for s in first})
        celery.sent.clear()
        assert await d.handle({**recorded, "game_id": "fresh"}) == len(first)
        assert [a[1][3] for a in celery.sent] == [0] * len(first)  # at version 0
        # a finished game: nothing to play
        await log.append("old", 1, LogEntry(2, 2, "{}", "[]", (), True), "", "{}", None)
        assert await d.handle(recorded) == 0
        assert not await log.record_bots("gone", {0: "random"})  # no record: nothing written
        await r.aclose()

    asyncio.run(go())


def test_the_sweeper_enqueues_a_stalled_bot_turn_again(redis_url, key_prefix):
    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        celery = RecordingCelery()
        d = Dispatcher(
            BotSettings(redis_url=redis_url, key_prefix=key_prefix), r, celery, stall_s=30
        )
        log = GameLog(r, key_prefix)
        await log.create("g1", meta({1: "random"}), {"type": "x", "game_id": "g1"})
        created = {"type": "game_created", "game_id": "g1", "title": "railbarons"}
        assert await d.handle({**created, "version": "0", "active": "[0]"}) == 0
        await log.append("g1", 0, LogEntry(1, 0, "{}", "[]", (1,), False), "", "{}", None)
        assert await d.sweep(now=100.0) == 0  # first sight
        assert await d.sweep(now=110.0) == 0  # not stalled long enough
        assert await d.sweep(now=131.0) == 1  # stalled: the bot's turn again
        assert celery.sent[-1][1] == ("railbarons", "g1", 1, 1, "random")
        await log.append("g1", 1, LogEntry(2, 1, "{}", "[]", (0,), False), "", "{}", None)
        assert await d.sweep(now=200.0) == 0  # it moved; now the player is to act
        assert await d.sweep(now=300.0) == 0  # a player's turn is never swept
        await log.append("g1", 2, LogEntry(3, 0, "{}", "[]", (1,), True), "", "{}", None)
        assert await d.sweep(now=400.0) == 0 and await d.sweep(now=500.0) == 0  # finished
        assert not await r.hexists(d.games_key, "g1")
        await r.aclose()

    asyncio.run(go())


def test_before_the_first_move_the_sweeper_enqueues_only_the_bots_that_hold_it(
    redis_url, key_prefix
):
    """Version 0 has no log entry naming the active seats: the sweeper takes them
    from the creation record, so a player holding the first move is never swept
    (it used to enqueue every bot seat every stall)."""
    first = GAME.new_state(3, 5, {}).active_seats()
    assert len(first) == 1
    human = first[0]

    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        celery = RecordingCelery()
        d = Dispatcher(
            BotSettings(redis_url=redis_url, key_prefix=key_prefix), r, celery, stall_s=30
        )
        log = GameLog(r, key_prefix)
        for name, player_seat in (("human", human), ("bot", (human + 1) % 3)):
            game_id = f"g-{name}"
            bots = {s: "random" for s in range(3) if s != player_seat}
            created = {"type": "game_created", "game_id": game_id, "title": "railbarons"}
            await log.create(game_id, meta(bots), created)
            await d.handle({**created, "version": "0", "active": json.dumps(first)})
        celery.sent.clear()
        assert await d.sweep(now=100.0) == 0  # first sight
        assert await d.sweep(now=131.0) == 1  # stalled: only the bot holding the first move
        assert celery.sent[-1][1] == ("railbarons", "g-bot", human, 0, "random")
        assert await d.sweep(now=162.0) == 1  # again for that bot, still never for the player
        assert {args[1] for _, args, _ in celery.sent} == {"g-bot"}
        await r.aclose()

    asyncio.run(go())


def test_a_task_no_worker_started_is_sent_again_after_the_pickup_window(redis_url, key_prefix):
    """Redis out of memory can lose a task between the broker and a worker (the
    broker's bookkeeping write refused): the turn used to wait for the 60 s
    stall sweep. Now a task not started ``bot_pickup_s`` after it was sent,
    with the queue empty or a later task started, is sent again, once; a
    started one is left to its heartbeat, a turn the game left is dropped."""
    import redis as sync_redis

    from services.bots.heartbeat import TaskHeartbeats
    from services.platform.gamelog import GameLog, LogEntry

    async def go():
        r = aioredis.from_url(redis_url, decode_responses=True)
        celery = RecordingCelery()
        settings = BotSettings(redis_url=redis_url, key_prefix=key_prefix, bot_pickup_s=5)
        d = Dispatcher(settings, r, celery, stall_s=60)
        beats = TaskHeartbeats(sync_redis.Redis.from_url(redis_url), key_prefix, 3.0)
        log = GameLog(r, key_prefix)
        for game in ("g1", "g2"):  # a person on seat 0, a random bot on seat 1
            await log.create(game, meta({1: "random"}), {"type": "x", "game_id": game})
            await log.append(game, 0, LogEntry(1, 0, "{}", "[]", (1,), False), "", "{}", None)
        event = {"type": "turn", "title": "railbarons", "version": "1", "active": "[1]"}
        assert await d.handle({**event, "game_id": "g1"}) == 1
        lost = celery.ids[-1]
        t0 = d._sent[lost][0]
        assert await d.resume_lost_tasks(now=t0 + 1) == 0  # within the pickup window
        assert await d.resume_lost_tasks(now=t0 + 5.5) == 1  # queue empty, never started
        assert celery.sent[-1][1] == ("railbarons", "g1", 1, 1, "random")
        assert lost not in d._sent
        again = celery.ids[-1]
        beats.started(again, list(celery.sent[-1][1]))  # a worker took it
        assert await d.resume_lost_tasks(now=t0 + 20) == 0
        beats.ended(again)
        assert await d.resume_lost_tasks(now=t0 + 30) == 0 and not d._sent  # started: not lost

        # a queue that is not empty: wait, unless a task sent later has started
        await r.lpush(d.queue, "someone else's task")
        assert await d.handle({**event, "game_id": "g1"}) == 1
        waiting = celery.ids[-1]
        t1 = d._sent[waiting][0]
        assert await d.resume_lost_tasks(now=t1 + 6) == 0  # may be behind others in the queue
        assert await d.handle({**event, "game_id": "g2"}) == 1
        beats.started(celery.ids[-1], list(celery.sent[-1][1]))
        beats.ended(celery.ids[-1])
        assert await d.resume_lost_tasks(now=t1 + 7) == 1  # a later task started: lost
        assert celery.sent[-1][1] == ("railbarons", "g1", 1, 1, "random")

        # the game moved on meanwhile: the lost turn is dropped, not sent again
        await r.delete(d.queue)
        await log.append("g1", 1, LogEntry(2, 1, "{}", "[]", (0,), False), "", "{}", None)
        count = len(celery.sent)
        assert await d.resume_lost_tasks(now=t1 + 20) == 0
        assert len(celery.sent) == count and not d._sent
        await r.aclose()

    asyncio.run(go())


def test_of_two_replicas_one_sweeps_and_the_other_takes_over_when_it_stops_renewing(
    redis_url, key_prefix
):
    """The stall sweep and the dead-turn check look at shared state: only the replica
    holding the ``dispatcher-sweeps`` lease runs them; when it stops renewing (frozen,
    or killed), the other takes over, and the first runs none after that."""

    async def go():
        settings = BotSettings(
            redis_url=redis_url, key_prefix=key_prefix, leader_lease_s=0.6, dead_turn_check_s=0.05
        )
        clients = [aioredis.from_url(redis_url, decode_responses=True) for _ in range(2)]
        replicas = [
            Dispatcher(
                settings.model_copy(update={"consumer_name": f"replica{i}"}),
                clients[i],
                RecordingCelery(),
                sweep_every_s=0.05,
            )
            for i in range(2)
        ]
        dead_checks = [0, 0]
        for i, d in enumerate(replicas):

            async def counted(i=i, original=d.resume_dead_turns):
                dead_checks[i] += 1
                return await original()

            d.resume_dead_turns = counted
        stops = [asyncio.Event() for _ in replicas]
        tasks = [asyncio.create_task(d.run(s)) for d, s in zip(replicas, stops, strict=True)]

        async def until(condition):
            for _ in range(500):
                if condition():
                    return
                await asyncio.sleep(0.02)
            raise AssertionError("the condition never held")

        try:
            await until(lambda: max(d.sweeps for d in replicas) >= 5)
            first = max((0, 1), key=lambda i: replicas[i].sweeps)
            leader, other = replicas[first], replicas[1 - first]
            assert other.sweeps == 0 and dead_checks[1 - first] == 0
            assert dead_checks[first] > 0

            async def frozen() -> bool:  # renews nothing from now on
                return leader.lease.held

            leader.lease.try_hold = frozen
            await until(lambda: other.sweeps >= 1)
            swept, checked = leader.sweeps, dead_checks[first]
            await until(lambda: other.sweeps >= 5)
            assert (leader.sweeps, dead_checks[first]) == (swept, checked)
            assert dead_checks[1 - first] > 0
        finally:
            for stop in stops:
                stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks), 10)
            for r in clients:
                await r.aclose()

    asyncio.run(go())
