"""The gateway's gRPC side: the lobby and accounts stubs, the caller's token
passed through as call metadata, and two small caches.

* token -> account id (``Accounts.WhoAmI``), so the gateway can find the
  caller's seat at a table. Only the mapping is cached (``token_cache_s``);
  the lobby checks the token itself on every call, so a revoked token is
  still refused at once.
* table -> seats' accounts of started tables (they never change after the
  start), so a move costs one gRPC call to the lobby.
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
from cachetools import TTLCache
from fastapi import Request

from roundhouse.v1 import (
    accounts_pb2,
    accounts_pb2_grpc,
    archive_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
    tournaments_pb2_grpc,
)
from services.platform.auth import client_address_metadata
from services.web.errors import ApiError

T = TypeVar("T")

CALL_TIMEOUT_S = 30.0
"""Deadline of the gateway's unary calls to the lobby and accounts."""


def token_of(request: Request) -> str:
    """The caller's ``Authorization`` header as given ("" = none)."""
    return request.headers.get("authorization", "")


def metadata_of(authorization: str) -> tuple[tuple[str, str], ...]:
    """gRPC call metadata carrying the caller's ``Authorization`` header as it is."""
    return (("authorization", authorization),) if authorization else ()


def token_key(authorization: str) -> str:
    """A short fingerprint of a token (cache and limiter keys; never the token)."""
    return hashlib.sha256(authorization.encode()).hexdigest()[:32]


async def rpc(call: Awaitable[T]) -> T:
    """Await a gRPC call; its error as an :class:`ApiError` (same reason code)."""
    try:
        return await call
    except grpc.aio.AioRpcError as err:
        raise ApiError.from_grpc(err) from None


async def call(
    method: Callable[..., Awaitable[T]],
    request: Any,
    authorization: str,
    extra: tuple[tuple[str, str], ...] = (),
) -> T:
    """One unary call of a gRPC stub ``method`` with the caller's ``Authorization``
    header as metadata (and ``extra`` metadata) and the gateway's deadline
    (:data:`CALL_TIMEOUT_S`).

    Raises:
        ApiError: the call's error, with the same reason code (:func:`rpc`).
    """
    metadata = metadata_of(authorization) + extra
    return await rpc(method(request, metadata=metadata, timeout=CALL_TIMEOUT_S))


def client_host(request: Request) -> str:
    """The HTTP client's address: the TCP peer, or the address a trusted proxy forwarded
    (``trusted_proxies``: uvicorn's ProxyHeadersMiddleware rewrites the peer); an address
    that is not an IP address (a proxy's garbage) is ``"invalid"``."""
    host = request.client.host if request.client else ""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return "invalid"


def client_metadata(request: Request) -> tuple[tuple[str, str], ...]:
    """Metadata passing the HTTP client's address on to the accounts service, proven with the
    internal secret, so that failed sign-ins count per client and not per gateway."""
    return client_address_metadata(request.app.state.internal_secret, client_host(request))


@dataclasses.dataclass
class Backends:
    lobby: lobby_pb2_grpc.LobbyStub
    accounts: accounts_pb2_grpc.AccountsStub
    token_cache_s: float = 60.0
    tournaments: tournaments_pb2_grpc.TournamentsStub | None = None
    archive: archive_pb2_grpc.ArchiveStub | None = None
    feeds: Any = None
    """The web pages' shared move feeds (:class:`services.web.feeds.Feeds`; made on first use)."""

    def __post_init__(self) -> None:
        self._accounts: TTLCache[str, str] = TTLCache(maxsize=100_000, ttl=self.token_cache_s)
        self._seats: TTLCache[str, tuple[str, ...]] = TTLCache(maxsize=100_000, ttl=3600)

    async def account_id(self, authorization: str) -> str:
        """The caller's account id ("" without a token). Raises ApiError 401
        for a bad token."""
        if not authorization:
            return ""
        key = token_key(authorization)
        found = self._accounts.get(key)
        if found is None:
            me = await rpc(
                self.accounts.WhoAmI(
                    accounts_pb2.WhoAmIRequest(),
                    metadata=metadata_of(authorization),
                    timeout=CALL_TIMEOUT_S,
                )
            )
            found = self._accounts[key] = me.account.account_id
        return found

    async def table(self, table_id: str) -> lobby_pb2.Table:
        request = lobby_pb2.GetTableRequest(table_id=table_id)
        return await rpc(self.lobby.GetTable(request, timeout=CALL_TIMEOUT_S))

    async def seat_of(self, table_id: str, authorization: str) -> int | None:
        """The caller's seat at the table (None: no token, or not seated)."""
        account_id = await self.account_id(authorization)
        if not account_id:
            return None
        seats = self._seats.get(table_id)
        if seats is None:
            table = await self.table(table_id)
            seats = tuple(s.account_id for s in table.seats)
            if table.status in (lobby_pb2.TABLE_STATUS_RUNNING, lobby_pb2.TABLE_STATUS_FINISHED):
                self._seats[table_id] = seats  # frozen since the start
        return seats.index(account_id) if account_id in seats else None

    async def my_seat(self, table_id: str, authorization: str) -> int:
        """The caller's seat; 401 without a token, 403 ``not_seated`` without a seat."""
        if not authorization:
            raise ApiError(
                grpc.StatusCode.UNAUTHENTICATED, "token_missing", "this needs a token (Bearer)"
            )
        seat = await self.seat_of(table_id, authorization)
        if seat is None:
            raise ApiError(
                grpc.StatusCode.PERMISSION_DENIED,
                "not_seated",
                "your account holds no seat at this table",
            )
        return seat
