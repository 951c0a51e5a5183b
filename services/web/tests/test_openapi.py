"""The committed OpenAPI document (docs/openapi.json) is the app's."""

from __future__ import annotations

import json
from pathlib import Path

from services.web.openapi import document

DOC = Path(__file__).resolve().parents[3] / "docs" / "openapi.json"


def test_the_committed_openapi_document_is_the_apps():
    committed = json.loads(DOC.read_text())
    assert committed == json.loads(json.dumps(document())), (
        "docs/openapi.json is stale: .venv/bin/python -m services.web.openapi > docs/openapi.json"
    )


def test_every_resource_of_the_issue_is_documented():
    paths = document()["paths"]
    for path, method in [
        ("/api/accounts", "post"),
        ("/api/tokens", "post"),
        ("/api/account", "get"),
        ("/api/tables", "get"),
        ("/api/tables", "post"),
        ("/api/tables/{table_id}", "get"),
        ("/api/e1894/imports", "post"),
        ("/api/tables/{table_id}/export", "get"),
        ("/api/tables/{table_id}/seats/{seat}/join", "post"),
        ("/api/tables/{table_id}/seats/{seat}/bot", "post"),
        ("/api/tables/{table_id}/start", "post"),
        ("/api/tables/{table_id}/view", "get"),
        ("/api/tables/{table_id}/moves", "get"),
        ("/api/tables/{table_id}/moves", "post"),
        ("/api/tables/{table_id}/resign", "post"),
        ("/api/tables/{table_id}/stream", "get"),
        ("/api/stream/events", "get"),
    ]:
        assert method in paths.get(path, {}), (method, path)


def test_the_interactive_docs_work_offline():
    """/api/docs loads Swagger UI (a version that reads OpenAPI 3.1) from the gateway
    itself: a machine without the internet showed a blank page when it came from a CDN."""
    import asyncio
    import re

    import httpx

    from services.platform.settings import Settings
    from services.web.app import create_app

    async def body() -> None:
        transport = httpx.ASGITransport(app=create_app(Settings()))  # no lifespan: no backends
        async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
            page = await client.get("/api/docs")
            assert page.status_code == 200 and "SwaggerUIBundle" in page.text
            assets = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", page.text)
            assert assets and all(a.startswith("/api/") for a in assets), assets
            for url in assets:
                r = await client.get(url)
                assert r.status_code == 200 and len(r.content) > 1000, url
            bundle = next(a for a in assets if a.endswith("swagger-ui-bundle.js"))
            assert "isOAS31" in (await client.get(bundle)).text  # Swagger UI 5 reads 3.1
            assert "/api/openapi.json" in page.text

    asyncio.run(body())
