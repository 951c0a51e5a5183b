"""Game affinity on the rules channels (services/platform/channels.py), against two
real gRPC servers on loopback behind one ``ipv4:`` address list: every call of a
game lands on one server, from asyncio and blocking channels alike, the games spread
over both, a call without a game goes somewhere, and when a server stops, its games
move to the other."""

from __future__ import annotations

import asyncio

import grpc

from services.platform.channels import game_metadata, rules_aio_channel, rules_sync_channel

METHOD = "/test.Echo/Who"
GAMES = [f"game-{i}" for i in range(24)]


async def server(tag: bytes) -> tuple[grpc.aio.Server, int]:
    async def who(request, context):
        return tag

    handler = grpc.method_handlers_generic_handler(
        "test.Echo", {"Who": grpc.unary_unary_rpc_method_handler(who)}
    )
    s = grpc.aio.server()
    s.add_generic_rpc_handlers((handler,))
    port = s.add_insecure_port("127.0.0.1:0")
    await s.start()
    return s, port


def test_each_game_s_calls_go_to_one_replica_and_move_when_it_stops():
    async def go():
        (a, port_a), (b, port_b) = await server(b"A"), await server(b"B")
        address = f"ipv4:127.0.0.1:{port_a},127.0.0.1:{port_b}"
        channel = rules_aio_channel(address)
        call = channel.unary_unary(METHOD)
        try:
            served: dict[str, set[bytes]] = {}
            for _ in range(3):
                for game in GAMES:
                    answer = await call(b"", metadata=game_metadata(game), timeout=5)
                    served.setdefault(game, set()).add(answer)
            assert all(len(tags) == 1 for tags in served.values()), served
            home = {game: next(iter(tags)) for game, tags in served.items()}
            assert set(home.values()) == {b"A", b"B"}, "the games spread over both"

            # another caller (a bot worker's blocking channel) sends them to the same replica
            def blocking_calls() -> dict[str, bytes]:
                with rules_sync_channel(address) as sync:
                    blocking = sync.unary_unary(METHOD)
                    return {g: blocking(b"", metadata=game_metadata(g), timeout=5) for g in GAMES}

            assert await asyncio.to_thread(blocking_calls) == home
            assert await call(b"", metadata=game_metadata(""), timeout=5) in (b"A", b"B")
            # A stops: its games move to B
            await a.stop(None)
            for game in GAMES:
                for _ in range(50):
                    try:
                        answer = await call(b"", metadata=game_metadata(game), timeout=5)
                        break
                    except grpc.aio.AioRpcError as err:
                        assert err.code() == grpc.StatusCode.UNAVAILABLE, err
                        await asyncio.sleep(0.05)
                assert answer == b"B"
        finally:
            await channel.close()
            await a.stop(None)
            await b.stop(None)

    asyncio.run(go())


def test_game_metadata_adds_the_header_only_for_a_game():
    base = (("authorization", "x"),)
    assert game_metadata("g1", base) == (*base, ("roundhouse-game-id", "g1"))
    assert game_metadata("", base) == base
