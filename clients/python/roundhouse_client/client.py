"""Sync and async clients of the Roundhouse HTTP API (``docs/api.md``).

    from roundhouse_client import Client

    with Client("http://127.0.0.1:8080", token="rh_...") as rh:
        table = rh.create_table("railbarons", num_players=4)
        rh.join(table.table_id, seat=0)
        for n in range(1, 4):
            rh.add_bot(table.table_id, seat=n, policy="greedy")
        rh.start(table.table_id)
        for line in rh.stream_table(table.table_id):
            ...

Every method raises a :mod:`roundhouse_client.errors` exception on a refusal. Streams are
iterators that reconnect and resume by themselves when the connection drops or stays silent past
``silence_s`` (longer than the server's keep-alive).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from . import _streams
from .errors import ApiError, error_from_response
from .models import Account, MoveResult, Moves, Table, Token

DEFAULT_URL = "http://127.0.0.1:8080"
#: Seconds of silence after which a stream is taken as dead and resumed: the server sends a
#: keep-alive line at least every 10 s.
DEFAULT_SILENCE_S = 25.0
#: Seconds between reconnection attempts of a stream whose server is unreachable.
RECONNECT_DELAY_S = 1.0

_RETRYABLE = (httpx.ReadTimeout, httpx.RemoteProtocolError, httpx.ReadError, httpx.ConnectError)


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    raise error_from_response(response.status_code, body, response.headers.get("retry-after"))


def _move_body(action: dict[str, Any], expected_version: int, idempotency_key: str | None) -> dict:
    return {
        "action": action,
        "expected_version": expected_version,
        "idempotency_key": idempotency_key or uuid.uuid4().hex,
    }


def _table_body(title: str, num_players: int, options: dict | None, extra: dict) -> dict:
    return {"title": title, "num_players": num_players, "options": options or {}, **extra}


def _bot_body(policy: str | None, account: str | None) -> dict:
    if (policy is None) == (account is None):
        raise ValueError("give exactly one of policy= (a hosted tier) or account= (a bot account)")
    return {"policy": policy} if policy is not None else {"account": account}


class Client:
    """A blocking client. ``token`` is a personal API token (``rh_...``); without one only the
    anonymous calls work (sign-up, tokens, spectating)."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout_s: float = 10.0,
        silence_s: float = DEFAULT_SILENCE_S,
        transport: httpx.BaseTransport | None = None,
    ):
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(
            base_url=base_url, headers=headers, timeout=timeout_s, transport=transport
        )
        self.silence_s = silence_s
        self.reconnect_delay_s = RECONNECT_DELAY_S

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._http.request(method, path, **kwargs)
        _raise_for(response)
        return response.json() if response.content else None

    # accounts -----------------------------------------------------------------------------
    def create_account(self, username: str, password: str) -> Account:
        """Sign up. Raises InvalidRequest (name or password rules), Conflict (name taken)."""
        return Account.model_validate(
            self._call("POST", "/api/accounts", json={"username": username, "password": password})
        )

    def create_token(self, username: str, password: str, scopes: list[str]) -> Token:
        """Sign in for a token with ``scopes``. Raises Unauthenticated (``bad_credentials``)."""
        body = {"username": username, "password": password, "scopes": scopes}
        return Token.model_validate(self._call("POST", "/api/tokens", json=body))

    def account(self) -> dict[str, Any]:
        """The caller's account and the token's scopes."""
        return self._call("GET", "/api/account")

    # tables -------------------------------------------------------------------------------
    def list_tables(
        self, status: str | None = None, title: str | None = None, open: bool | None = None
    ) -> list[Table]:
        """Tables by status (``open``, ``running``, ``finished``), title, open seat."""
        params = {
            k: v
            for k, v in {"status": status, "title": title, "open": open}.items()
            if v is not None
        }
        body = self._call("GET", "/api/tables", params=params)
        rows = body.get("tables", []) if isinstance(body, dict) else body
        return [Table.model_validate(row) for row in rows]

    def create_table(
        self, title: str, num_players: int, options: dict | None = None, **extra: Any
    ) -> Table:
        """A new open table owned by the caller (needs ``tables:write``)."""
        body = _table_body(title, num_players, options, extra)
        return Table.model_validate(self._call("POST", "/api/tables", json=body))

    def get_table(self, table_id: str) -> Table:
        return Table.model_validate(self._call("GET", f"/api/tables/{table_id}"))

    def join(self, table_id: str, seat: int) -> Table:
        """Take ``seat`` (0-based) of an open table."""
        return Table.model_validate(self._call("POST", f"/api/tables/{table_id}/seats/{seat}/join"))

    def add_bot(
        self, table_id: str, seat: int, *, policy: str | None = None, account: str | None = None
    ) -> Table:
        """Seat a hosted bot tier (``policy=``) or a bot account (``account=``) at ``seat``."""
        return Table.model_validate(
            self._call(
                "POST", f"/api/tables/{table_id}/seats/{seat}/bot", json=_bot_body(policy, account)
            )
        )

    def start(self, table_id: str) -> Table:
        """Start a full table (owner only)."""
        return Table.model_validate(self._call("POST", f"/api/tables/{table_id}/start"))

    # play ---------------------------------------------------------------------------------
    def view(self, table_id: str) -> dict[str, Any]:
        """The caller's seat view, or the spectators' view."""
        return self._call("GET", f"/api/tables/{table_id}/view")

    def moves(self, table_id: str) -> Moves:
        """The caller's legal moves, each with its label."""
        return Moves.model_validate(self._call("GET", f"/api/tables/{table_id}/moves"))

    def move(
        self,
        table_id: str,
        action: dict[str, Any],
        expected_version: int,
        idempotency_key: str | None = None,
    ) -> MoveResult:
        """Play ``action`` on the state at ``expected_version``.

        A retry with the same ``idempotency_key`` gets the first answer, applied once. Raises
        Conflict (``stale_version``: someone moved first), InvalidRequest (the rule in ``code``).
        """
        body = _move_body(action, expected_version, idempotency_key)
        return MoveResult.model_validate(
            self._call("POST", f"/api/tables/{table_id}/moves", json=body)
        )

    def resign(self, table_id: str) -> dict[str, Any]:
        return self._call("POST", f"/api/tables/{table_id}/resign")

    # streams ------------------------------------------------------------------------------
    def stream_table(self, table_id: str, from_version: int | None = None) -> Iterator[dict]:
        """The table's NDJSON stream: the full state first, then one line per move, until the
        game ends. Resumes by itself after a drop or a silence."""
        point = _streams.ResumePoint(version=from_version)
        yield from self._stream(f"/api/tables/{table_id}/stream", "table", point)

    def stream_events(self, from_id: str | None = None) -> Iterator[dict]:
        """The account's events (``yourTurn``, ``gameStart``, ...), for ever; resumes by itself
        after the last event id seen."""
        point = _streams.ResumePoint(event_id=from_id)
        yield from self._stream("/api/stream/events", "events", point)

    def _stream(self, path: str, kind: str, point: _streams.ResumePoint) -> Iterator[dict]:
        timeout = httpx.Timeout(self._http.timeout.connect, read=self.silence_s)
        while True:
            try:
                with self._http.stream(
                    "GET", path, params=point.params(kind), timeout=timeout
                ) as r:
                    if r.status_code >= 400:
                        r.read()
                        _raise_for(r)
                    for raw in r.iter_lines():
                        line = _streams.parse_line(raw)
                        if line is not None and point.accept(kind, line):
                            yield line
            except _RETRYABLE:
                pass  # dropped or silent past silence_s: resume below
            if point.finished:
                return
            time.sleep(self.reconnect_delay_s)


class AsyncClient:
    """The same API as :class:`Client`, for asyncio (``await`` each call, ``async for`` streams)."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout_s: float = 10.0,
        silence_s: float = DEFAULT_SILENCE_S,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=headers, timeout=timeout_s, transport=transport
        )
        self.silence_s = silence_s
        self.reconnect_delay_s = RECONNECT_DELAY_S

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = await self._http.request(method, path, **kwargs)
        _raise_for(response)
        return response.json() if response.content else None

    async def create_account(self, username: str, password: str) -> Account:
        body = {"username": username, "password": password}
        return Account.model_validate(await self._call("POST", "/api/accounts", json=body))

    async def create_token(self, username: str, password: str, scopes: list[str]) -> Token:
        body = {"username": username, "password": password, "scopes": scopes}
        return Token.model_validate(await self._call("POST", "/api/tokens", json=body))

    async def account(self) -> dict[str, Any]:
        return await self._call("GET", "/api/account")

    async def list_tables(
        self, status: str | None = None, title: str | None = None, open: bool | None = None
    ) -> list[Table]:
        params = {
            k: v
            for k, v in {"status": status, "title": title, "open": open}.items()
            if v is not None
        }
        body = await self._call("GET", "/api/tables", params=params)
        rows = body.get("tables", []) if isinstance(body, dict) else body
        return [Table.model_validate(row) for row in rows]

    async def create_table(
        self, title: str, num_players: int, options: dict | None = None, **extra: Any
    ) -> Table:
        body = _table_body(title, num_players, options, extra)
        return Table.model_validate(await self._call("POST", "/api/tables", json=body))

    async def get_table(self, table_id: str) -> Table:
        return Table.model_validate(await self._call("GET", f"/api/tables/{table_id}"))

    async def join(self, table_id: str, seat: int) -> Table:
        path = f"/api/tables/{table_id}/seats/{seat}/join"
        return Table.model_validate(await self._call("POST", path))

    async def add_bot(
        self, table_id: str, seat: int, *, policy: str | None = None, account: str | None = None
    ) -> Table:
        path = f"/api/tables/{table_id}/seats/{seat}/bot"
        return Table.model_validate(await self._call("POST", path, json=_bot_body(policy, account)))

    async def start(self, table_id: str) -> Table:
        return Table.model_validate(await self._call("POST", f"/api/tables/{table_id}/start"))

    async def view(self, table_id: str) -> dict[str, Any]:
        return await self._call("GET", f"/api/tables/{table_id}/view")

    async def moves(self, table_id: str) -> Moves:
        return Moves.model_validate(await self._call("GET", f"/api/tables/{table_id}/moves"))

    async def move(
        self,
        table_id: str,
        action: dict[str, Any],
        expected_version: int,
        idempotency_key: str | None = None,
    ) -> MoveResult:
        body = _move_body(action, expected_version, idempotency_key)
        path = f"/api/tables/{table_id}/moves"
        return MoveResult.model_validate(await self._call("POST", path, json=body))

    async def resign(self, table_id: str) -> dict[str, Any]:
        return await self._call("POST", f"/api/tables/{table_id}/resign")

    def stream_table(self, table_id: str, from_version: int | None = None) -> AsyncIterator[dict]:
        point = _streams.ResumePoint(version=from_version)
        return self._stream(f"/api/tables/{table_id}/stream", "table", point)

    def stream_events(self, from_id: str | None = None) -> AsyncIterator[dict]:
        point = _streams.ResumePoint(event_id=from_id)
        return self._stream("/api/stream/events", "events", point)

    async def _stream(
        self, path: str, kind: str, point: _streams.ResumePoint
    ) -> AsyncIterator[dict]:
        timeout = httpx.Timeout(self._http.timeout.connect, read=self.silence_s)
        while True:
            try:
                async with self._http.stream(
                    "GET", path, params=point.params(kind), timeout=timeout
                ) as r:
                    if r.status_code >= 400:
                        await r.aread()
                        _raise_for(r)
                    async for raw in r.aiter_lines():
                        line = _streams.parse_line(raw)
                        if line is not None and point.accept(kind, line):
                            yield line
            except _RETRYABLE:
                pass  # dropped or silent past silence_s: resume below
            if point.finished:
                return
            await asyncio.sleep(self.reconnect_delay_s)


__all__ = ["ApiError", "AsyncClient", "Client"]
