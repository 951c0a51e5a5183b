"""The archive tables (migration ``0003_archive``): finished games, copied from
Redis by the archiver (:mod:`services.archive.archiver`).

* ``archived_games``: one row per finished game. ``options`` and ``result``
  are canonical JSON text exactly as the rules service stored them
  (``result`` is ``{"scores", "ranks", "end_reason"}``); ``seed`` is the
  game's seed as decimal text (seeds are unsigned 64-bit, which no signed
  BIGINT holds); times are UTC. ``owner`` is the creation record's owner
  (``table:<id>`` for lobby tables, ``""`` for imported games).
* ``archived_actions``: every applied action in order, ``(game_id, version)``
  with ``version`` 1..``num_actions``; ``action`` (canonical JSON),
  ``events`` (JSON list) and ``active`` (JSON list of the seats to act after
  it) are the stream entry's fields, unchanged.
* ``archived_seats``: one row per seat: the name shown at the table, ``kind``
  (``player``, ``bot`` or ``""`` when no table is known, e.g. an imported
  game), a bot's ``policy``, the seat's ``account_id`` (``accounts.id``;
  ``None`` when the seat was not bound to an account), and its final
  ``score`` (the title's unit) and ``rank`` (1 = winner). ``account_id``
  has no foreign key on purpose: the archive keeps a game even if an
  account row goes away.
* ``archived_games.replay`` (migration ``0006_paused_archived_clocks``): the
  creation record's ``clock``, ``clock_start_ms`` and ``resignation`` as JSON
  (NULL: none, e.g. a game archived before); ``archived_actions.at_ms``: when
  the entry was appended (Unix ms; NULL before), so timeouts replay.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from services.platform.db import Base, UTCDateTime

NAME_LENGTH = 128
"""Longest seat name kept (longer names are cut; the lobby limits them anyway)."""


class ArchivedGame(Base):
    __tablename__ = "archived_games"

    game_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    title: Mapped[str] = mapped_column(String(32))
    rules_version: Mapped[str] = mapped_column(String(64))
    num_players: Mapped[int] = mapped_column(Integer)
    options: Mapped[str] = mapped_column(Text)
    seed: Mapped[str] = mapped_column(String(20))
    owner: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime())
    archived_at: Mapped[datetime] = mapped_column(UTCDateTime())
    num_actions: Mapped[int] = mapped_column(Integer)
    result: Mapped[str] = mapped_column(Text)
    replay: Mapped[str | None] = mapped_column(Text)


Index("ix_archived_games_title_finished", ArchivedGame.title, ArchivedGame.finished_at)
Index("ix_archived_games_finished", ArchivedGame.finished_at, ArchivedGame.game_id)


class ArchivedAction(Base):
    __tablename__ = "archived_actions"

    game_id: Mapped[str] = mapped_column(
        ForeignKey("archived_games.game_id", ondelete="CASCADE"), primary_key=True
    )
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(Text)
    events: Mapped[str] = mapped_column(Text)
    active: Mapped[str] = mapped_column(String(64))
    at_ms: Mapped[int | None] = mapped_column(BigInteger)


class ArchivedSeat(Base):
    __tablename__ = "archived_seats"

    game_id: Mapped[str] = mapped_column(
        ForeignKey("archived_games.game_id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    kind: Mapped[str] = mapped_column(String(8))
    policy: Mapped[str] = mapped_column(String(32))
    account_id: Mapped[str | None] = mapped_column(String(32), index=True)
    score: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)
