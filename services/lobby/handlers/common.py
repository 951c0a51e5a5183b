"""What the lobby's handlers share: the metrics, the refusal codes and the owner check."""

from __future__ import annotations

import grpc
from prometheus_client import Counter

from services.lobby.store import TableRecord
from services.platform.auth import Principal
from services.platform.grpc_errors import ServiceError
from services.platform.logging import get_logger

log = get_logger("lobby")

TABLES = Counter("roundhouse_lobby_tables_total", "Tables by event", ["title", "event"])

MOVES = Counter("roundhouse_lobby_moves_total", "Player moves forwarded", ["title", "outcome"])

DENIED = grpc.StatusCode.PERMISSION_DENIED
REFUSED = grpc.StatusCode.FAILED_PRECONDITION


def require_owner(t: TableRecord, principal: Principal) -> None:
    """The table's owner, an admin, or an internal service (the tournament service runs the
    tables it created for an organiser)."""
    if principal.account_id != t.owner_id and not principal.is_admin and not principal.is_internal:
        raise ServiceError(
            DENIED,
            "not_owner",
            f"only the table's owner ({t.owner}) or an admin may do this",
            owner=t.owner,
        )


def unknown_table(table_id: str) -> ServiceError:
    """NOT_FOUND ``unknown_table`` (the id is not echoed: it is the caller's text)."""
    return ServiceError(grpc.StatusCode.NOT_FOUND, "unknown_table", "no such table")
