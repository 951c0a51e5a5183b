"""Reading and writing the archive tables (:mod:`services.archive.models`).

:class:`ArchiveStore` is the only code that touches them: the archiver saves
games, the rules services' fallback (:mod:`services.archive.fallback`) loads
one, ``ListGames`` pages through an account's games and
``roundhouse archive verify`` reads them in batches. Every method raises the
driver's error when the database is down (:func:`services.platform.db.is_unavailable`
tells an outage from a bug).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
import sqlalchemy.exc
from sqlalchemy.ext.asyncio import AsyncEngine

from services.archive.models import NAME_LENGTH, ArchivedAction, ArchivedGame, ArchivedSeat
from services.platform.db import session_factory, utcnow
from services.platform.gamelog import LogEntry


@dataclasses.dataclass(frozen=True, slots=True)
class SeatInfo:
    """Who sat at one seat: ``kind`` is ``player``, ``bot`` or ``""``;
    ``account_id`` is ``None`` for a seat not bound to an account."""

    seat: int
    name: str = ""
    kind: str = ""
    policy: str = ""
    account_id: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class GameRecord:
    """An archived game without its actions.

    Attributes:
        options, result: decoded JSON (``result`` is ``{"scores", "ranks", "end_reason"}``).
        seed: the game's seed.
        seats: one :class:`SeatInfo` per seat, in seat order.
        scores, ranks: per seat, from ``result``.
        replay: what a replay needs besides the seed and options: the creation
            record's ``clock``, ``clock_start_ms`` and ``resignation`` (those it has).
    """

    game_id: str
    title: str
    rules_version: str
    num_players: int
    options: dict[str, Any]
    seed: int
    owner: str
    created_at: datetime
    finished_at: datetime
    num_actions: int
    result: dict[str, Any]
    seats: tuple[SeatInfo, ...] = ()
    replay: dict[str, Any] = dataclasses.field(default_factory=dict)

    def meta(self) -> dict[str, Any]:
        """The creation record as a replay reads it
        (:func:`services.match.resignation.replay_state`)."""
        return {
            "num_players": self.num_players,
            "seed": self.seed,
            "options": self.options,
            **self.replay,
        }


RawEntry = tuple[int, int, str, str, str, int | None]
"""An archived action as stored: (version, seat, action JSON, events JSON,
active seats JSON, at_ms or None)."""


@dataclasses.dataclass(frozen=True, slots=True)
class StoredGame:
    """An archived game with its actions as the stream entries they were."""

    record: GameRecord
    entries: list[LogEntry]


class ArchiveStore:
    """The archive on ``engine`` (PostgreSQL or SQLite)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.sessions = session_factory(engine)

    # ------------------------------------------------------------------ writing

    async def has(self, game_id: str) -> bool:
        """Whether ``game_id`` is archived."""
        async with self.engine.connect() as conn:
            found = await conn.execute(
                sa.select(ArchivedGame.game_id).where(ArchivedGame.game_id == game_id)
            )
            return found.first() is not None

    async def save(self, record: GameRecord, entries: Sequence[LogEntry]) -> bool:
        """Store a finished game, its seats and every entry, in one transaction.

        Returns:
            True if stored; False if ``record.game_id`` was archived already
            (nothing changes: a second delivery is harmless).

        Raises:
            ValueError: ``entries`` are not versions 1..n of a finished game.
            sqlalchemy.exc.DBAPIError: the database failed (nothing was written).
        """
        if [e.version for e in entries] != list(range(1, len(entries) + 1)):
            raise ValueError(f"game {record.game_id!r}: entries are not versions 1..n")
        if not entries or not entries[-1].finished:
            raise ValueError(f"game {record.game_id!r} is not finished")
        game_row = {
            "game_id": record.game_id,
            "title": record.title,
            "rules_version": record.rules_version,
            "num_players": record.num_players,
            "options": _json(record.options),
            "seed": str(record.seed),
            "owner": record.owner[:128],
            "created_at": record.created_at,
            "finished_at": record.finished_at,
            "archived_at": utcnow(),
            "num_actions": len(entries),
            "result": _json(record.result),
            "replay": _json(record.replay) if record.replay else None,
        }
        scores, ranks = record.result["scores"], record.result["ranks"]
        seat_rows = [
            {
                "game_id": record.game_id,
                "seat": s.seat,
                "name": s.name[:NAME_LENGTH],
                "kind": s.kind,
                "policy": s.policy,
                "account_id": s.account_id or None,
                "score": int(scores[s.seat]),
                "rank": int(ranks[s.seat]),
            }
            for s in record.seats
        ]
        action_rows = [
            (
                record.game_id,
                e.version,
                e.seat,
                e.action,
                e.events,
                json.dumps(list(e.active)),
                e.at_ms or None,
            )
            for e in entries
        ]
        try:
            async with self.engine.begin() as conn:
                await conn.execute(sa.insert(ArchivedGame), [game_row])
                if seat_rows:
                    await conn.execute(sa.insert(ArchivedSeat), seat_rows)
                await _insert_actions(conn, action_rows)
        except sqlalchemy.exc.IntegrityError:
            if await self.has(record.game_id):  # a concurrent twin stored it first
                return False
            raise
        return True

    # ------------------------------------------------------------------ reading

    async def load(self, game_id: str) -> StoredGame | None:
        """The archived game with its entries, or None."""
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(sa.select(ArchivedGame).where(ArchivedGame.game_id == game_id))
            ).first()
            if row is None:
                return None
            seats = await self._seats(conn, [game_id])
            actions = await conn.execute(
                sa.select(
                    ArchivedAction.version,
                    ArchivedAction.seat,
                    ArchivedAction.action,
                    ArchivedAction.events,
                    ArchivedAction.active,
                    ArchivedAction.at_ms,
                )
                .where(ArchivedAction.game_id == game_id)
                .order_by(ArchivedAction.version)
            )
            record = _record(row, seats.get(game_id, ()))
            return StoredGame(record, _entries(record, actions.all()))

    async def batches(
        self, title: str | None = None, limit: int | None = None, batch: int = 200
    ) -> AsyncIterator[list[tuple[GameRecord, list[RawEntry]]]]:
        """Every archived game (of ``title``), in game id order, ``batch`` at a
        time with their entries as raw rows (two queries per batch; the fast
        path of ``roundhouse archive verify``), at most ``limit``."""
        after, left = "", limit
        while left is None or left > 0:
            size = batch if left is None else min(batch, left)
            async with self.engine.connect() as conn:
                query = sa.select(ArchivedGame).where(ArchivedGame.game_id > after)
                if title:
                    query = query.where(ArchivedGame.title == title)
                rows = (await conn.execute(query.order_by(ArchivedGame.game_id).limit(size))).all()
                if not rows:
                    return
                ids = [r.game_id for r in rows]
                actions = await conn.execute(
                    sa.select(
                        ArchivedAction.game_id,
                        ArchivedAction.version,
                        ArchivedAction.seat,
                        ArchivedAction.action,
                        ArchivedAction.events,
                        ArchivedAction.active,
                        ArchivedAction.at_ms,
                    )
                    .where(ArchivedAction.game_id.in_(ids))
                    .order_by(ArchivedAction.game_id, ArchivedAction.version)
                )
                by_game: dict[str, list] = {i: [] for i in ids}
                for a in actions:
                    by_game[a[0]].append(a[1:])
            yield [(_record(r, ()), by_game[r.game_id]) for r in rows]
            after = ids[-1]
            if left is not None:
                left -= len(rows)

    async def count(self, title: str | None = None) -> int:
        """How many games are archived (of ``title``)."""
        query = sa.select(sa.func.count()).select_from(ArchivedGame)
        if title:
            query = query.where(ArchivedGame.title == title)
        async with self.engine.connect() as conn:
            return (await conn.execute(query)).scalar_one()

    async def list_games(
        self,
        account_id: str | None = None,
        title: str | None = None,
        limit: int = 20,
        before: tuple[datetime, str] | None = None,
    ) -> list[GameRecord]:
        """Archived games, newest first (by ``finished_at``, then game id), at
        most ``limit``: those with a seat of ``account_id`` (when given), of
        ``title`` (when given), finished before ``before`` = (finished_at, game_id)
        (keyset paging)."""
        query = sa.select(ArchivedGame)
        if account_id is not None:
            query = query.where(
                ArchivedGame.game_id.in_(
                    sa.select(ArchivedSeat.game_id).where(ArchivedSeat.account_id == account_id)
                )
            )
        if title:
            query = query.where(ArchivedGame.title == title)
        if before is not None:
            query = query.where(
                sa.or_(
                    ArchivedGame.finished_at < before[0],
                    sa.and_(
                        ArchivedGame.finished_at == before[0], ArchivedGame.game_id < before[1]
                    ),
                )
            )
        query = query.order_by(ArchivedGame.finished_at.desc(), ArchivedGame.game_id.desc())
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query.limit(limit))).all()
            seats = await self._seats(conn, [r.game_id for r in rows])
        return [_record(r, seats.get(r.game_id, ())) for r in rows]

    async def account_by_username(self, username: str) -> str | None:
        """The id of the account named ``username`` (any case), or None."""
        from services.accounts.models import Account

        async with self.engine.connect() as conn:
            found = await conn.execute(
                sa.select(Account.id).where(sa.func.lower(Account.username) == username.lower())
            )
            return found.scalar_one_or_none()

    async def account_exists(self, account_id: str) -> bool:
        from services.accounts.models import Account

        async with self.engine.connect() as conn:
            found = await conn.execute(sa.select(Account.id).where(Account.id == account_id))
            return found.first() is not None

    @staticmethod
    async def _seats(conn, game_ids: list[str]) -> dict[str, tuple[SeatInfo, ...]]:
        if not game_ids:
            return {}
        rows = await conn.execute(
            sa.select(ArchivedSeat)
            .where(ArchivedSeat.game_id.in_(game_ids))
            .order_by(ArchivedSeat.game_id, ArchivedSeat.seat)
        )
        out: dict[str, list[SeatInfo]] = {}
        for s in rows:
            out.setdefault(s.game_id, []).append(
                SeatInfo(s.seat, s.name, s.kind, s.policy, s.account_id)
            )
        return {k: tuple(v) for k, v in out.items()}


_ACTION_COLUMNS = ("game_id", "version", "seat", "action", "events", "active", "at_ms")


async def _insert_actions(conn, rows: list[tuple]) -> None:
    """Insert action rows in ``conn``'s transaction: on PostgreSQL with the
    driver's COPY (asyncpg ``copy_records_to_table``, a third of the time of a
    multi-row INSERT for a 1,000-action game), elsewhere with an executemany
    INSERT. A refused row raises (asyncpg's or SQLAlchemy's integrity error)
    and the transaction rolls back."""
    if conn.dialect.name == "postgresql":
        raw = await conn.get_raw_connection()
        await raw.driver_connection.copy_records_to_table(
            ArchivedAction.__tablename__, records=rows, columns=_ACTION_COLUMNS
        )
    else:
        await conn.execute(
            sa.insert(ArchivedAction), [dict(zip(_ACTION_COLUMNS, r, strict=True)) for r in rows]
        )


def _json(obj: Any) -> str:
    from services.kernel.engine import canonical_json

    return canonical_json(obj)


def _record(row, seats: tuple[SeatInfo, ...]) -> GameRecord:
    return GameRecord(
        game_id=row.game_id,
        title=row.title,
        rules_version=row.rules_version,
        num_players=row.num_players,
        options=json.loads(row.options),
        seed=int(row.seed),
        owner=row.owner,
        created_at=row.created_at,
        finished_at=row.finished_at,
        num_actions=row.num_actions,
        result=json.loads(row.result),
        seats=seats,
        replay=json.loads(row.replay) if row.replay else {},
    )


def _entries(record: GameRecord, rows) -> list[LogEntry]:
    """Archived actions (version, seat, action, events, active, at_ms) as stream
    entries; the last one carries the result, as in the stream."""
    last = record.num_actions
    result = _json(record.result)
    return [
        LogEntry(
            version=v,
            seat=seat,
            action=action,
            events=events,
            active=tuple(json.loads(active)),
            finished=v == last,
            result=result if v == last else "",
            at_ms=at_ms or 0,
        )
        for v, seat, action, events, active, at_ms in rows
    ]
