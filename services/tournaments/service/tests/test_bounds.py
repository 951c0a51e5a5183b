"""The tournament service through its production bootstrap (the shared
``services.platform.server.service_server``): a request over its method's bound is refused
before it is parsed with INVALID_ARGUMENT ``message_too_large`` (metadata ``max_bytes``,
``bytes``), one past what gRPC reads at all with RESOURCE_EXHAUSTED, the concurrent-call cap
is the setting's; nothing is written, and a request within the bounds is served."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from roundhouse.v1 import tournaments_pb2 as pb
from roundhouse.v1 import tournaments_pb2_grpc
from services.accounts.verifier import StoreVerifier
from services.platform import bounds
from services.platform.db import create_engine
from services.platform.grpc_errors import error_info
from services.platform.settings import TournamentsSettings
from services.tournaments.service.server import build, tournament_server
from services.tournaments.service.tests.harness import Env, reason


def test_oversized_requests_are_refused_with_the_documented_reason(sqlite_database_url):
    async def main():
        settings = TournamentsSettings(
            internal_secret="bounds-test", metrics_port=0, max_concurrent_rpcs=7, grace_seconds=0.2
        )
        engine = create_engine(sqlite_database_url, settings)
        servicer, director, accounts, ratings = build(engine, settings)
        verifier = StoreVerifier(accounts, 5.0)
        server = tournament_server(servicer, verifier, settings, "127.0.0.1:0")
        assert server.max_concurrent_rpcs == 7
        await server.start()
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
        stub = tournaments_pb2_grpc.TournamentsStub(channel)
        env = Env(stub, director, accounts, ratings, None, engine)
        try:
            organiser = await env.person("org")
            create_bound = bounds.TOURNAMENTS_MESSAGE_BYTES[bounds.TOURNAMENTS + "CreateTournament"]
            huge = pb.CreateTournamentRequest(
                settings=pb.TournamentSettings(
                    name="Cup", title="railbarons", options_json="{" + " " * create_bound + "}"
                )
            )
            for call, limit in (
                (stub.CreateTournament(huge, metadata=organiser.md), create_bound),
                (
                    stub.GetTournament(pb.GetTournamentRequest(tournament_id="t" * 2000)),
                    bounds.TOURNAMENTS_DEFAULT_MESSAGE_BYTES,
                ),
                (
                    stub.Register(
                        pb.RegisterRequest(tournament_id="t", account="a" * 1100),
                        metadata=organiser.md,
                    ),
                    bounds.TOURNAMENTS_DEFAULT_MESSAGE_BYTES,
                ),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await call
                assert reason(err.value) == (grpc.StatusCode.INVALID_ARGUMENT, "message_too_large")
                meta = error_info(err.value).metadata
                assert int(meta["max_bytes"]) == limit and int(meta["bytes"]) > limit
            with pytest.raises(grpc.aio.AioRpcError) as err:  # past what gRPC reads at all
                await stub.GetTournament(
                    pb.GetTournamentRequest(tournament_id="t" * (bounds.READ_BYTES + 1))
                )
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert await env.rows() == []  # nothing written
            t = await env.create(organiser)  # within the bounds: served
            assert (await env.get(t.tournament_id)).settings.name == "Test Cup"
        finally:
            await channel.close()
            await server.stop()
            await engine.dispose()

    asyncio.run(main())
