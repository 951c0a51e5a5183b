"""Rematch offers (issue 32, item 2), in the durable store (table ``rematches``, migration
``0010_challenges``), and the rules that judge them.

One row per finished table offered again. ``status`` is ``pending``, ``starting`` (every
person accepted; the new table is being created and started), ``started`` (``new_table_id``)
or ``declined``. ``accepted_json`` is the JSON list of the account ids that accepted. Every
answer locks the row first (``revision = revision + 1``, as the tables do), so of two last
acceptances at once exactly one sees everyone accepted and starts the new table.

The new table: the same title, options and clock, the same owner, no seed, and the seats
rotated by one (the account at seat ``i`` sits at ``(i + 1) % n``). Persons must accept;
bot seats (hosted policies, bot accounts) accept at once.

>>> from services.lobby.store import SeatRecord
>>> seats = [SeatRecord("player", "a", "ada"), SeatRecord("bot", "g", "greedy-bot", True,
...          "greedy"), SeatRecord("player", "b", "bob")]
>>> [s.username for s in rotated(seats)]
['bob', 'ada', 'greedy-bot']
>>> sorted(must_accept(seats))
['a', 'b']
"""

from __future__ import annotations

import datetime
import json

import grpc
import sqlalchemy as sa
from sqlalchemy import CheckConstraint, ForeignKey, String, Text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from services.lobby.models import BOT, PLAYER
from services.lobby.store import SeatRecord, TableRecord
from services.platform.db import Base, UTCDateTime
from services.platform.grpc_errors import ServiceError

PENDING, STARTING, STARTED, DECLINED = "pending", "starting", "started", "declined"

REFUSED = grpc.StatusCode.FAILED_PRECONDITION


class Rematch(Base):
    __tablename__ = "rematches"

    table_id: Mapped[str] = mapped_column(
        ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True
    )
    offered_by_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    status: Mapped[str] = mapped_column(String(10))
    accepted_json: Mapped[str] = mapped_column(Text)
    declined_by_id: Mapped[str | None] = mapped_column(ForeignKey("accounts.id"))
    new_table_id: Mapped[str | None] = mapped_column(String(16))
    revision: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime.datetime] = mapped_column(UTCDateTime())

    __table_args__ = (
        CheckConstraint("status IN ('pending', 'starting', 'started', 'declined')", name="status"),
    )


def rotated(seats: list[SeatRecord]) -> list[SeatRecord]:
    """The new table's seats: seat ``i``'s account at ``(i + 1) % n``, fresh (not resigned,
    not taken over); a person's seat that a bot finished after a resignation is the
    person's again."""
    fresh = []
    for s in seats:
        if s.kind == BOT:
            fresh.append(SeatRecord(BOT, s.account_id, s.username, True, s.policy))
        else:
            fresh.append(SeatRecord(PLAYER, s.account_id, s.username, s.bot_account))
    return fresh[-1:] + fresh[:-1]


def must_accept(seats: list[SeatRecord]) -> set[str]:
    """The account ids that must accept: the persons seated (bots accept at once)."""
    return {s.account_id for s in seats if s.kind == PLAYER and not s.bot_account}


def require_rematchable(t: TableRecord) -> None:
    """Refuse a rematch of a table that cannot be played again as it was.

    Raises:
        ServiceError: FAILED_PRECONDITION ``no_rematch`` (a tournament's table, an imported
            game's guests, a seat without an account).
    """
    if t.tournament_id or any(not s.account_id or s.guest for s in t.seats):
        raise ServiceError(
            REFUSED, "no_rematch", "only a casual table of accounts can be played again"
        )


class RematchStore:
    """Rematch offers in the database (the tables' session factory)."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def get(self, table_id: str) -> Rematch | None:
        async with self.sessions() as s:
            return await s.get(Rematch, table_id)

    async def offer(self, table_id: str, by: str, accepted: set[str], now) -> bool:
        """Store a pending offer; False when the table has one already."""
        async with self.sessions.begin() as s:
            if await s.get(Rematch, table_id) is not None:
                return False
            s.add(
                Rematch(
                    table_id=table_id,
                    offered_by_id=by,
                    status=PENDING,
                    accepted_json=json.dumps(sorted(accepted)),
                    created_at=now,
                )
            )
        return True

    async def change(self, table_id: str, change) -> Rematch:
        """Lock the offer, apply ``change(row)`` (which may raise to refuse: nothing is
        written then), commit; the row as written.

        Raises:
            ServiceError: NOT_FOUND ``no_rematch_offer``; whatever ``change`` raises.
        """
        async with self.sessions.begin() as s:
            locked = await s.execute(
                sa.update(Rematch)
                .where(Rematch.table_id == table_id)
                .values(revision=Rematch.revision + 1)
                .execution_options(synchronize_session=False)
            )
            if locked.rowcount == 0:
                raise no_offer()
            row = await s.get(Rematch, table_id, populate_existing=True)
            assert row is not None
            change(row)
        return row


def no_offer() -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, "no_rematch_offer", "no rematch was offered")
