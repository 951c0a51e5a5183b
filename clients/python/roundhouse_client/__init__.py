"""Roundhouse's Python client: the HTTP API, typed (``docs/api.md``)."""

from .client import AsyncClient, Client
from .errors import (
    ApiError,
    Conflict,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    Unauthenticated,
    Unavailable,
    UnsupportedMediaType,
)
from .models import Account, Move, MoveResult, Moves, Range, Seat, Table, Token, turn_moves

__all__ = [
    "Account",
    "ApiError",
    "AsyncClient",
    "Client",
    "Conflict",
    "InvalidRequest",
    "Move",
    "MoveResult",
    "Moves",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "Range",
    "RateLimited",
    "Seat",
    "ServerError",
    "Table",
    "Token",
    "Unauthenticated",
    "Unavailable",
    "UnsupportedMediaType",
    "turn_moves",
]
