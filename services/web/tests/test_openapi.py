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
