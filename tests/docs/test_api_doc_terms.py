"""docs/api.md and the .proto comments say what the services do: calls named
for a client are the lobby's (the rules services are internal), and
``from_version`` is exclusive, as ``WatchGame`` really is."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import redis.asyncio as aioredis
from grpc_health.v1 import health_pb2

from roundhouse.v1 import e1894_interchange_pb2, game_pb2, lobby_pb2
from services.platform.gamelog import GameLog
from services.rules.servicer import GameRulesServicer

ROOT = Path(__file__).resolve().parents[2]
API = (ROOT / "docs" / "api.md").read_text()


def _methods(module, service: str) -> set[str]:
    return {m.name for m in module.DESCRIPTOR.services_by_name[service].methods}


LOBBY = _methods(lobby_pb2, "Lobby")
OTHER_RPCS = (
    _methods(game_pb2, "GameRules")
    | _methods(e1894_interchange_pb2, "Interchange")
    | _methods(health_pb2, "Health")
) - LOBBY


def test_api_md_calls_the_lobby_by_its_own_method_names():
    for method in re.findall(r"roundhouse\.v1\.Lobby/(\w+)", API):
        assert method in LOBBY, f"docs/api.md calls Lobby/{method}, which the lobby lacks"
    for number, line in enumerate(API.splitlines(), 1):
        for name in re.findall(r"`(\w+)`", line):
            if name in OTHER_RPCS:  # an internal service's call: the line must say whose
                assert "rules service" in line or "Interchange" in line, (
                    f"docs/api.md:{number} names `{name}`, not a Lobby call: {line!r}"
                )


def test_from_version_is_documented_as_exclusive():
    for proto, rpc in (("game.proto", "WatchGame"), ("lobby.proto", "WatchTable")):
        text = (ROOT / "proto" / "roundhouse" / "v1" / proto).read_text()
        comment = re.search(rf"((?:\s*//.*\n)+)\s*rpc {rpc}\(", text).group(1)
        assert "after from_version" in comment and "exclusive" in comment, (proto, comment)
    assert "from from_version" not in API


def test_watch_game_is_exclusive_of_from_version(redis_url, key_prefix):
    class Context:
        async def abort_with_status(self, status):
            raise AssertionError(status.details)

    async def go():
        client = aioredis.from_url(redis_url, decode_responses=True)
        rules = GameRulesServicer("railbarons", GameLog(client, key_prefix))
        created = await rules.CreateGame(
            game_pb2.CreateGameRequest(title="railbarons", num_players=3, seed=1, game_id="g"),
            Context(),
        )
        seat = created.active_seats[0]
        for version in (0, 1):
            legal = await rules.ListLegalActions(
                game_pb2.ListLegalActionsRequest(game_id="g", seat=seat), Context()
            )
            answer = await rules.SubmitAction(
                game_pb2.SubmitActionRequest(
                    game_id="g",
                    seat=seat,
                    expected_version=version,
                    action_json=legal.actions_json[0],
                ),
                Context(),
            )
            seat = answer.active_seats[0]
        stream = rules.WatchGame(game_pb2.WatchGameRequest(game_id="g", from_version=1), Context())
        first = await anext(stream)
        await stream.aclose()
        assert first.version == 2  # the one after from_version, not from_version itself
        await client.aclose()

    asyncio.run(go())
