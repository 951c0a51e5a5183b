"""The gateway in-process for tests: the real lobby (with its account-event
consumer) and accounts servers over loopback gRPC, a real Redis and store,
and the FastAPI app served by uvicorn on a free port; the test talks HTTP to
it with httpx."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Sequence

import grpc
import httpx
import uvicorn

from roundhouse.v1 import archive_pb2_grpc
from services.accounts.tests.conftest import INTERNAL_SECRET, PASSWORD, running_accounts
from services.archive.server import ArchiveServicer
from services.archive.store import ArchiveStore
from services.cli.launcher import free_port
from services.lobby.tests.harness import LobbyEnv, running_lobby
from services.platform.db import create_engine
from services.platform.settings import GatewaySettings
from services.web.app import create_app


@dataclasses.dataclass
class GatewayEnv:
    http: httpx.AsyncClient
    lobby: LobbyEnv
    base_url: str

    async def person(self, name: str, scopes=("play", "tables:write", "bots:write")) -> dict:
        """Signs ``name`` up over the API; Authorization headers of a new token."""
        r = await self.http.post("/api/accounts", json={"username": name, "password": PASSWORD})
        assert r.status_code == 201, r.text
        r = await self.http.post(
            "/api/tokens", json={"username": name, "password": PASSWORD, "scopes": list(scopes)}
        )
        assert r.status_code == 201, r.text
        return {"Authorization": f"Bearer {r.json()['token']}"}


@contextlib.asynccontextmanager
async def running_archive(database_url: str) -> AsyncIterator[str]:
    """The archive's gRPC server (``ListGames``) on the store at ``database_url``, on a free
    loopback port; yields its address (the gateway's ``archive_address``)."""
    engine = create_engine(database_url)
    server = grpc.aio.server()
    archive_pb2_grpc.add_ArchiveServicer_to_server(ArchiveServicer(ArchiveStore(engine)), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)
        await engine.dispose()


@contextlib.asynccontextmanager
async def running_gateway(
    database_url: str,
    redis_url: str,
    key_prefix: str,
    titles: Sequence[str] = ("railbarons",),
    accounts_options: dict | None = None,
    **gateway: object,
) -> AsyncIterator[GatewayEnv]:
    """Everything on free loopback ports; ``titles``: the rules services the lobby runs;
    ``gateway``: GatewaySettings fields of the gateway (``gateway_keepalive_s``,
    ``gateway_streams_per_token``, ...); ``accounts_options``: options of
    :func:`running_accounts` (``per_pair``, ``per_peer``)."""
    async with (
        running_lobby(database_url, redis_url, key_prefix, titles=titles, events=True) as lobby,
        running_accounts(
            database_url, redis_url, key_prefix, **(accounts_options or {})
        ) as accounts,
    ):
        gateway.setdefault("internal_secret", INTERNAL_SECRET)
        gateway.setdefault("database_url", database_url)  # the OAuth tables
        settings = GatewaySettings(
            redis_url=redis_url,
            key_prefix=key_prefix,
            lobby_address=lobby.lobby_address,
            accounts_address=accounts.address,
            **gateway,
        )
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(settings),
                host="127.0.0.1",
                port=port,
                log_level="warning",
                proxy_headers=False,  # as services/web/server.py: trusted_proxies decides
                timeout_graceful_shutdown=1,
            )
        )
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.02)
        base = f"http://127.0.0.1:{port}"
        try:
            async with httpx.AsyncClient(base_url=base, timeout=20) as http:
                yield GatewayEnv(http, lobby, base)
        finally:
            server.should_exit = True
            await task
