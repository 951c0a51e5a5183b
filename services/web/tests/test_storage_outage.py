"""The gateway's own Redis (the stream slots) away: the stream request is answered 503
``storage_unavailable`` with ``retry_after_s``, and that is the whole of it: no exception
goes on out of the application after the answer (issue 33, item 2). Starlette's handler for
``Exception`` sends its answer and then raises the exception again, so the server logged an
"Exception in ASGI application" traceback under every 503 of an outage."""

from __future__ import annotations

import asyncio

import httpx

from services.cli.launcher import free_port
from services.platform.settings import GatewaySettings
from services.web.app import create_app


def test_a_stream_with_redis_away_is_503_and_nothing_escapes_the_app():
    """The table stream takes its slot before it asks the lobby anything (a spectator's,
    counted per address), so no other service is needed here."""
    # nothing listens on this port: every call of the gateway's Redis client is refused
    settings = GatewaySettings(redis_url=f"redis://127.0.0.1:{free_port()}/0")
    app = create_app(settings)

    async def body() -> httpx.Response:
        # raise_app_exceptions: an exception leaving the app after its answer fails here
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=True)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://gw") as client,
        ):
            return await client.get("/api/tables/t1/stream")

    answer = asyncio.run(body())
    assert answer.status_code == 503, answer.text
    assert answer.json()["code"] == "storage_unavailable"
    assert int(answer.json()["details"]["retry_after_s"]) >= 1
    assert int(answer.headers["Retry-After"]) >= 1
