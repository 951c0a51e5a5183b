"""The lobby's tables in the durable store (migration ``0002_tables``).

* ``tables``: one row per table. ``status`` is ``open`` (seats being filled),
  ``starting`` (the game is being created; seats frozen), ``running``,
  ``finished`` or ``aborted``. ``owner_id`` is the creating account.
  ``seed`` is the creator's fixed seed (decimal text: seeds are unsigned
  64-bit), tables of bots only. ``open_seats`` counts the empty seats (the
  "has an open seat" filter). ``revision`` goes up with every write: every
  change starts by bumping it, which takes the row's write lock (PostgreSQL)
  or the database's (SQLite), so concurrent changes of one table run one after
  the other and each sees the other's result.
* ``table_seats``: one row per seat. ``kind`` is ``empty``, ``player`` (an
  account playing through the API: a person or a self-playing bot account) or
  ``bot`` (a hosted policy's account, played by the platform's workers).
  ``policy`` is the hosted policy that plays the seat (bots, and a resigned
  seat that the game continues with). ``account_id`` references ``accounts``.
  ``taken_over_at``: the game version from which a bot plays the seat after
  a timeout (migration ``0005_clocks``). ``guest``: the recorded player of a
  seat of an imported game, a name and not an account (migration ``0008_guest_seats``).
* ``tables.clock_json``: the clock settings (``services/match/controls.py``
  ``ClockSettings`` JSON; NULL = no clock); ``tournament_id``: set by the
  tournament service (such tables are not casual). ``paused``: the organiser
  stopped the table's clocks (migration ``0006_paused_archived_clocks``; the rules
  service's game log is the authority, this is the copy tables are listed with).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from services.platform.db import Base, UTCDateTime

OPEN, STARTING, RUNNING, FINISHED, ABORTED = "open", "starting", "running", "finished", "aborted"
STATUSES = (OPEN, STARTING, RUNNING, FINISHED, ABORTED)
EMPTY, PLAYER, BOT = "empty", "player", "bot"


class Table(Base):
    __tablename__ = "tables"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    title: Mapped[str] = mapped_column(String(32))
    num_players: Mapped[int]
    options_json: Mapped[str] = mapped_column(Text)
    seed: Mapped[str | None] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(10))
    owner_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)
    game_id: Mapped[str | None] = mapped_column(String(64), unique=True)
    result_json: Mapped[str | None] = mapped_column(Text)
    open_seats: Mapped[int]
    revision: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    start_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    clock_json: Mapped[str | None] = mapped_column(Text)
    tournament_id: Mapped[str | None] = mapped_column(String(64))
    paused: Mapped[bool] = mapped_column(default=False, server_default=false())

    __table_args__ = (
        CheckConstraint(
            "status IN ('open', 'starting', 'running', 'finished', 'aborted')", name="status"
        ),
        CheckConstraint("open_seats >= 0 AND open_seats <= num_players", name="open_seats"),
        Index("ix_tables_created_at_id", "created_at", "id"),
        Index("ix_tables_status_created_at", "status", "created_at"),
    )


class TableSeat(Base):
    __tablename__ = "table_seats"

    table_id: Mapped[str] = mapped_column(
        ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))
    account_id: Mapped[str | None] = mapped_column(ForeignKey("accounts.id"), index=True)
    policy: Mapped[str | None] = mapped_column(String(32))
    resigned_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    taken_over_at: Mapped[int | None]
    guest: Mapped[str | None] = mapped_column(String(64))

    __table_args__ = (
        CheckConstraint("kind IN ('empty', 'player', 'bot')", name="kind"),
        CheckConstraint("(kind = 'empty') = (account_id IS NULL)", name="empty_has_no_account"),
    )
