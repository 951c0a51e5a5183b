"""Clocks through the lobby: a table's time control and timeout policy, the
organiser's pause, a timeout recorded on the table (its seat handed to the
takeover bot), a reclaim, and refusals that change nothing."""

from __future__ import annotations

import asyncio
import json

import grpc

from roundhouse.v1 import game_pb2, lobby_pb2
from services.bots.dispatcher import Dispatcher
from services.clocks.keeper import ClockKeeper, grpc_firer
from services.lobby.tests.harness import INTERNAL_SECRET, refused
from services.match.timesource import FakeTime
from services.platform.auth import internal
from services.platform.gamelog import GameLog
from services.platform.hotstore import KeySpace
from services.platform.settings import BotSettings

BAD = grpc.StatusCode.INVALID_ARGUMENT
LIVE = lobby_pb2.TimeControl(kind="live", base_s=60, increment_s=5)


class _Celery:
    def __init__(self):
        self.sent = []

    def send_task(self, name, args, queue, **options):
        self.sent.append(args)


async def _started(env, policy="takeover", **kw):
    ada, bob = await env.person("ada"), await env.person("bob")
    table = await env.table(ada, 3, time_control=LIVE, timeout_policy=policy, **kw)
    tid = table.table_id
    await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=ada.md)
    await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=1), metadata=bob.md)
    await env.lobby.AddBot(
        lobby_pb2.AddBotRequest(table_id=tid, seat=2, policy="random"), metadata=ada.md
    )
    table = await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
    return ada, bob, table


def test_a_table_carries_its_clock_and_a_timeout_hands_the_seat_to_the_bot(lobby_env):
    time = FakeTime()

    async def body(env):
        ada, bob, table = await _started(env)
        assert table.time_control.kind == "live" and table.time_control.base_s == 60
        assert table.timeout_policy == "takeover" and table.takeover_policy == "greedy"
        people = {0: ada, 1: bob}
        view = await env.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=table.table_id))
        seat = view.active_seats[0]
        assert view.clocks[seat].running and view.clocks[seat].remaining_ms == 60_000
        creds = internal(INTERNAL_SECRET, "clocks")
        keeper = ClockKeeper(
            env.redis,
            env.settings.key_prefix,
            grpc_firer(env.settings.rules_addresses, creds),
            time=time,
        )
        gamelog = GameLog(env.redis, env.settings.key_prefix)
        for _, fields in await gamelog.lifecycle_entries():
            await keeper.handle(fields)
        await time.advance(60_000)
        assert await keeper.fire_due() == 1
        # the lobby's consumer records the takeover on the table
        for _ in range(100):
            t = await env.lobby.GetTable(lobby_pb2.GetTableRequest(table_id=table.table_id))
            if t.seats[seat].taken_over_at_version:
                break
            await asyncio.sleep(0.02)  # the lobby's consumer runs in the background (real I/O)
        assert t.seats[seat].taken_over_at_version == 1 and t.seats[seat].policy == "greedy"
        # the dispatcher enqueues the taken-over seat's turns
        celery = _Celery()
        shared = env.settings.model_dump(include=set(BotSettings.model_fields))
        dispatcher = Dispatcher(BotSettings(**shared), env.redis, celery)
        game_shard = gamelog.lifecycle_key(table.game_id)
        last = (await env.redis.xrevrange(game_shard, count=1))[0][1]
        assert json.loads(last["takeover"]) == {str(seat): "greedy"}
        await dispatcher.handle(last)
        active = json.loads(last["active"])
        assert [a[2] for a in celery.sent] == [s for s in active if s in (seat, 2)]
        assert seat == 0  # railbarons: seat 0 opens; the player's own moves are refused now
        if seat in people:
            await refused(
                env.lobby.ListMoves(
                    lobby_pb2.SeatRequest(table_id=table.table_id, seat=seat),
                    metadata=people[seat].md,
                ),
                grpc.StatusCode.PERMISSION_DENIED,
                "bot_seat",
            )

    lobby_env(body, time=time)


def test_only_the_organiser_pauses_and_the_clocks_stop(lobby_env):
    time = FakeTime()

    async def body(env):
        ada, bob, table = await _started(env)
        pause = lobby_pb2.StartTableRequest(table_id=table.table_id)
        before = await env.rows()
        await refused(
            env.lobby.PauseTable(pause, metadata=bob.md),
            grpc.StatusCode.PERMISSION_DENIED,
            "not_organiser",
        )
        assert await env.rows() == before
        log_key = KeySpace(env.settings.key_prefix).log(table.game_id)
        assert await env.redis.xlen(log_key) == 0
        await env.lobby.PauseTable(pause, metadata=ada.md)
        view = await env.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=table.table_id))
        assert view.paused and list(view.active_seats) == []
        await time.advance(10**6)
        view = await env.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=table.table_id))
        assert max(c.remaining_ms for c in view.clocks) == 60_000
        # the tournament service pauses with internal credentials
        tournaments = internal(INTERNAL_SECRET, "tournaments")
        await env.lobby.ResumeTable(pause, metadata=tournaments)
        await env.lobby.PauseTable(pause, metadata=tournaments)
        await refused(
            env.lobby.PauseTable(pause, metadata=ada.md),
            grpc.StatusCode.FAILED_PRECONDITION,
            "already_paused",
        )

    lobby_env(body, time=time)


def test_nonsense_clocks_are_refused_and_write_nothing(lobby_env):
    async def body(env):
        ada = await env.person("ada")
        before = await env.rows()
        cases = [
            (dict(time_control=lobby_pb2.TimeControl(kind="live", base_s=-1)), "bad_time_control"),
            (dict(time_control=lobby_pb2.TimeControl(kind="live")), "bad_time_control"),
            (dict(time_control=lobby_pb2.TimeControl(kind="rapid", base_s=5)), "bad_time_control"),
            (
                dict(time_control=lobby_pb2.TimeControl(kind="live", base_s=60, max_bank_s=9)),
                "bad_time_control",
            ),
            (
                dict(
                    time_control=lobby_pb2.TimeControl(
                        kind="correspondence", per_move_s=86400, max_bank_s=60
                    )
                ),
                "bad_time_control",
            ),
            (dict(time_control=LIVE, timeout_policy="sulk"), "bad_timeout_policy"),
            (
                dict(time_control=LIVE, timeout_policy="reclaim", tournament_id="t1"),
                "reclaim_not_casual",
            ),
            (dict(time_control=LIVE, takeover_policy="oracle"), "unknown_policy"),
        ]
        for kw, reason in cases:
            await refused(env.table(ada, 3, **kw), BAD, reason)
        assert await env.rows() == before

    lobby_env(body)


def test_a_player_reclaims_a_seat_through_the_lobby(lobby_env):
    time = FakeTime()

    async def body(env):
        ada, bob, table = await _started(env, policy="reclaim", reclaim_moves=3)
        view = await env.lobby.GetSeatView(lobby_pb2.SeatRequest(table_id=table.table_id))
        seat = view.active_seats[0]
        people = {0: ada, 1: bob}
        rules = env.rules["railbarons"]
        await time.advance(60_000)
        await rules.Timeout(
            game_pb2.TimeoutRequest(game_id=table.game_id, seat=seat, expected_version=0),
            metadata=internal(INTERNAL_SECRET, "clocks"),
        )
        assert seat == 0  # railbarons: seat 0 (ada) opens
        other = people[1 - seat]
        req = lobby_pb2.SeatRequest(table_id=table.table_id, seat=seat)
        await refused(
            env.lobby.ReclaimSeat(
                lobby_pb2.SeatRequest(table_id=table.table_id, seat=1 - seat), metadata=other.md
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "not_taken_over",
        )
        await refused(
            env.lobby.ReclaimSeat(req, metadata=other.md),
            grpc.StatusCode.PERMISSION_DENIED,
            "not_your_seat",
        )
        answer = await env.lobby.ReclaimSeat(req, metadata=people[seat].md)
        assert answer.seats[seat].policy == "" and answer.seats[seat].taken_over_at_version == 0
        moves = await env.lobby.ListMoves(req, metadata=people[seat].md)
        assert moves.version == 2

    lobby_env(body, time=time)
