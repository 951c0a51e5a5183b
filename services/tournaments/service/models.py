"""The tournament and rating tables (migration ``0004_tournaments``).

* ``tournaments``: one row per tournament. ``settings_json`` holds the organiser's
  settings (:class:`services.tournaments.config.TournamentConfig` as JSON); ``status`` is
  ``registration``, ``running``, ``paused`` or ``finished``; ``current_round`` is 0
  before the start. ``seed`` (decimal text) seeds every pairing draw. ``revision`` goes
  up with every change: bumping it first takes the row's write lock (PostgreSQL) or the
  database's (SQLite), so two changes of one tournament run one after the other.
* ``tournament_players``: one row per registered account. ``entered_round`` is 1 (or the
  round a late entry joined); ``withdrew_after_round`` is set when the player drops out
  (0: before round 1 was paired, then the row is deleted instead).
* ``tournament_rounds``: one row per paired round, primary key ``(tournament_id, round)``:
  a round is paired exactly once (a second pairing's insert fails on the key and rolls
  back). ``byes_json``: the account ids with a bye.
* ``tournament_tables``: one row per table of a round, primary key
  ``(tournament_id, round, number)``. ``seats_json``: account ids in seat order;
  ``lobby_table_id`` (unique) and ``game_id`` once created / started; ``status``
  ``pending`` (paired, no lobby table yet), ``created``, ``running``, ``finished`` or
  ``void`` (``void_reason``); ``result_json``: ``{"ranks", "scores", "end_reason"}``.
  ``claimed_by``/``claimed_at``: the process making the table in the lobby (a lease: a
  claim older than the director's ``claim_lease_s`` may be taken over), so two processes
  never make the same table.
* ``ratings``: one row per (title, account): ``mu``, ``sigma``, ``games``, ``is_bot``.
* ``rating_history``: one row per seat of every rated game, unique
  ``(game_id, account_id)``.
* ``rated_games``: the games already rated (primary key ``game_id``): a game is rated
  once, however often its finish is delivered.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, Float, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.platform.db import Base, UTCDateTime

REGISTRATION, RUNNING, PAUSED, FINISHED = "registration", "running", "paused", "finished"
TOURNAMENT_STATUSES = (REGISTRATION, RUNNING, PAUSED, FINISHED)
PENDING, CREATED, TABLE_RUNNING, TABLE_FINISHED, VOID = (
    "pending",
    "created",
    "running",
    "finished",
    "void",
)
TABLE_STATUSES = (PENDING, CREATED, TABLE_RUNNING, TABLE_FINISHED, VOID)
ROUND_RUNNING, ROUND_FINISHED = "running", "finished"


class Tournament(Base):
    __tablename__ = "tournaments"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    title: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(80))
    organiser_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)
    settings_json: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(12))
    current_round: Mapped[int] = mapped_column(default=0)
    seed: Mapped[str] = mapped_column(String(20))
    revision: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (
        CheckConstraint(
            "status IN ('registration', 'running', 'paused', 'finished')", name="status"
        ),
        Index("ix_tournaments_status_created_at", "status", "created_at"),
    )


class TournamentPlayer(Base):
    __tablename__ = "tournament_players"

    tournament_id: Mapped[str] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    username: Mapped[str] = mapped_column(String(30))
    is_bot: Mapped[bool] = mapped_column(default=False)
    entered_round: Mapped[int] = mapped_column(default=1)
    withdrew_after_round: Mapped[int | None]
    registered_at: Mapped[datetime] = mapped_column(UTCDateTime())


class TournamentRound(Base):
    __tablename__ = "tournament_rounds"

    tournament_id: Mapped[str] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    round: Mapped[int] = mapped_column(primary_key=True)
    status: Mapped[str] = mapped_column(String(10))
    byes_json: Mapped[str] = mapped_column(Text, default="[]")
    paired_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class TournamentTable(Base):
    __tablename__ = "tournament_tables"

    tournament_id: Mapped[str] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    round: Mapped[int] = mapped_column(primary_key=True)
    number: Mapped[int] = mapped_column(primary_key=True)
    seats_json: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(10))
    lobby_table_id: Mapped[str | None] = mapped_column(String(16), unique=True)
    game_id: Mapped[str | None] = mapped_column(String(64), index=True)
    result_json: Mapped[str | None] = mapped_column(Text)
    void_reason: Mapped[str | None] = mapped_column(String(16))
    claimed_by: Mapped[str | None] = mapped_column(String(32))
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    __table_args__ = (
        CheckConstraint(
            "status IN ('pending', 'created', 'running', 'finished', 'void')", name="status"
        ),
    )


class RatingRow(Base):
    __tablename__ = "ratings"

    title: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(default=0)
    is_bot: Mapped[bool] = mapped_column(default=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class RatingHistoryRow(Base):
    __tablename__ = "rating_history"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    title: Mapped[str] = mapped_column(String(32))
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)
    game_id: Mapped[str] = mapped_column(String(64))
    rank: Mapped[int]
    weight: Mapped[float] = mapped_column(Float)
    mu_before: Mapped[float] = mapped_column(Float)
    sigma_before: Mapped[float] = mapped_column(Float)
    mu_after: Mapped[float] = mapped_column(Float)
    sigma_after: Mapped[float] = mapped_column(Float)
    rated_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (UniqueConstraint("game_id", "account_id", name="uq_rating_history_seat"),)


class RatedGame(Base):
    __tablename__ = "rated_games"

    game_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    title: Mapped[str] = mapped_column(String(32))
    rated_at: Mapped[datetime] = mapped_column(UTCDateTime())
