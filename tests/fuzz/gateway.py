"""The fuzz suite's HTTP target (issue 13, item 9): hostile requests to the
HTTP gateway (``services/web``), in-process with the real lobby and accounts
(``services/web/tests/harness.py``), on a loop in a thread.

Requests are drawn from the gateway's own OpenAPI document: every route of
the tables and accounts API (the tournament and rating routes are left out:
their service is not started here, so they answer 503), with path parameters,
query strings and bodies from :data:`tests.fuzz.strategies.NASTY_TEXT`, real
ids, random unicode, random bytes and random JSON, any method, and no, a
wrong or a real token. The checks (:func:`check`): no answer is a 5xx, every
refusal is the documented JSON error (``code``, ``message``, ``details``), and
a refusal leaves the store and Redis as they were.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import urllib.parse

import httpx
from hypothesis import strategies as st

from services.web.tests.harness import running_gateway
from tests.fuzz.runner import Tally
from tests.fuzz.strategies import NASTY_TEXT, text_for
from tests.fuzz.targets import ServicesInAThread

SKIP_PREFIXES = ("/api/tournaments", "/api/ratings")
"""Routes of the tournament service, which is not started here."""

STATE_SKIP = (":gw:streams:", ":events:", ":limits:", ":lock:")
"""Redis keys a refusal may touch: stream slots and rate counters count refused
calls; account events are written asynchronously by the lobby's consumer; a
creation lock is held while a creation is refused (services/web/tests/test_bad_input.py)."""


@dataclasses.dataclass(frozen=True)
class HttpRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes | None


class Gateway(ServicesInAThread):
    """The gateway, lobby and accounts in a thread; ``known`` ids and a real
    token after :meth:`__enter__`."""

    start_timeout_s = 90.0

    def __init__(self, database_url: str, redis_url: str, key_prefix: str) -> None:
        super().__init__()
        self.args = (database_url, redis_url, key_prefix)

    def running(self) -> contextlib.AbstractAsyncContextManager:
        return running_gateway(*self.args)

    async def _populate(self, env) -> None:
        self.auth = await env.person("ada")
        r = await env.http.post(
            "/api/tables", json={"title": "railbarons", "num_players": 2}, headers=self.auth
        )
        assert r.status_code == 201, r.text
        self.table_ids = [r.json()["table_id"]]

    def _opened(self) -> None:
        self.http = httpx.Client(base_url=self.env.base_url, timeout=20)
        self.routes = routes(self.http.get("/api/openapi.json").json())

    def _closing(self) -> None:
        self.http.close()

    def snapshot(self) -> tuple:
        async def state():
            keys = await self.env.lobby.redis_keys()
            return await self.env.lobby.rows(), sorted(
                k for k in keys if not any(s in k for s in STATE_SKIP)
            )

        return self.call(state())

    @property
    def known(self) -> list[str]:
        return [*self.table_ids, "ada", "railbarons", "0", "1", "random"]

    def send(self, request: HttpRequest) -> tuple[int, bytes]:
        """The status and the body (a 200 stream: its status only); status 0:
        the HTTP client itself refused to send the request."""
        try:
            built = self.http.build_request(
                request.method, request.path, headers=request.headers, content=request.body
            )
            response = self.http.send(built, stream=True)
        except (httpx.LocalProtocolError, httpx.InvalidURL):  # e.g. a URL over 64 KiB
            return 0, b""
        try:
            if response.status_code < 400:
                return response.status_code, b""
            return response.status_code, response.read()
        finally:
            response.close()


def routes(openapi: dict) -> list[tuple[str, str]]:
    """``(method, path template)`` of every fuzzed route of the OpenAPI document."""
    return sorted(
        (method.upper(), path)
        for path, ops in openapi["paths"].items()
        if not path.startswith(SKIP_PREFIXES)
        for method in ops
        if not path.startswith("/api/accounts/") or "ratings" not in path
    )


def _quote(text: str) -> str:
    return urllib.parse.quote(text.encode("utf-8", "surrogatepass"), safe="")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | text_for([]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text_for([]), inner, max_size=4),
    max_leaves=12,
)


def _body(known: list[str]) -> st.SearchStrategy[bytes | None]:
    fields = [
        "title",
        "num_players",
        "options_json",
        "action_json",
        "seat",
        "policy",
        "username",
        "password",
        "scopes",
        "expected_version",
        "idempotency_key",
        "label",
    ]
    objects = st.dictionaries(
        st.sampled_from(fields) | text_for([]), JSON_VALUES | st.sampled_from(known), max_size=6
    )
    return st.one_of(
        st.none(),
        st.binary(max_size=200),
        st.sampled_from(NASTY_TEXT).map(lambda t: t.encode("utf-8", "surrogatepass")),
        (objects | JSON_VALUES).map(lambda v: json.dumps(v).encode()),
    )


def http_requests(gateway: Gateway) -> st.SearchStrategy[HttpRequest]:
    known = gateway.known
    tokens = st.sampled_from(
        [None, gateway.auth["Authorization"], "Bearer rh_wrong_token", "Basic eA==", "Bearer"]
    )
    content_types = st.sampled_from([None, "application/json", "text/plain", "application/x"])

    @st.composite
    def one(draw) -> HttpRequest:
        method, template = draw(st.sampled_from(gateway.routes))
        if draw(st.integers(0, 9)) == 0:
            method = draw(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]))
        path = template
        while "{" in path:
            start, end = path.index("{"), path.index("}")
            value = draw(st.sampled_from(known) | text_for(known))
            path = path[:start] + _quote(value) + path[end + 1 :]
        if draw(st.booleans()):
            key = draw(st.sampled_from(["from_version", "page_size", "page_token", "title", "x"]))
            path += f"?{key}={_quote(draw(text_for(known)))}"
        headers = {}
        token, ctype = draw(tokens), draw(content_types)
        if token is not None:
            headers["Authorization"] = token
        if ctype is not None:
            headers["Content-Type"] = ctype
        return HttpRequest(method, path, headers, draw(_body(known)))

    return one()


def check(gateway: Gateway, request: HttpRequest, tally: Tally, state: list) -> None:
    """Send ``request``; count it and note a broken check in ``tally``
    (``state``: the last snapshot, a one-item list)."""
    status, body = gateway.send(request)
    if status == 0:
        return
    tally.by_code[str(status)] += 1
    if status >= 500:
        tally.broken.append((request, status, "a 5xx answer"))
        return
    if status >= 400:
        try:
            error = json.loads(body)
            ok = isinstance(error, dict) and set(error) == {"code", "message", "details"}
        except ValueError:
            ok = False
        if not ok:
            tally.broken.append((request, status, f"not the JSON error: {body[:200]!r}"))
        tally.by_reason[error.get("code", "") if ok else ""] += 1
    now = gateway.snapshot()
    if status >= 400 and now != state[0]:
        tally.broken.append((request, status, "a refusal changed the state"))
    state[0] = now
