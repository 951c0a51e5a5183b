"""Integration fixtures: the real processes (rules services, lobby, bot
dispatcher, a Celery worker) started against a real Redis, gRPC over
loopback."""

from __future__ import annotations

import grpc
import pytest
import redis

from roundhouse.v1 import game_pb2_grpc, lobby_pb2_grpc
from services.cli.launcher import Stack
from services.common.registry import available_titles

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def stack(redis_url, tmp_path_factory):
    """One running stack for the whole session (fresh key prefix)."""
    with Stack(
        available_titles(),
        redis_url=redis_url,
        workers=2,
        run_dir=tmp_path_factory.mktemp("stack"),
        log_level="INFO",
    ) as s:
        yield s


@pytest.fixture(scope="session")
def lobby(stack):
    with grpc.insecure_channel(stack.lobby_address) as channel:
        yield lobby_pb2_grpc.LobbyStub(channel)


@pytest.fixture(scope="session")
def rules(stack):
    """title -> GameRules stub."""
    channels = {t: grpc.insecure_channel(a) for t, a in stack.rules_addresses.items()}
    yield {t: game_pb2_grpc.GameRulesStub(c) for t, c in channels.items()}
    for c in channels.values():
        c.close()


@pytest.fixture(scope="session")
def rdb(stack):
    client = redis.Redis.from_url(stack.redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def rdb_for():
    """A function: a Redis client (decoding) for a stack the test started itself."""
    clients = []

    def make(stack):
        client = redis.Redis.from_url(stack.redis_url, decode_responses=True)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
