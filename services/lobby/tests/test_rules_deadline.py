"""The lobby passes its caller's deadline on to the rules service, capped by
``rules_call_timeout_s`` (services/lobby/server.py). Real gRPC servers in
process: the lobby, and a rules service that records the time its calls had
left."""

from __future__ import annotations

import asyncio

import grpc
import redis.asyncio as aioredis

from roundhouse.v1 import game_pb2, game_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from services.accounts.store import AccountStore
from services.lobby.hot_tables import RUNNING, HotTables, LiveSeat, LiveTable
from services.lobby.server import LobbyServicer
from services.lobby.store import TableStore
from services.platform.db import create_engine, session_factory
from services.platform.settings import LobbySettings

TITLE = "railbarons"
CAP_S = 7.0


class RecordingRules(game_pb2_grpc.GameRulesServicer):
    """Answers GetView and remembers each call's remaining time (None: no deadline)."""

    def __init__(self) -> None:
        self.remaining: list[float | None] = []

    async def GetView(self, request, context):
        self.remaining.append(context.time_remaining())
        return game_pb2.GetViewResponse(version=3)


async def _servers(redis_url, prefix, database_url):
    rules = RecordingRules()
    rules_server = grpc.aio.server()
    game_pb2_grpc.add_GameRulesServicer_to_server(rules, rules_server)
    rules_port = rules_server.add_insecure_port("127.0.0.1:0")
    await rules_server.start()
    client = aioredis.from_url(redis_url, decode_responses=True)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    hot = HotTables(client, prefix)
    settings = LobbySettings(
        redis_url=redis_url,
        key_prefix=prefix,
        rules_addresses={TITLE: f"127.0.0.1:{rules_port}"},
        rules_call_timeout_s=CAP_S,
    )
    lobby = LobbyServicer(TableStore(sessions), hot, AccountStore(sessions), settings)
    lobby_server = grpc.aio.server()
    lobby_pb2_grpc.add_LobbyServicer_to_server(lobby, lobby_server)
    lobby_port = lobby_server.add_insecure_port("127.0.0.1:0")
    await lobby_server.start()
    # a started table, as the hot index has it (spectating reads nothing else)
    await hot.put(LiveTable("t1", "g1", TITLE, RUNNING, [LiveSeat("a", "random")] * 3))

    async def close():
        await lobby.close()
        await lobby_server.stop(None)
        await rules_server.stop(None)
        await client.aclose()
        await engine.dispose()

    return rules, f"127.0.0.1:{lobby_port}", close


def test_the_callers_deadline_is_passed_on_and_capped(redis_url, key_prefix, sqlite_database_url):
    async def go():
        rules, address, close = await _servers(redis_url, key_prefix, sqlite_database_url)
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                lobby = lobby_pb2_grpc.LobbyStub(channel)
                spectate = lobby_pb2.SeatRequest(table_id="t1")
                assert (await lobby.GetSeatView(spectate, timeout=2.0)).version == 3
                await lobby.GetSeatView(spectate)  # no deadline: the cap
                await lobby.GetSeatView(spectate, timeout=600.0)  # longer than the cap
        finally:
            await close()
        short, none, long = rules.remaining
        assert short is not None and 1.0 < short <= 2.0 + 0.1
        assert none is not None and CAP_S - 1.0 < none <= CAP_S + 0.1  # gRPC rounds deadlines
        assert long is not None and CAP_S - 1.0 < long <= CAP_S + 0.1

    asyncio.run(go())
