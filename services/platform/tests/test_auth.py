"""The auth interceptor on a server of its own (a generic test service beside
the real Accounts service): anonymous methods, principals in unary and
streaming handlers, require_principal / require_scope, bad headers."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from roundhouse.v1 import accounts_pb2 as pb
from services.accounts.tests.conftest import (
    INTERNAL_SECRET,
    bearer,
    reason,
    refused,
    running_accounts,
)
from services.platform.auth import (
    AuthInterceptor,
    current_principal,
    internal,
    require_principal,
    require_scope,
)
from services.platform.grpc_errors import ErrorMapping

UNAUTH = grpc.StatusCode.UNAUTHENTICATED
PUBLIC = "/test.Probe/Public"


def _describe(principal) -> bytes:
    if principal is None:
        return b"anonymous"
    return json.dumps(
        {
            "kind": principal.kind,
            "username": principal.username,
            "service": principal.service,
            "scopes": sorted(principal.scopes),
            "is_admin": principal.is_admin,
        }
    ).encode()


async def public(request, context):
    return _describe(current_principal())


async def private(request, context):
    return _describe(await require_principal(context))


async def tables(request, context):
    return _describe(await require_scope(context, "tables:write"))


async def playing(request, context):
    return _describe(await require_scope(context, "play", "bot:play"))


async def stream(request, context):
    for _ in range(3):
        await asyncio.sleep(0)
        yield _describe(current_principal())


def _probe_handler():
    ident = lambda b: b  # noqa: E731 - raw bytes in and out
    unary = {
        name: grpc.unary_unary_rpc_method_handler(fn, ident, ident)
        for name, fn in {
            "Public": public,
            "Private": private,
            "Tables": tables,
            "Playing": playing,
        }.items()
    }
    unary["Stream"] = grpc.unary_stream_rpc_method_handler(stream, ident, ident)
    return grpc.method_handlers_generic_handler("test.Probe", unary)


@pytest.fixture
def probe(store_url, redis_url, key_prefix):
    """``run(body)``: ``body(env, call)`` with ``call(method, metadata)`` on a probe
    server sharing the accounts server's verifier."""

    def run(body):
        async def main():
            async with running_accounts(store_url, redis_url, key_prefix) as env:
                server = grpc.aio.server(
                    interceptors=[
                        ErrorMapping(),
                        AuthInterceptor(
                            env.verifier, INTERNAL_SECRET, anonymous=frozenset({PUBLIC})
                        ),
                    ]
                )
                server.add_generic_rpc_handlers([_probe_handler()])
                port = server.add_insecure_port("127.0.0.1:0")
                await server.start()
                channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")

                async def call(method, metadata=()):
                    if method == "Stream":
                        got = []
                        async for item in channel.unary_stream(f"/test.Probe/{method}")(
                            b"", metadata=metadata
                        ):
                            got.append(item)
                        return got
                    reply = await channel.unary_unary(f"/test.Probe/{method}")(
                        b"", metadata=metadata
                    )
                    return reply if reply == b"anonymous" else json.loads(reply)

                try:
                    return await body(env, call)
                finally:
                    await channel.close()
                    await server.stop(None)

        return asyncio.run(main())

    return run


def test_principals_reach_the_handlers(probe):
    async def body(env, call):
        token = await env.person("hanna", scopes=["play", "tables:write"])
        assert await call("Public") == b"anonymous"
        me = await call("Public", bearer(token))
        assert me == {
            "kind": "human",
            "username": "hanna",
            "service": "",
            "scopes": ["play", "tables:write"],
            "is_admin": False,
        }
        assert (await call("Private", bearer(token)))["username"] == "hanna"
        assert (await call("Tables", bearer(token)))["username"] == "hanna"
        assert (await call("Playing", bearer(token)))["username"] == "hanna"
        streamed = await call("Stream", bearer(token))
        assert len(streamed) == 3 and all(json.loads(s)["username"] == "hanna" for s in streamed)
        service = await call("Tables", internal(INTERNAL_SECRET, "archiver"))
        assert (service["kind"], service["service"]) == ("internal", "archiver")

    probe(body)


def test_no_token_or_a_bad_one_is_unauthenticated(probe):
    async def body(env, call):
        token = await env.person("ivan", scopes=["play"])
        cases = [
            ((), "token_missing"),
            ((("authorization", "Bearer rh_" + "x" * 43),), "token_invalid"),
            ((("authorization", "Bearer not-ours"),), "token_invalid"),
            ((("authorization", "Basic aXZhbjpwdw=="),), "bad_authorization"),
            ((("authorization", "Bearer"),), "bad_authorization"),
            ((("authorization", token),), "bad_authorization"),
        ]
        for metadata, why in cases:
            for method in ("Private", "Stream"):
                err = await refused(call(method, metadata), UNAUTH)
                assert reason(err) == why, (metadata, method)
        # a bad token is refused even where no token is needed
        err = await refused(call("Public", cases[1][0]), UNAUTH)
        assert reason(err) == "token_invalid"

    probe(body)


def test_a_missing_scope_is_permission_denied_with_its_name(probe):
    async def body(env, call):
        token = await env.person("jon", scopes=["play"])
        err = await refused(call("Tables", bearer(token)), grpc.StatusCode.PERMISSION_DENIED)
        assert reason(err) == "scope_missing"
        from services.platform.grpc_errors import error_info

        assert error_info(err).metadata["scope"] == "tables:write"
        assert "tables:write" in err.details()
        bot_owner = await env.person("kim", scopes=["bots:write"])
        err = await refused(call("Playing", bearer(bot_owner)), grpc.StatusCode.PERMISSION_DENIED)
        assert error_info(err).metadata["scope"] == "play bot:play"

    probe(body)


def test_internal_auth_is_off_without_a_secret(store_url, redis_url, key_prefix):
    async def main():
        async with running_accounts(store_url, redis_url, key_prefix) as env:
            interceptor = AuthInterceptor(env.verifier, "")
            with pytest.raises(Exception) as exc:
                await interceptor.authenticate("/roundhouse.v1.Accounts/WhoAmI", internal("", "x"))
            assert getattr(exc.value, "reason", "") == "bad_authorization"
            with pytest.raises(Exception) as exc:
                await interceptor.authenticate(
                    "/roundhouse.v1.Accounts/WhoAmI", internal("anything", "dispatcher")
                )
            assert exc.value.reason == "internal_auth_disabled"
            # and a bearer token still works there
            token = await env.person("lea", scopes=["play"])
            got = await interceptor.authenticate("/roundhouse.v1.Accounts/WhoAmI", bearer(token))
            assert got.username == "lea"
            me = await env.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(token))
            assert me.account.username == "lea"

    asyncio.run(main())


def test_a_streaming_handler_that_writes_with_the_context_keeps_working(
    store_url, redis_url, key_prefix
):
    """grpc health's Watch writes with ``context.write`` (a coroutine, not an
    async generator): behind the interceptor, with a token, it still streams."""
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    async def main():
        async with running_accounts(store_url, redis_url, key_prefix) as env:
            token = await env.person("watcher", scopes=["play"])
            server = grpc.aio.server(interceptors=[AuthInterceptor(env.verifier)])
            servicer = health.aio.HealthServicer()
            health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
            await servicer.set("", health_pb2.HealthCheckResponse.SERVING)
            port = server.add_insecure_port("127.0.0.1:0")
            await server.start()
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                for metadata in (bearer(token), ()):
                    call = stub.Watch(health_pb2.HealthCheckRequest(), metadata=metadata)
                    first = await call.read()
                    assert first.status == health_pb2.HealthCheckResponse.SERVING
                    call.cancel()
                err = await refused(
                    stub.Watch(
                        health_pb2.HealthCheckRequest(), metadata=bearer("rh_" + "z" * 43)
                    ).read(),
                    UNAUTH,
                )
                assert reason(err) == "token_invalid"
            await server.stop(None)

    asyncio.run(main())
