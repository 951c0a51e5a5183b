"""Account events (services/lobby/events.py, ``Lobby.StreamEvents``) in an
in-process lobby: every move that leaves an account's seat to act gives it a
``yourTurn`` with the version, whoever moved; a self-playing bot account
seated with ``AddBot`` is never played by the platform; streams replay the
pending events when opened and resume after an event id."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from roundhouse.v1 import lobby_pb2
from services.lobby.events import AccountEvents, Event, pending
from services.lobby.tests.harness import refused


async def next_events(stream, n: int) -> list:
    """The next ``n`` events of ``stream`` (a StreamEvents call)."""
    out = []
    async for event in stream:
        out.append(event)
        if len(out) == n:
            break
    return out


def test_events_follow_the_game_and_resume_after_an_event_id(lobby_env):
    async def body(env):
        ada = await env.person("ada")
        bot = await env.bot_account(ada, "ada-outside")  # no hosted policy: it plays itself
        table = await env.table(ada, 2)
        tid = table.table_id
        ada_stream = env.lobby.StreamEvents(lobby_pb2.StreamEventsRequest(), metadata=ada.md)
        await env.lobby.JoinSeat(lobby_pb2.JoinSeatRequest(table_id=tid, seat=0), metadata=ada.md)
        table = await env.lobby.AddBot(
            lobby_pb2.AddBotRequest(table_id=tid, seat=1, bot="ada-outside"), metadata=ada.md
        )
        assert (table.seats[1].kind, table.seats[1].policy) == (lobby_pb2.SEAT_KIND_BOT, "")
        (joined,) = await next_events(ada_stream, 1)
        assert (joined.type, joined.table_id, joined.seat) == ("tableJoined", tid, 0)
        await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
        live = await env.hot.get(tid)
        assert live.bot_seats() == {}  # the dispatcher has nothing to play here
        players = {0: ada, 1: bot}
        first = await next_events(ada_stream, 1)
        assert first[0].type == "gameStart"
        # play 12 moves, each by whoever is to act; each must announce the next turn
        seen_turns = []
        bot_stream = env.lobby.StreamEvents(lobby_pb2.StreamEventsRequest(), metadata=bot.md)
        bot_events = await next_events(bot_stream, 2)  # replayed: tableJoined, gameStart
        assert [e.type for e in bot_events] == ["tableJoined", "gameStart"]
        for _ in range(12):
            view = await env.lobby.GetSeatView(
                lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md
            )
            (seat,) = view.active_seats
            stream = ada_stream if seat == 0 else bot_stream
            (turn,) = await next_events(stream, 1)
            assert (turn.type, turn.seat, turn.version) == ("yourTurn", seat, view.version)
            seen_turns.append(turn)
            me = lobby_pb2.SeatRequest(table_id=tid, seat=seat)
            legal = await env.lobby.ListMoves(me, metadata=players[seat].md)
            await env.lobby.SubmitMove(
                lobby_pb2.SubmitMoveRequest(
                    table_id=tid,
                    seat=seat,
                    expected_version=view.version,
                    action_json=legal.actions_json[0],
                ),
                metadata=players[seat].md,
            )
        ada_stream.cancel()
        bot_stream.cancel()
        # resume after ada's first yourTurn: every later one of hers, in order
        ada_turns = [t for t in seen_turns if t.seat == 0]
        resumed = env.lobby.StreamEvents(
            lobby_pb2.StreamEventsRequest(after_event_id=ada_turns[0].event_id), metadata=ada.md
        )
        again = await next_events(resumed, len(ada_turns) - 1)
        assert [e.event_id for e in again] == [t.event_id for t in ada_turns[1:]]
        resumed.cancel()
        # a fresh stream opens with the pending events: join, start, the latest turn
        fresh = env.lobby.StreamEvents(lobby_pb2.StreamEventsRequest(), metadata=ada.md)
        opening = await next_events(fresh, 3)
        assert [e.type for e in opening] == ["tableJoined", "gameStart", "yourTurn"]
        log = await AccountEvents(env.redis, env.settings.key_prefix).after(ada.account.id, "0-0")
        latest = [e for e in log if e.type == "yourTurn"][-1]
        assert opening[2].event_id == latest.event_id
        assert latest.version >= ada_turns[-1].version
        fresh.cancel()
        # resigning ends a Chicago Express game: both accounts hear of it
        await env.lobby.Resign(lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md)
        finish = env.lobby.StreamEvents(
            lobby_pb2.StreamEventsRequest(after_event_id=seen_turns[-1].event_id),
            metadata=bot.md,
        )
        events = []
        async for e in finish:
            events.append(e)
            if e.type == "gameFinish":
                break
        result = json.loads(events[-1].data_json)["result"]
        assert result["end_reason"] == "resignation"
        finish.cancel()

    lobby_env(body, events=True)


def test_stream_events_needs_a_token_and_a_well_formed_event_id(lobby_env):
    async def body(env):
        ada = await env.person("ada")
        await refused(
            next_events(env.lobby.StreamEvents(lobby_pb2.StreamEventsRequest()), 1),
            grpc.StatusCode.UNAUTHENTICATED,
            "token_missing",
        )
        await refused(
            next_events(
                env.lobby.StreamEvents(
                    lobby_pb2.StreamEventsRequest(after_event_id="yesterday"), metadata=ada.md
                ),
                1,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_event_id",
        )

    lobby_env(body, events=True)


def test_publish_is_deduplicated_and_pending_drops_ended_tables(redis_url, key_prefix):
    import redis.asyncio as aioredis

    async def main():
        client = aioredis.from_url(redis_url, decode_responses=True)
        events = AccountEvents(client, key_prefix)
        first = await events.publish("a1", "yourTurn", table_id="t", version=3, dedupe="k")
        assert first is not None
        assert await events.publish("a1", "yourTurn", table_id="t", version=3, dedupe="k") is None
        assert [e.version for e in await events.after("a1", "0-0")] == [3]
        await client.aclose()

    asyncio.run(main())
    log = [
        Event("1-0", "tableJoined", table_id="t"),
        Event("2-0", "yourTurn", table_id="t", version=1),
        Event("3-0", "tableJoined", table_id="u"),
        Event("4-0", "yourTurn", table_id="t", version=5),
        Event("5-0", "tableAborted", table_id="u"),
    ]
    assert [e.event_id for e in pending(log)] == ["1-0", "4-0"]


@pytest.mark.parametrize("bad", ["", "1-", "-1", "x-0", "1-0-0"])
def test_bad_event_ids(bad):
    from services.lobby.events import BadEventId, check_event_id

    with pytest.raises(BadEventId):
        check_event_id(bad)


def test_a_self_playing_bot_is_a_player_for_the_seed_rule_and_aborts_are_told(lobby_env):
    async def body(env):
        ada = await env.person("ada")
        bot = await env.bot_account(ada, "ada-outside")
        table = await env.table(ada, 2, seed=7)
        tid = table.table_id
        for seat in (0, 1):
            await env.lobby.AddBot(
                lobby_pb2.AddBotRequest(
                    table_id=tid, seat=seat, **({"policy": "random"}, {"bot": "ada-outside"})[seat]
                ),
                metadata=ada.md,
            )
        # whoever runs the outside bot's program could know the cards from the seed
        await refused(
            env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md),
            grpc.StatusCode.FAILED_PRECONDITION,
            "seed_with_players",
        )
        await env.lobby.AbortTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
        stream = env.lobby.StreamEvents(
            lobby_pb2.StreamEventsRequest(after_event_id="0-0"), metadata=bot.md
        )
        events = await next_events(stream, 2)
        assert [(e.type, e.seat) for e in events] == [("tableJoined", 1), ("tableAborted", 1)]
        stream.cancel()

    lobby_env(body, events=True)


def test_moves_are_read_where_the_rules_stored_them_and_ride_on_your_turn(lobby_env):
    """ListMoves answers with the moves the rules service stored with the game's last entry
    (the same answer as asking it; asked only when none are stored), and a stream opened with
    ``with_moves`` gets them on each yourTurn still current, none on a turn that has passed."""
    import base64

    from roundhouse.v1 import game_pb2
    from services.platform.gamelog import GameLog

    async def body(env):
        ada, bob = await env.person("ada"), await env.person("bob")
        tid = (await env.table(ada, 2)).table_id
        for seat, who in enumerate((ada, bob)):
            await env.lobby.JoinSeat(
                lobby_pb2.JoinSeatRequest(table_id=tid, seat=seat), metadata=who.md
            )
        players = {0: ada, 1: bob}
        streams = {
            s: env.lobby.StreamEvents(
                lobby_pb2.StreamEventsRequest(with_moves=True), metadata=who.md
            )
            for s, who in players.items()
        }
        plain = env.lobby.StreamEvents(lobby_pb2.StreamEventsRequest(), metadata=ada.md)
        await env.lobby.StartTable(lobby_pb2.StartTableRequest(table_id=tid), metadata=ada.md)
        game_id = (await env.hot.get(tid)).game_id
        log = GameLog(env.redis, env.settings.key_prefix)
        turns = []
        for _ in range(6):
            view = await env.lobby.GetSeatView(
                lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md
            )
            (seat,) = view.active_seats
            me = lobby_pb2.SeatRequest(table_id=tid, seat=seat)
            listed = await env.lobby.ListMoves(me, metadata=players[seat].md)
            asked = await env.rules["railbarons"].ListLegalActions(
                game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat)
            )
            assert listed == asked and listed.version == view.version and listed.labels
            other = lobby_pb2.SeatRequest(table_id=tid, seat=1 - seat)
            idle = await env.lobby.ListMoves(other, metadata=players[1 - seat].md)
            assert (idle.version, len(idle.actions_json)) == (view.version, 0)
            event = None
            async for e in streams[seat]:
                if e.type == "yourTurn" and e.version == view.version:
                    event = e
                    break
            assert event is not None and event.moves == listed
            turns.append(event)
            await env.lobby.SubmitMove(
                lobby_pb2.SubmitMoveRequest(
                    table_id=tid,
                    seat=seat,
                    expected_version=view.version,
                    action_json=listed.actions_json[-1],
                ),
                metadata=players[seat].md,
            )
        async for e in plain:  # no moves unless asked for
            if e.type == "yourTurn":
                assert not e.HasField("moves")
                break
        # a replayed turn that has passed carries none
        again = env.lobby.StreamEvents(
            lobby_pb2.StreamEventsRequest(after_event_id="0-0", with_moves=True), metadata=ada.md
        )
        async for e in again:
            if e.type == "yourTurn":
                assert e.version == turns[0].version < view.version and not e.HasField("moves")
                break
        # a link to another game (a table whose first start failed) is noticed, not trusted
        env.servicer._game_of_table[tid] = "railbarons-not-this-table"
        view = await env.lobby.GetSeatView(
            lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md
        )
        (seat,) = view.active_seats
        me = lobby_pb2.SeatRequest(table_id=tid, seat=seat)
        asked = await env.rules["railbarons"].ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat)
        )
        assert await env.lobby.ListMoves(me, metadata=players[seat].md) == asked
        assert env.servicer._game_of_table[tid] == game_id
        # the lobby answers from the stored moves (a marker put there comes back) ...
        view = await env.lobby.GetSeatView(
            lobby_pb2.SeatRequest(table_id=tid, seat=0), metadata=ada.md
        )
        (seat,) = view.active_seats
        me = lobby_pb2.SeatRequest(table_id=tid, seat=seat)
        marker = game_pb2.ListLegalActionsResponse(version=view.version, labels=["marker"])
        field = base64.b64encode(marker.SerializeToString()).decode()
        await env.redis.hset(log.moves_key(game_id), str(seat), field)
        assert await env.lobby.ListMoves(me, metadata=players[seat].md) == marker
        # ... and asks the rules service when none are stored
        await env.redis.delete(log.moves_key(game_id))
        listed = await env.lobby.ListMoves(me, metadata=players[seat].md)
        assert listed.version == view.version and len(listed.actions_json) > 0
        for stream in (*streams.values(), plain, again):
            stream.cancel()

    lobby_env(body, events=True)


def test_announced_events_are_sent_on_only_when_they_follow_on():
    """A reader sends the announced events that continue from its last event id, skips those
    it already has, and reads the stream when one does not follow on (a message missed)."""
    from services.lobby.events import EventHub, Pushed, follow_on

    def item(prev: str, event_id: str) -> Pushed:
        return Pushed(prev, Event(event_id, "yourTurn"))

    chain = [item("5-0", "6-0"), item("6-0", "7-1")]
    assert [p.event.event_id for p in follow_on(chain, "5-0")] == ["6-0", "7-1"]
    assert [p.event.event_id for p in follow_on(chain, "6-0")] == ["7-1"]
    assert follow_on(chain, "7-1") == []
    assert follow_on([item("5-0", "6-0"), item("6-1", "7-0")], "5-0") is None  # 6-1 missed
    assert follow_on([item("4-0", "6-0")], "5-0") is None  # 5-0 -> 6-0 unseen

    hub = EventHub(None, "channel")
    waiter = hub.register("acct")
    hub.deliver('acct\n5-0\n6-0\n{"f": {"type": "yourTurn", "version": "3"}, "m": ""}')
    hub.deliver('other\n1-0\n2-0\n{"f": {"type": "yourTurn"}, "m": null}')
    (pushed,), reread = waiter.take()
    assert waiter.is_set() and not reread
    assert (pushed.prev, pushed.event.event_id, pushed.event.version, pushed.moves) == (
        "5-0",
        "6-0",
        3,
        "",
    )
    hub.deliver("acct")  # an older publisher's message: read the stream
    assert waiter.take() == ([], True)


def test_a_live_event_reaches_the_stream_without_reading_the_log(lobby_env):
    """Once a stream has sent what it read on opening, each new event it is told of comes
    with its announcement: the stream is not read again for it."""

    async def body(env):
        ada = await env.person("ada")
        tables = [(await env.table(ada, 2)).table_id for _ in range(2)]
        reads = []
        after = env.servicer.events.after

        async def counted(*args, **kwargs):
            reads.append(args)
            return await after(*args, **kwargs)

        env.servicer.events.after = counted
        stream = env.lobby.StreamEvents(lobby_pb2.StreamEventsRequest(), metadata=ada.md)
        for seat, tid in enumerate(tables):
            await env.lobby.JoinSeat(
                lobby_pb2.JoinSeatRequest(table_id=tid, seat=seat), metadata=ada.md
            )
            (joined,) = await next_events(stream, 1)
            assert (joined.type, joined.table_id, joined.seat) == ("tableJoined", tid, seat)
        stream.cancel()
        assert reads == []

    lobby_env(body, events=True, events_poll_s=60.0)
