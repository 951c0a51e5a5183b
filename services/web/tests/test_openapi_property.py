"""A property test over the gateway's whole OpenAPI document (issue 33, item 3): for every
route, each path or query parameter and each body field in turn gets a value it must refuse
(an integer past its bound, a number that is not finite, a lone surrogate, a huge string, the
wrong type, JSON nested too deep), the others a plausible one. Every answer is a 4xx with the
JSON error, never a 5xx, and changes nothing.

The services run in-process on a thread (the lobby, the accounts and the tournament service
behind the real gateway on uvicorn: :class:`tests.fuzz.targets.ServicesInAThread`); the test
talks HTTP to it."""

from __future__ import annotations

import contextlib
import json
import urllib.parse
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.platform.bounds import INT64_MAX, INT64_MIN
from services.platform.db import upgrade
from services.tournaments.service.tests.harness import running_tournaments
from services.web.tests.harness import running_archive, running_gateway
from tests.fuzz.targets import ServicesInAThread

STATE_SKIP = (":gw:streams:", ":events:", ":limits:", ":lock:")
"""Redis keys a refusal may touch (as in tests/fuzz/gateway.py)."""
RAW = "\x00raw\x00"
"""Stands for a raw JSON token (``1e400``, ``NaN``, deep nesting) in a body built as a dict."""


class FullGateway(ServicesInAThread):
    start_timeout_s = 120.0

    def __init__(self, database_url: str, redis_url: str, key_prefix: str) -> None:
        super().__init__()
        self.args = (database_url, redis_url, key_prefix)

    @contextlib.asynccontextmanager
    async def running(self):
        url, redis_url, prefix = self.args
        async with (
            running_tournaments(url) as tour,
            running_archive(url) as archive,
            running_gateway(
                url, redis_url, prefix, tournaments_address=tour.address, archive_address=archive
            ) as env,
        ):
            env.tournaments = tour
            yield env

    async def _populate(self, env) -> None:
        self.auth = await env.person("ada", ("play", "tables:write", "bots:write"))
        r = await env.http.post(
            "/api/tables", json={"title": "railbarons", "num_players": 2}, headers=self.auth
        )
        assert r.status_code == 201, r.text
        self.table_id = r.json()["table_id"]
        org = await env.person("org", ("play", "tournament:write"))
        r = await env.http.post(
            "/api/tournaments", json={"name": "Cup", "title": "railbarons"}, headers=org
        )
        assert r.status_code == 201, r.text
        self.tournament_id = r.json()["tournament_id"]

    def _opened(self) -> None:
        self.http = httpx.Client(base_url=self.env.base_url, timeout=30)
        self.openapi = self.http.get("/api/openapi.json").json()

    def _closing(self) -> None:
        self.http.close()

    def snapshot(self) -> tuple:
        async def state():
            keys = await self.env.lobby.redis_keys()
            return (
                await self.env.lobby.rows(),
                await self.env.tournaments.rows(),
                sorted(k for k in keys if not any(s in k for s in STATE_SKIP)),
            )

        return self.call(state())

    def plausible(self, name: str) -> str:
        """A path parameter's value that exists."""
        return {
            "table_id": self.table_id,
            "tournament_id": self.tournament_id,
            "seat": "0",
            "username": "ada",
            "name": "ada",
            "title": "railbarons",
        }.get(name, "x")


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, redis_url):
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('openapi-property') / 'rh.db'}"
    upgrade(url)
    with FullGateway(url, redis_url, "test-openapi-property") as gw:
        yield gw


# ---------------------------------------------------------------- the document


def _resolve(doc: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _kind(doc: dict, schema: dict) -> dict:
    """The schema without its ``null`` alternative (``int | None``)."""
    schema = _resolve(doc, schema)
    for option in schema.get("anyOf", []):
        option = _resolve(doc, option)
        if option.get("type") != "null":
            return option
    return schema


def operations(doc: dict) -> list[tuple[str, str, list[dict], dict | None]]:
    """``(method, path, parameters, body schema)`` of every operation of the API."""
    out = []
    for path, ops in sorted(doc["paths"].items()):
        for method, op in sorted(ops.items()):
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            schema = _kind(doc, body["schema"]) if body else None
            params = [p for p in op.get("parameters", []) if p["in"] in ("path", "query")]
            out.append((method.upper(), path, params, schema))
    return out


def test_every_integer_of_the_api_is_bounded():
    """Each integer parameter or body field has a minimum and a maximum in the document
    (an unbounded one reaches protobuf, which raises on a value it cannot hold)."""
    from services.platform.settings import Settings
    from services.web.app import create_app

    doc = create_app(Settings()).openapi()
    unbounded = []
    for method, path, params, body in operations(doc):
        fields = [(p["name"], _kind(doc, p["schema"])) for p in params]
        if body is not None:
            for name, prop in body.get("properties", {}).items():
                prop = _kind(doc, prop)
                fields.append((name, prop))
                if prop.get("type") == "array":
                    fields.append((f"{name}[]", _kind(doc, prop.get("items", {}))))
        for name, schema in fields:
            if schema.get("type") == "integer" and not (
                "minimum" in schema and "maximum" in schema
            ):
                unbounded.append(f"{method} {path} {name}")
    assert not unbounded, unbounded


# ---------------------------------------------------------------- bad values


def _past_bounds(schema: dict) -> st.SearchStrategy[int]:
    low, high = schema.get("minimum", INT64_MIN), schema.get("maximum", INT64_MAX)
    return st.integers(high + 1, high + 2**80) | st.integers(low - 2**80, low - 1)


SURROGATES = st.sampled_from(["\ud800", "a\udfffb", "\udc00" * 3, "ok\ud83d"])
HUGE_TEXT = st.sampled_from(["x" * 5000, "é" * 3000, "🚂" * 2000])
DEEP = "[" * 100_000 + "]" * 100_000


def bad_value(schema: dict, in_body: bool = True) -> st.SearchStrategy[Any]:
    """A value the field must refuse, by its type (``(RAW, token)``: a raw JSON token). A
    parameter is text: ``"7"`` is a fine integer there, ``"1.5"`` is not."""
    kind = schema.get("type")
    wrong = st.sampled_from(["7", 1.5] if in_body else ["1.5", "seven", ""])
    if kind == "integer":
        return _past_bounds(schema) | wrong
    if kind == "number":
        return st.sampled_from([(RAW, "1e400"), (RAW, "-1e400"), (RAW, "NaN"), "1"])
    if kind == "boolean":
        return st.sampled_from(["maybe", 2] if in_body else ["maybe", "2"])
    if kind == "array":
        return st.lists(SURROGATES, min_size=1, max_size=2) | st.just({"not": "a list"})
    if kind == "object" or "additionalProperties" in schema:
        return (
            st.dictionaries(SURROGATES, st.integers(0, 3), min_size=1, max_size=1)
            | st.dictionaries(st.just("k"), SURROGATES, min_size=1, max_size=1)
            | st.just((RAW, DEEP))
        )
    return SURROGATES | HUGE_TEXT | (st.just(["not", "text"]) if in_body else st.nothing())


def _plausible_field(schema: dict) -> Any:
    kind = schema.get("type")
    return {"integer": 2, "number": 1.0, "boolean": False, "array": [], "object": {}}.get(
        kind, "railbarons"
    )


def _encode(body: dict) -> bytes:
    raws: list[str] = []

    def swap(value):
        if isinstance(value, tuple) and value and value[0] == RAW:
            raws.append(value[1])
            return f"@@RAW{len(raws) - 1}@@"
        return value

    text = json.dumps({k: swap(v) for k, v in body.items()})  # ASCII: "\ud800" escapes
    for i, raw in enumerate(raws):
        text = text.replace(f'"@@RAW{i}@@"', raw)
    return text.encode()


def _quote(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return urllib.parse.quote(text.encode("utf-8", "surrogatepass"), safe="")


@st.composite
def bad_requests(draw, gateway: FullGateway):
    doc = gateway.openapi
    method, template, params, body_schema = draw(st.sampled_from(operations(doc)))
    targets = [("param", p["name"]) for p in params]
    props = {}
    if body_schema is not None:
        props = {k: _kind(doc, v) for k, v in body_schema.get("properties", {}).items()}
        targets += [("body", name) for name in props]
    if not targets:
        return None
    where, name = draw(st.sampled_from(targets))
    path, query = template, {}
    for p in params:
        schema = _kind(doc, p["schema"])
        if (where, name) == ("param", p["name"]):
            value = _quote(draw(bad_value(schema, in_body=False)))
        elif p["in"] == "path":
            value = urllib.parse.quote(gateway.plausible(p["name"]), safe="")
        else:
            continue
        if p["in"] == "path":
            path = path.replace("{" + p["name"] + "}", value)
        else:
            query[p["name"]] = value
    if query:
        path += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    content = None
    if body_schema is not None:
        required = body_schema.get("required", [])
        body = {k: _plausible_field(props[k]) for k in required}
        if where == "body":
            body[name] = draw(bad_value(props[name]))
        content = _encode(body)
    return method, path, content, f"{where} {name}"


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_every_route_refuses_bad_values_with_a_4xx(gateway, data):
    request = data.draw(bad_requests(gateway))
    if request is None:
        return
    method, path, content, target = request
    before = gateway.snapshot()
    headers = {**gateway.auth}
    if content is not None:
        headers["Content-Type"] = "application/json"
    with gateway.http.stream(method, path, content=content, headers=headers) as r:
        body = r.read() if r.status_code >= 400 else b""
    assert 400 <= r.status_code < 500, (method, path[:300], target, r.status_code, body[:300])
    error = json.loads(body)
    assert set(error) == {"code", "message", "details"}, error
    assert gateway.snapshot() == before, (method, path[:300], target)
