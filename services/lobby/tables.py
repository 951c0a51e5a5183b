"""The lobby's table rules: what a table's status and seats allow, each refusal a
:class:`~services.platform.grpc_errors.ServiceError` with its reason code (docs/api.md,
"Lobby"). The servicer (:mod:`services.lobby.server`) authenticates, loads and stores;
these functions only judge a table record and change nothing.

>>> from services.lobby.store import SeatRecord, TableRecord
>>> t = TableRecord("t1", "railbarons", 3, "", None, [SeatRecord() for _ in range(3)], "a1")
>>> open_seat(t, 1) is None
True
>>> try:
...     open_seat(t, 3)
... except ServiceError as exc:
...     print(exc.code.name, exc.reason)
INVALID_ARGUMENT bad_seat
"""

from __future__ import annotations

import datetime

import grpc

from services.lobby.hot_tables import LiveTable
from services.lobby.models import ABORTED, EMPTY, OPEN, STARTING
from services.lobby.store import TableRecord
from services.platform.grpc_errors import ServiceError

REFUSED = grpc.StatusCode.FAILED_PRECONDITION


def require_status(t: TableRecord | LiveTable, *allowed: str) -> None:
    """Refuse unless the table's status is one of ``allowed``.

    Raises:
        ServiceError: FAILED_PRECONDITION ``table_aborted`` (an aborted table, unless
            allowed), else ``not_<first allowed>`` with the table's ``status``.
    """
    if t.status == ABORTED and ABORTED not in allowed:
        raise ServiceError(REFUSED, "table_aborted", f"table {t.table_id} was aborted")
    if t.status not in allowed:
        raise ServiceError(
            REFUSED,
            f"not_{allowed[0]}",
            f"table {t.table_id} is {t.status}, not {' or '.join(allowed)}",
            status=t.status,
        )


def check_seat_index(num_players: int, seat: int) -> None:
    """Refuse a seat index outside ``0..num_players-1``.

    Raises:
        ServiceError: INVALID_ARGUMENT ``bad_seat`` with ``min_seat`` and ``max_seat``.
    """
    if not 0 <= seat < num_players:
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_seat",
            f"seat must be 0..{num_players - 1}, got {seat}",
            seat=seat,
            min_seat=0,
            max_seat=num_players - 1,
        )


def open_seat(t: TableRecord, seat: int) -> None:
    """Refuse unless ``seat`` of an open table is empty (to join it or seat a bot).

    Raises:
        ServiceError: as :func:`require_status` (``OPEN``) and :func:`check_seat_index`;
            FAILED_PRECONDITION ``seat_taken``.
    """
    require_status(t, OPEN)
    check_seat_index(t.num_players, seat)
    if t.seats[seat].kind != EMPTY:
        raise ServiceError(REFUSED, "seat_taken", f"seat {seat} is taken", seat=seat)


def not_seated(t: TableRecord, account_id: str, username: str) -> None:
    """One seat per account at a table (system bot accounts excepted).

    Raises:
        ServiceError: FAILED_PRECONDITION ``already_seated`` with the ``seat`` held.
    """
    for i, s in enumerate(t.seats):
        if s.account_id == account_id:
            raise ServiceError(
                REFUSED, "already_seated", f"{username} already holds seat {i} here", seat=i
            )


def require_startable(t: TableRecord, now: datetime.datetime, retry_after_s: float) -> None:
    """Refuse to start a table unless it may start now: open (or a start that stayed
    ``starting`` for more than ``retry_after_s`` seconds, a lobby that died mid-start),
    every seat filled, and a fixed seed only at a table of bots (whoever knows the seed
    knows every hidden card).

    Raises:
        ServiceError: as :func:`require_status` (``OPEN``); FAILED_PRECONDITION
            ``seats_empty`` (with ``empty_seats``) or ``seed_with_players``.
    """
    stuck = (
        t.status == STARTING
        and t.start_attempt_at is not None
        and (now - t.start_attempt_at).total_seconds() > retry_after_s
    )
    if not stuck:
        require_status(t, OPEN)
    empty = [i for i, s in enumerate(t.seats) if s.kind == EMPTY]
    if empty:
        raise ServiceError(
            REFUSED,
            "seats_empty",
            f"seats {empty} are empty; every seat needs a player or a bot",
            empty_seats=",".join(map(str, empty)),
        )
    if t.seed is not None and t.has_players():
        raise ServiceError(
            REFUSED,
            "seed_with_players",
            "a fixed seed is only allowed at a table of bots: whoever knows the "
            "seed knows every hidden card",
        )
