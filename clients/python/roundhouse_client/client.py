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

Every method raises a :mod:`roundhouse_client.errors` exception on a refusal; a call refused
for a rate limit (429) is first sent again, up to ``rate_limit_retries`` times, after the wait
the server asks for. Streams are
iterators that reconnect and resume by themselves when the connection drops or stays silent past
``silence_s`` (longer than the server's keep-alive). :class:`AsyncClient` has the same methods,
to ``await`` (streams: ``async for``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
from pydantic import BaseModel

from . import _ops, _streams
from ._ops import Op
from .errors import RateLimited, error_from_response
from .models import Account, MoveResult, Moves, Table, Token

DEFAULT_URL = "http://127.0.0.1:8080"
#: Seconds of silence after which a stream is taken as dead and resumed: the server sends a
#: keep-alive line at least every 10 s.
DEFAULT_SILENCE_S = 25.0
#: Seconds between reconnection attempts of a stream.
RECONNECT_DELAY_S = 1.0
#: How many times a call refused for a rate limit (429) is sent again, after the wait the server
#: asks for (``Retry-After``). A refused call changed nothing, so sending it again is safe.
RATE_LIMIT_RETRIES = 5
#: The longest wait for one such retry (seconds).
MAX_RETRY_WAIT_S = 30.0

_RETRYABLE = (httpx.ReadTimeout, httpx.RemoteProtocolError, httpx.ReadError, httpx.ConnectError)
_TABLE_STREAM = "/api/tables/{}/stream"
_EVENT_STREAM = "/api/stream/events"


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    raise error_from_response(response.status_code, body, response.headers.get("retry-after"))


def _parse(op: Op, response: httpx.Response) -> Any:
    _raise_for(response)
    return op.parse(response.json() if response.content else None)


def _retry_wait(err: RateLimited) -> float:
    return min(MAX_RETRY_WAIT_S, max(0.05, err.retry_after or 1.0))


class _Base:
    def __init__(self, token: str | None, silence_s: float) -> None:
        self.headers = {"authorization": f"Bearer {token}"} if token else {}
        self.silence_s = silence_s
        self.reconnect_delay_s = RECONNECT_DELAY_S
        self.rate_limit_retries = RATE_LIMIT_RETRIES

    def _stream_timeout(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Timeout:
        return httpx.Timeout(http.timeout.connect, read=self.silence_s)


class Client(_Base):
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
        super().__init__(token, silence_s)
        self._http = httpx.Client(
            base_url=base_url, headers=self.headers, timeout=timeout_s, transport=transport
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _run(self, op: Op) -> Any:
        for attempt in range(self.rate_limit_retries + 1):
            try:
                return _parse(op, self._http.request(op.method, op.path, **op.request_kwargs()))
            except RateLimited as err:
                if attempt == self.rate_limit_retries:
                    raise
                time.sleep(_retry_wait(err))

    # accounts
    def create_account(self, username: str, password: str) -> Account:
        """Sign up. Raises InvalidRequest (name or password rules), Conflict (name taken)."""
        return self._run(_ops.create_account(username, password))

    def create_token(self, username: str, password: str, scopes: list[str]) -> Token:
        """Sign in for a token with ``scopes``. Raises Unauthenticated (``bad_credentials``)."""
        return self._run(_ops.create_token(username, password, scopes))

    def account(self) -> dict[str, Any]:
        """The caller's account and the token's scopes."""
        return self._run(_ops.account())

    def create_bot(self, username: str, password: str = "", hosted_policy: str = "") -> Account:
        """A bot account of the caller's (``bots:write``); ``hosted_policy=""``: it plays
        itself, with its own program (see ``examples/bot.py``)."""
        return self._run(_ops.create_bot(username, password, hosted_policy))

    def create_bot_token(self, username: str, scopes: list[str] | None = None) -> Token:
        """A token for one of the caller's bot accounts (default scope ``bot:play``)."""
        return self._run(_ops.create_bot_token(username, scopes))

    # tables
    def list_tables(
        self, status: str | None = None, title: str | None = None, open: bool | None = None
    ) -> list[Table]:
        """Tables by status (``open``, ``running``, ``finished``), title, open seat."""
        return self._run(_ops.list_tables(status, title, open))

    def create_table(
        self, title: str, num_players: int, options: dict | None = None, **extra: Any
    ) -> Table:
        """A new open table owned by the caller (needs ``tables:write``)."""
        return self._run(_ops.create_table(title, num_players, options, extra))

    def get_table(self, table_id: str) -> Table:
        return self._run(_ops.get_table(table_id))

    def join(self, table_id: str, seat: int) -> Table:
        """Take ``seat`` (0-based) of an open table."""
        return self._run(_ops.join(table_id, seat))

    def add_bot(
        self, table_id: str, seat: int, *, policy: str | None = None, account: str | None = None
    ) -> Table:
        """Seat a hosted bot tier (``policy=``) or a bot account (``account=``) at ``seat``."""
        return self._run(_ops.add_bot(table_id, seat, policy, account))

    def start(self, table_id: str) -> Table:
        """Start a full table (owner only)."""
        return self._run(_ops.start(table_id))

    # play
    def view(self, table_id: str) -> dict[str, Any]:
        """The caller's seat view, or the spectators' view, with a summary per seat."""
        return self._run(_ops.view(table_id))

    def moves(self, table_id: str) -> Moves:
        """The caller's legal moves, each with its label."""
        return self._run(_ops.moves(table_id))

    def move(
        self,
        table_id: str,
        action: dict[str, Any] | BaseModel,
        expected_version: int,
        idempotency_key: str | None = None,
    ) -> MoveResult:
        """Play ``action`` (its canonical JSON, or a typed action of
        :mod:`roundhouse_client.actions`, e.g. ``RailbaronsBid(amount=7)``) on the state at
        ``expected_version``.

        A retry with the same ``idempotency_key`` gets the first answer, applied once. Raises
        Conflict (``stale_version``: someone moved first), InvalidRequest (the rule in ``code``).
        """
        return self._run(_ops.move(table_id, action, expected_version, idempotency_key))

    def resign(self, table_id: str) -> Table:
        return self._run(_ops.resign(table_id))

    def result(self, table_id: str) -> dict[str, Any]:
        """The finished game's standings and seed."""
        return self._run(_ops.result(table_id))

    def request_review(self, table_id: str) -> dict[str, Any]:
        """Ask for the search bot's review of a finished game (a seated player or the owner;
        a second request answers the first review): ``{"table_id", "state", "progress",
        "entries", "error"}``, ``state`` ``queued`` at first. InvalidRequest ``not_finished``,
        Forbidden ``not_seated``."""
        return self._run(_ops.request_review(table_id))

    def review(self, table_id: str) -> dict[str, Any]:
        """The table's review: ``state`` ``queued``, ``running`` (``progress``: ``{"done",
        "total"}`` moves), ``done`` (``entries``: per move ``seat``, ``label``,
        ``win_chance_before``/``win_chance_after`` per seat in [0, 1], ``best_label``,
        ``loss``) or ``failed`` (``error``). NotFound ``no_review`` before a request."""
        return self._run(_ops.review(table_id))

    def import_e1894(self, game: dict[str, Any]) -> dict[str, Any]:
        """A game recorded on 18xx.games (its parsed JSON) as a new table of yours:
        ``{"table_id", "status", "replay_url", "table"}``. A refused recording raises the
        API's error (422, ``details["action_id"]``, ``details["action_index"]``)."""
        return self._run(_ops.import_e1894(game))

    def export(self, table_id: str) -> dict[str, Any]:
        """A finished 1894 table's game as 18xx.games JSON: ``{"table_id", "format", "game"}``."""
        return self._run(_ops.export(table_id))

    # streams
    def stream_table(self, table_id: str, from_version: int | None = None) -> Iterator[dict]:
        """The table's NDJSON stream: the full state first, then one line per move, until the
        game ends. Resumes by itself after a drop or a silence."""
        point = _streams.ResumePoint(version=from_version)
        return self._stream(_TABLE_STREAM.format(table_id), "table", point)

    def stream_events(self, from_id: str | None = None, moves: bool = False) -> Iterator[dict]:
        """The account's events (``yourTurn``, ``gameStart``, ...), for ever; resumes by itself
        after the last event id seen. With ``moves``, a ``yourTurn`` still current carries the
        seat's legal moves (``turn_moves`` reads them)."""
        point = _streams.ResumePoint(event_id=from_id, moves=moves)
        return self._stream(_EVENT_STREAM, "events", point)

    def _stream(self, path: str, kind: str, point: _streams.ResumePoint) -> Iterator[dict]:
        timeout = self._stream_timeout(self._http)
        while True:
            try:
                params = point.params(kind)
                with self._http.stream("GET", path, params=params, timeout=timeout) as r:
                    if r.status_code >= 400:
                        r.read()
                        _raise_for(r)
                    for raw in r.iter_lines():
                        line = _streams.parse_line(raw)
                        if line is not None and point.accept(kind, line):
                            yield line
            except _RETRYABLE:
                pass  # dropped, or silent past silence_s: resume below
            if point.finished:
                return
            time.sleep(self.reconnect_delay_s)


class AsyncClient(_Base):
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
        super().__init__(token, silence_s)
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=self.headers, timeout=timeout_s, transport=transport
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _run(self, op: Op) -> Any:
        for attempt in range(self.rate_limit_retries + 1):
            try:
                response = await self._http.request(op.method, op.path, **op.request_kwargs())
                return _parse(op, response)
            except RateLimited as err:
                if attempt == self.rate_limit_retries:
                    raise
                await asyncio.sleep(_retry_wait(err))

    async def create_account(self, username: str, password: str) -> Account:
        return await self._run(_ops.create_account(username, password))

    async def create_token(self, username: str, password: str, scopes: list[str]) -> Token:
        return await self._run(_ops.create_token(username, password, scopes))

    async def account(self) -> dict[str, Any]:
        return await self._run(_ops.account())

    async def create_bot(
        self, username: str, password: str = "", hosted_policy: str = ""
    ) -> Account:
        return await self._run(_ops.create_bot(username, password, hosted_policy))

    async def create_bot_token(self, username: str, scopes: list[str] | None = None) -> Token:
        return await self._run(_ops.create_bot_token(username, scopes))

    async def list_tables(
        self, status: str | None = None, title: str | None = None, open: bool | None = None
    ) -> list[Table]:
        return await self._run(_ops.list_tables(status, title, open))

    async def create_table(
        self, title: str, num_players: int, options: dict | None = None, **extra: Any
    ) -> Table:
        return await self._run(_ops.create_table(title, num_players, options, extra))

    async def get_table(self, table_id: str) -> Table:
        return await self._run(_ops.get_table(table_id))

    async def join(self, table_id: str, seat: int) -> Table:
        return await self._run(_ops.join(table_id, seat))

    async def add_bot(
        self, table_id: str, seat: int, *, policy: str | None = None, account: str | None = None
    ) -> Table:
        return await self._run(_ops.add_bot(table_id, seat, policy, account))

    async def start(self, table_id: str) -> Table:
        return await self._run(_ops.start(table_id))

    async def view(self, table_id: str) -> dict[str, Any]:
        return await self._run(_ops.view(table_id))

    async def moves(self, table_id: str) -> Moves:
        return await self._run(_ops.moves(table_id))

    async def move(
        self,
        table_id: str,
        action: dict[str, Any] | BaseModel,
        expected_version: int,
        idempotency_key: str | None = None,
    ) -> MoveResult:
        return await self._run(_ops.move(table_id, action, expected_version, idempotency_key))

    async def resign(self, table_id: str) -> Table:
        return await self._run(_ops.resign(table_id))

    async def result(self, table_id: str) -> dict[str, Any]:
        return await self._run(_ops.result(table_id))

    async def request_review(self, table_id: str) -> dict[str, Any]:
        return await self._run(_ops.request_review(table_id))

    async def review(self, table_id: str) -> dict[str, Any]:
        return await self._run(_ops.review(table_id))

    async def import_e1894(self, game: dict[str, Any]) -> dict[str, Any]:
        return await self._run(_ops.import_e1894(game))

    async def export(self, table_id: str) -> dict[str, Any]:
        return await self._run(_ops.export(table_id))

    def stream_table(self, table_id: str, from_version: int | None = None) -> AsyncIterator[dict]:
        point = _streams.ResumePoint(version=from_version)
        return self._stream(_TABLE_STREAM.format(table_id), "table", point)

    def stream_events(self, from_id: str | None = None, moves: bool = False) -> AsyncIterator[dict]:
        point = _streams.ResumePoint(event_id=from_id, moves=moves)
        return self._stream(_EVENT_STREAM, "events", point)

    async def _stream(
        self, path: str, kind: str, point: _streams.ResumePoint
    ) -> AsyncIterator[dict]:
        timeout = self._stream_timeout(self._http)
        while True:
            try:
                params = point.params(kind)
                async with self._http.stream("GET", path, params=params, timeout=timeout) as r:
                    if r.status_code >= 400:
                        await r.aread()
                        _raise_for(r)
                    async for raw in r.aiter_lines():
                        line = _streams.parse_line(raw)
                        if line is not None and point.accept(kind, line):
                            yield line
            except _RETRYABLE:
                pass  # dropped, or silent past silence_s: resume below
            if point.finished:
                return
            await asyncio.sleep(self.reconnect_delay_s)


__all__ = ["AsyncClient", "Client"]
