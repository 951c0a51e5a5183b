"""Game affinity on the rules channels (services/platform/channels.py), against two
real gRPC servers on loopback behind one ``ipv4:`` address list: every call of a
game lands on one server, from asyncio and blocking channels alike, the games spread
over both, a call without a game goes somewhere, and when a server stops, its games
move to the other. Every call on them carries the caller's internal credentials unless it
brings its own ``authorization``."""

from __future__ import annotations

import asyncio

import grpc

from services.platform.auth import internal
from services.platform.channels import game_metadata, rules_aio_channel, rules_sync_channel

METHOD = "/test.Echo/Who"
GAMES = [f"game-{i}" for i in range(24)]
CREDS = internal("channel-test-secret", "tests")


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
        channel = rules_aio_channel(address, CREDS)
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
                with rules_sync_channel(address, CREDS) as sync:
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


async def echo_server() -> tuple[grpc.aio.Server, int]:
    """Answers each call (of all four kinds) with its ``authorization`` and service header."""

    def seen(context) -> bytes:
        md = dict(context.invocation_metadata())
        return f"{md.get('authorization', '-')}|{md.get('x-roundhouse-service', '-')}".encode()

    async def unary(request, context):
        return seen(context)

    async def stream_out(request, context):
        yield seen(context)

    async def stream_in(requests, context):
        async for _ in requests:
            pass
        return seen(context)

    async def both(requests, context):
        async for _ in requests:
            pass
        yield seen(context)

    handler = grpc.method_handlers_generic_handler(
        "test.Echo",
        {
            "UU": grpc.unary_unary_rpc_method_handler(unary),
            "US": grpc.unary_stream_rpc_method_handler(stream_out),
            "SU": grpc.stream_unary_rpc_method_handler(stream_in),
            "SS": grpc.stream_stream_rpc_method_handler(both),
        },
    )
    s = grpc.aio.server()
    s.add_generic_rpc_handlers((handler,))
    port = s.add_insecure_port("127.0.0.1:0")
    await s.start()
    return s, port


SENT = b"Internal channel-test-secret|tests"
OWN = (("authorization", "Bearer rh_own"),)


def test_the_rules_channels_add_the_internal_credentials_to_every_kind_of_call():
    async def go():
        s, port = await echo_server()
        address = f"127.0.0.1:{port}"
        try:
            async with rules_aio_channel(address, CREDS) as channel:
                for md, want in (((), SENT), (game_metadata("g"), SENT), (OWN, b"Bearer rh_own|-")):
                    assert await channel.unary_unary("/test.Echo/UU")(b"", metadata=md) == want
                    out = channel.unary_stream("/test.Echo/US")(b"", metadata=md)
                    assert [m async for m in out] == [want]
                    assert (
                        await channel.stream_unary("/test.Echo/SU")(iter([b""]), metadata=md)
                        == want
                    )
                    both = channel.stream_stream("/test.Echo/SS")(iter([b""]), metadata=md)
                    assert [m async for m in both] == [want]

            def blocking() -> None:
                with rules_sync_channel(address, CREDS) as sync:
                    for md, want in (
                        ((), SENT),
                        (game_metadata("g"), SENT),
                        (OWN, b"Bearer rh_own|-"),
                    ):
                        assert sync.unary_unary("/test.Echo/UU")(b"", metadata=md) == want
                        assert list(sync.unary_stream("/test.Echo/US")(b"", metadata=md)) == [want]
                        assert sync.stream_unary("/test.Echo/SU")(iter([b""]), metadata=md) == want
                        assert list(
                            sync.stream_stream("/test.Echo/SS")(iter([b""]), metadata=md)
                        ) == [want]

            await asyncio.to_thread(blocking)
            # a plain channel sends nothing: the credentials come from the rules channels
            async with grpc.aio.insecure_channel(address) as plain:
                assert await plain.unary_unary("/test.Echo/UU")(b"") == b"-|-"
        finally:
            await s.stop(None)

    asyncio.run(go())
