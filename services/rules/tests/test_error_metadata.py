"""The numbers an error is about travel in its ErrorInfo metadata, not only in
the message (services/platform/grpc_errors.py): versions, seat ranges, limits,
retry hints. Driven in process against a real Redis."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest
import redis.asyncio as aioredis
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from roundhouse.v1 import game_pb2, lobby_pb2
from services.platform.gamelog import GameLog
from services.platform.grpc_errors import RETRY_AFTER_S, ServiceError, _map, error_info
from services.rules.messages import MAX_IDEMPOTENCY_KEY
from services.rules.servicer import GameRulesServicer

TITLE = "railbarons"


class Aborted(Exception):
    """What ``context.abort_with_status`` was given: code, message and ErrorInfo."""

    def __init__(self, status: grpc.Status) -> None:
        super().__init__(status.details)
        self.code = status.code
        self.info = error_details_pb2.ErrorInfo()
        for key, value in status.trailing_metadata:
            if key == rpc_status.GRPC_DETAILS_METADATA_KEY:
                status_pb2.Status.FromString(value).details[0].Unpack(self.info)


class FakeContext:
    async def abort_with_status(self, status):
        raise Aborted(status)


async def _rules(redis_url, prefix, seed=1):
    client = aioredis.from_url(redis_url, decode_responses=True)
    s = GameRulesServicer(TITLE, GameLog(client, prefix))
    created = await s.CreateGame(
        game_pb2.CreateGameRequest(title=TITLE, num_players=3, seed=seed, game_id="g"),
        FakeContext(),
    )
    return s, created.active_seats[0]


async def _first_move(s, seat) -> str:
    moves = await s.ListLegalActions(
        game_pb2.ListLegalActionsRequest(game_id="g", seat=seat), FakeContext()
    )
    return moves.actions_json[0]


async def _submit(s, seat, version, move, key=""):
    return await s.SubmitAction(
        game_pb2.SubmitActionRequest(
            game_id="g", seat=seat, expected_version=version, action_json=move, idempotency_key=key
        ),
        FakeContext(),
    )


def test_a_stale_version_names_the_current_one_in_the_metadata(redis_url, key_prefix):
    async def go():
        s, seat = await _rules(redis_url, key_prefix)
        move = await _first_move(s, seat)
        await _submit(s, seat, 0, move)
        with pytest.raises(Aborted) as err:
            await _submit(s, seat, 0, move)
        assert err.value.code == grpc.StatusCode.ABORTED
        assert err.value.info.reason == "stale_version"
        assert dict(err.value.info.metadata) == {"expected_version": "0", "current_version": "1"}

    asyncio.run(go())


def test_a_future_version_is_not_called_stale(redis_url, key_prefix):
    async def go():
        s, seat = await _rules(redis_url, key_prefix)
        move = await _first_move(s, seat)
        with pytest.raises(Aborted) as err:
            await _submit(s, seat, 3, move)
        assert err.value.code == grpc.StatusCode.OUT_OF_RANGE
        assert err.value.info.reason == "future_version"
        assert "ahead of the game" in str(err.value) and "stale" not in str(err.value)
        assert dict(err.value.info.metadata) == {"expected_version": "3", "current_version": "0"}
        assert await s.gamelog.entries("g") == []  # nothing was appended
        await _submit(s, seat, 0, move)  # the right version still plays

    asyncio.run(go())


def test_a_negative_version_is_a_bad_argument_not_a_stale_one(redis_url, key_prefix):
    async def go():
        s, seat = await _rules(redis_url, key_prefix)
        move = await _first_move(s, seat)
        with pytest.raises(Aborted) as err:
            await _submit(s, seat, -1, move)
        assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert err.value.info.reason == "bad_version"
        assert "negative" in str(err.value) and "stale" not in str(err.value)
        assert await s.gamelog.entries("g") == []  # nothing was appended
        await _submit(s, seat, 0, move)  # the right version still plays

    asyncio.run(go())


def test_a_bad_seat_and_a_long_key_give_their_limits(redis_url, key_prefix):
    async def go():
        s, seat = await _rules(redis_url, key_prefix)
        with pytest.raises(Aborted) as err:
            await s.ListLegalActions(
                game_pb2.ListLegalActionsRequest(game_id="g", seat=7), FakeContext()
            )
        assert err.value.info.reason == "bad_seat"
        assert dict(err.value.info.metadata) == {"seat": "7", "min_seat": "0", "max_seat": "2"}
        with pytest.raises(Aborted) as err:
            await _submit(s, seat, 0, await _first_move(s, seat), "k" * (MAX_IDEMPOTENCY_KEY + 1))
        assert err.value.info.reason == "bad_idempotency_key"
        assert err.value.info.metadata["max_length"] == str(MAX_IDEMPOTENCY_KEY)
        assert err.value.info.metadata["length"] == str(MAX_IDEMPOTENCY_KEY + 1)
        assert await s.gamelog.entries("g") == []  # nothing was appended

    asyncio.run(go())


def test_a_bad_game_id_gives_the_length_limit(redis_url, key_prefix):
    async def go():
        s, _ = await _rules(redis_url, key_prefix)
        with pytest.raises(Aborted) as err:
            await s.GetView(game_pb2.GetViewRequest(game_id="x" * 65), FakeContext())
        assert err.value.info.reason == "bad_game_id"
        assert dict(err.value.info.metadata) == {"length": "65", "max_length": "64"}

    asyncio.run(go())


def test_a_watch_beyond_the_game_gives_the_highest_version_allowed(redis_url, key_prefix):
    async def go():
        s, seat = await _rules(redis_url, key_prefix)
        await _submit(s, seat, 0, await _first_move(s, seat))
        with pytest.raises(Aborted) as err:
            async for _ in s.WatchGame(
                game_pb2.WatchGameRequest(game_id="g", from_version=5), FakeContext()
            ):
                pass
        assert err.value.code == grpc.StatusCode.OUT_OF_RANGE
        assert err.value.info.metadata["max_version"] == "1"
        assert err.value.info.metadata["from_version"] == "5"

    asyncio.run(go())


def test_too_many_watchers_gives_the_limit_and_a_retry_hint(redis_url, key_prefix):
    async def go():
        s, _ = await _rules(redis_url, key_prefix)
        s.max_watchers = 0
        with pytest.raises(Aborted) as err:
            async for _ in s.WatchGame(game_pb2.WatchGameRequest(game_id="g"), FakeContext()):
                pass
        assert err.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert dict(err.value.info.metadata) == {
            "max_watchers": "0",
            "retry_after_s": str(RETRY_AFTER_S),
        }

    asyncio.run(go())


def test_a_log_of_another_rules_version_names_both_versions(redis_url, key_prefix):
    """ServiceError raised below the handlers keeps its metadata through the interceptor."""

    async def go():
        s, _ = await _rules(redis_url, key_prefix)
        meta = await s.gamelog.meta("g")
        meta["rules_version"] = "0.0-old"
        await s.gamelog.r.set(s.gamelog.meta_key("g"), json.dumps(meta))
        fresh = GameRulesServicer(TITLE, s.gamelog)
        with pytest.raises(ServiceError) as raised:
            await fresh.GetView(game_pb2.GetViewRequest(game_id="g"), FakeContext())
        with pytest.raises(Aborted) as err:
            await _map(raised.value, FakeContext(), "/roundhouse.v1.GameRules/GetView")
        assert err.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert dict(err.value.info.metadata) == {
            "game_rules_version": "0.0-old",
            "server_rules_version": fresh.game.rules_version,
        }

    asyncio.run(go())


def test_the_lobby_gives_the_player_range_and_the_seat_range(
    sqlite_database_url, redis_url, key_prefix
):
    from services.lobby.tests.harness import refused, running_lobby

    async def go():
        async with running_lobby(sqlite_database_url, redis_url, key_prefix) as env:
            ada = await env.person("ada")
            err = await refused(
                env.lobby.CreateTable(
                    lobby_pb2.CreateTableRequest(title=TITLE, num_players=9), metadata=ada.md
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_player_count",
            )
            assert dict(error_info(err).metadata) == {
                "num_players": "9",
                "min_players": "2",
                "max_players": "6",
            }
            table = await env.table(ada, 3, title=TITLE)
            err = await refused(
                env.lobby.JoinSeat(
                    lobby_pb2.JoinSeatRequest(table_id=table.table_id, seat=3), metadata=ada.md
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad_seat",
            )
            assert dict(error_info(err).metadata) == {"seat": "3", "min_seat": "0", "max_seat": "2"}

    asyncio.run(go())
