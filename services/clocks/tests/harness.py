"""A rules service (real gRPC on loopback, real Redis) and a clock keeper, both
on one :class:`FakeTime`, for the clock tests. Lifecycle events reach the
keeper when the test calls :meth:`ClockEnv.pump` (the production keeper reads
them through its consumer group; the handler is the same)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
from collections.abc import AsyncIterator

import grpc
import redis.asyncio as aioredis

from roundhouse.v1 import game_pb2, game_pb2_grpc
from services.clocks.keeper import ClockKeeper, grpc_firer
from services.lobby.events import AccountEvents
from services.match.resignation import resignation_policy
from services.match.timesource import FakeTime
from services.platform.auth import internal
from services.platform.channels import rules_aio_channel
from services.platform.gamelog import GameLog
from services.platform.grpc_errors import ErrorMapping
from services.rules.serve import internal_only
from services.rules.servicer import GameRulesServicer

SECRET = "clock-test-secret"
LOBBY = internal(SECRET, "lobby")
BOTS = internal(SECRET, "bots")
CLOCKS = internal(SECRET, "clocks")


@dataclasses.dataclass
class ClockEnv:
    time: FakeTime
    rules: game_pb2_grpc.GameRulesStub
    servicer: GameRulesServicer
    keeper: ClockKeeper
    redis: aioredis.Redis
    gamelog: GameLog
    events: AccountEvents
    prefix: str
    address: str
    title: str
    bare_rules: game_pb2_grpc.GameRulesStub | None = None
    """The rules stub without credentials (``rules`` sends the internal secret as ``tests``)."""
    _last_ids: dict[str, str] = dataclasses.field(default_factory=dict)  # stream -> last read

    async def pump(self) -> int:
        """Hand the keeper every lifecycle event appended since the last pump."""
        handled = 0
        for key in self.gamelog.lifecycle_keys:
            last = self._last_ids.get(key, "0-0")
            for stream_id, fields in await self.redis.xrange(key, min=f"({last}"):
                await self.keeper.handle(fields)
                self._last_ids[key] = stream_id
                handled += 1
        return handled

    async def create(self, clock: dict | None, players: int = 3, seed: int = 7) -> str:
        answer = await self.rules.CreateGame(
            game_pb2.CreateGameRequest(
                title=self.title,
                num_players=players,
                seed=seed,
                clock_json=json.dumps(clock) if clock else "",
            ),
            metadata=LOBBY,
        )
        await self.pump()
        return answer.info.game_id

    async def view(self, game_id: str, seat: int | None = None) -> game_pb2.GetViewResponse:
        request = game_pb2.GetViewRequest(game_id=game_id)
        if seat is not None:
            request.seat = seat
        return await self.rules.GetView(request)

    async def move(self, game_id: str, seat: int, rng: random.Random, as_bot: bool = False):
        """One legal move of ``seat`` (drawn with ``rng``) at the current version."""
        view = await self.view(game_id)
        legal = await self.rules.ListLegalActions(
            game_pb2.ListLegalActionsRequest(game_id=game_id, seat=seat)
        )
        answer = await self.rules.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=game_id,
                seat=seat,
                action_json=rng.choice(list(legal.actions_json)),
                expected_version=view.version,
            ),
            metadata=BOTS if as_bot else LOBBY,
        )
        await self.pump()
        return answer


@contextlib.asynccontextmanager
async def clock_env(
    redis_url: str, prefix: str, title: str = "railbarons"
) -> AsyncIterator[ClockEnv]:
    time = FakeTime()
    client = aioredis.from_url(redis_url, decode_responses=True)
    gamelog = GameLog(client, prefix)
    servicer = GameRulesServicer(title, gamelog, resignation=resignation_policy(title), time=time)
    server = grpc.aio.server(interceptors=[ErrorMapping(), internal_only(SECRET)])
    game_pb2_grpc.add_GameRulesServicer_to_server(servicer, server)
    address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    await server.start()
    channel = rules_aio_channel(address, internal(SECRET, "tests"))
    bare = grpc.aio.insecure_channel(address)
    events = AccountEvents(client, prefix)
    keeper = ClockKeeper(
        client, prefix, grpc_firer({title: address}, CLOCKS), time=time, events=events
    )
    try:
        yield ClockEnv(
            time,
            game_pb2_grpc.GameRulesStub(channel),
            servicer,
            keeper,
            client,
            gamelog,
            events,
            prefix,
            address,
            title,
            bare_rules=game_pb2_grpc.GameRulesStub(bare),
        )
    finally:
        await channel.close()
        await bare.close()
        await server.stop(None)
        await client.aclose()
