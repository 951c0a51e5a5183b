"""Tournaments in the durable store (``services/tournaments/service/models.py``).

Every change of a tournament is one transaction that first bumps the tournament's
``revision`` (:meth:`TournamentStore.locked`): that takes the row's write lock on
PostgreSQL (the database's on SQLite), so registrations, results and the pairing of a
round run one after the other and each sees the others' effect. A refusal raised inside
the transaction rolls it back: nothing is written.

A round is inserted once: ``(tournament_id, round)`` is the primary key of
``tournament_rounds``, so a second pairing of the same round (two processes, or one
restarted mid-way) fails and changes nothing (:meth:`TournamentStore.insert_round`
returns ``False``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
import sqlalchemy.exc
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from services.accounts.models import Account
from services.platform.db import utcnow
from services.tournaments.config import TournamentConfig
from services.tournaments.pairing_cost import RoundPairing
from services.tournaments.service.models import (
    CREATED,
    PENDING,
    ROUND_FINISHED,
    ROUND_RUNNING,
    TABLE_FINISHED,
    TABLE_RUNNING,
    VOID,
    Tournament,
    TournamentPlayer,
    TournamentRound,
    TournamentTable,
)

OPEN_TABLE_STATUSES = (PENDING, CREATED, TABLE_RUNNING)
"""A table in one of these has no result yet."""


@dataclasses.dataclass
class PlayerRecord:
    account_id: str
    username: str
    is_bot: bool = False
    entered_round: int = 1
    withdrew_after_round: int | None = None

    @property
    def active(self) -> bool:
        return self.withdrew_after_round is None


@dataclasses.dataclass
class TableRecord:
    """One table of a round. ``seats``: account ids, first seat first; ``result``:
    ``{"ranks", "scores", "end_reason"}`` once finished."""

    round: int
    number: int
    seats: list[str]
    status: str = PENDING
    lobby_table_id: str = ""
    game_id: str = ""
    result: dict[str, Any] | None = None
    void_reason: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def done(self) -> bool:
        return self.status in (TABLE_FINISHED, VOID)


@dataclasses.dataclass
class RoundRecord:
    round: int
    status: str
    byes: list[str]
    tables: list[TableRecord]


@dataclasses.dataclass
class TournamentRecord:
    tournament_id: str
    config: TournamentConfig
    organiser_id: str
    status: str
    seed: int
    current_round: int = 0
    organiser: str = ""
    created_at: datetime = dataclasses.field(default_factory=utcnow)
    players: list[PlayerRecord] = dataclasses.field(default_factory=list)
    rounds: list[RoundRecord] = dataclasses.field(default_factory=list)

    def player(self, account_id: str) -> PlayerRecord | None:
        return next((p for p in self.players if p.account_id == account_id), None)

    def names(self) -> dict[str, str]:
        return {p.account_id: p.username for p in self.players}

    def round(self, number: int) -> RoundRecord | None:
        return next((r for r in self.rounds if r.round == number), None)


class TournamentNotFound(KeyError):
    """No tournament of that id."""


def _table(row: TournamentTable) -> TableRecord:
    return TableRecord(
        round=row.round,
        number=row.number,
        seats=json.loads(row.seats_json),
        status=row.status,
        lobby_table_id=row.lobby_table_id or "",
        game_id=row.game_id or "",
        result=json.loads(row.result_json) if row.result_json else None,
        void_reason=row.void_reason or "",
        started_at=row.started_at,
        finished_at=row.finished_at,
    )


class TournamentStore:
    """Tournaments, their players, rounds and tables."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    # ----------------------------------------------------------------- reading

    async def create(self, t: TournamentRecord) -> None:
        async with self.sessions.begin() as s:
            s.add(
                Tournament(
                    id=t.tournament_id,
                    title=t.config.title,
                    name=t.config.name,
                    organiser_id=t.organiser_id,
                    settings_json=t.config.to_json(),
                    status=t.status,
                    current_round=0,
                    seed=str(t.seed),
                    revision=0,
                    created_at=t.created_at,
                )
            )

    async def _load(self, s: AsyncSession, tournament_id: str, full: bool = True):
        found = (
            await s.execute(
                sa.select(Tournament, Account.username)
                .join(Account, Account.id == Tournament.organiser_id)
                .where(Tournament.id == tournament_id)
                .execution_options(populate_existing=True)
            )
        ).first()
        if found is None:
            raise TournamentNotFound(tournament_id)
        row, organiser = found
        record = TournamentRecord(
            tournament_id=row.id,
            config=TournamentConfig.from_json(row.settings_json),
            organiser_id=row.organiser_id,
            organiser=organiser or "",
            status=row.status,
            seed=int(row.seed),
            current_round=row.current_round,
            created_at=row.created_at,
        )
        if not full:
            return record
        players = await s.scalars(
            sa.select(TournamentPlayer)
            .where(TournamentPlayer.tournament_id == tournament_id)
            .order_by(TournamentPlayer.registered_at, TournamentPlayer.username)
        )
        record.players = [
            PlayerRecord(
                p.account_id, p.username, p.is_bot, p.entered_round, p.withdrew_after_round
            )
            for p in players
        ]
        rounds = await s.scalars(
            sa.select(TournamentRound)
            .where(TournamentRound.tournament_id == tournament_id)
            .order_by(TournamentRound.round)
        )
        by_round = {
            r.round: RoundRecord(r.round, r.status, json.loads(r.byes_json), []) for r in rounds
        }
        tables = await s.scalars(
            sa.select(TournamentTable)
            .where(TournamentTable.tournament_id == tournament_id)
            .order_by(TournamentTable.round, TournamentTable.number)
        )
        for t in tables:
            if t.round in by_round:  # a round paired between the two reads is left out
                by_round[t.round].tables.append(_table(t))
        record.rounds = [by_round[k] for k in sorted(by_round)]
        return record

    async def get(self, tournament_id: str, full: bool = True) -> TournamentRecord:
        """The whole tournament (``full``), or its settings and status only. Raises
        :class:`TournamentNotFound`."""
        async with self.sessions() as s:
            return await self._load(s, tournament_id, full)

    async def get_table(
        self, tournament_id: str, round_number: int, number: int
    ) -> TableRecord | None:
        async with self.sessions() as s:
            row = await s.get(TournamentTable, (tournament_id, round_number, number))
            return None if row is None else _table(row)

    async def get_player(self, tournament_id: str, account_id: str) -> PlayerRecord | None:
        async with self.sessions() as s:
            return await self._player(s, tournament_id, account_id)

    @staticmethod
    async def _player(s: AsyncSession, tournament_id: str, account_id: str) -> PlayerRecord | None:
        p = await s.get(TournamentPlayer, (tournament_id, account_id), populate_existing=True)
        if p is None:
            return None
        return PlayerRecord(
            p.account_id, p.username, p.is_bot, p.entered_round, p.withdrew_after_round
        )

    async def usernames(self, tournament_id: str, account_ids: Sequence[str]) -> dict[str, str]:
        async with self.sessions() as s:
            rows = await s.execute(
                sa.select(TournamentPlayer.account_id, TournamentPlayer.username).where(
                    TournamentPlayer.tournament_id == tournament_id,
                    TournamentPlayer.account_id.in_(list(account_ids)),
                )
            )
            return dict(rows.all())

    async def list(self, statuses: Sequence[str], limit: int) -> list[TournamentRecord]:
        """Newest first, settings and status only."""
        async with self.sessions() as s:
            q = sa.select(Tournament.id).order_by(Tournament.created_at.desc(), Tournament.id)
            if statuses:
                q = q.where(Tournament.status.in_(list(statuses)))
            ids = (await s.scalars(q.limit(limit))).all()
            return [await self._load(s, i, full=False) for i in ids]

    async def active_ids(self) -> list[str]:
        """Tournaments that are running or paused (the reconciler's work)."""
        async with self.sessions() as s:
            q = sa.select(Tournament.id).where(Tournament.status.in_(["running", "paused"]))
            return list((await s.scalars(q)).all())

    async def table_by_game(self, game_id: str) -> tuple[str, TableRecord] | None:
        async with self.sessions() as s:
            row = await s.scalar(
                sa.select(TournamentTable).where(TournamentTable.game_id == game_id)
            )
            return (row.tournament_id, _table(row)) if row else None

    async def table_by_lobby_id(self, lobby_table_id: str) -> tuple[str, TableRecord] | None:
        async with self.sessions() as s:
            row = await s.scalar(
                sa.select(TournamentTable).where(TournamentTable.lobby_table_id == lobby_table_id)
            )
            return (row.tournament_id, _table(row)) if row else None

    async def is_rated(self, tournament_id: str) -> bool:
        async with self.sessions() as s:
            text = await s.scalar(
                sa.select(Tournament.settings_json).where(Tournament.id == tournament_id)
            )
            return bool(text) and TournamentConfig.from_json(text).rated

    async def open_tables(self, tournament_id: str, round_number: int) -> int:
        async with self.sessions() as s:
            return await self._open_tables(s, tournament_id, round_number)

    async def _open_tables(self, s: AsyncSession, tournament_id: str, round_number: int) -> int:
        return await s.scalar(
            sa.select(sa.func.count())
            .select_from(TournamentTable)
            .where(
                TournamentTable.tournament_id == tournament_id,
                TournamentTable.round == round_number,
                TournamentTable.status.in_(OPEN_TABLE_STATUSES),
            )
        )

    # ----------------------------------------------------------------- changing

    @contextlib.asynccontextmanager
    async def locked(
        self, tournament_id: str, full: bool | None = True
    ) -> AsyncIterator[tuple[AsyncSession, TournamentRecord | None]]:
        """One transaction holding the tournament's lock, with the tournament as it is
        now (``full``: all of it; False: settings and status; None: not read). Raises
        :class:`TournamentNotFound`; an exception inside rolls back."""
        async with self.sessions.begin() as s:
            bumped = await s.execute(
                sa.update(Tournament)
                .where(Tournament.id == tournament_id)
                .values(revision=Tournament.revision + 1)
            )
            if bumped.rowcount == 0:
                raise TournamentNotFound(tournament_id)
            yield s, None if full is None else await self._load(s, tournament_id, full=full)

    @staticmethod
    async def set_status(s: AsyncSession, tournament_id: str, status: str) -> None:
        await s.execute(
            sa.update(Tournament).where(Tournament.id == tournament_id).values(status=status)
        )

    @staticmethod
    async def add_player(s: AsyncSession, tournament_id: str, p: PlayerRecord) -> None:
        s.add(
            TournamentPlayer(
                tournament_id=tournament_id,
                account_id=p.account_id,
                username=p.username,
                is_bot=p.is_bot,
                entered_round=p.entered_round,
                withdrew_after_round=None,
                registered_at=utcnow(),
            )
        )

    @staticmethod
    async def remove_player(s: AsyncSession, tournament_id: str, account_id: str) -> None:
        await s.execute(
            sa.delete(TournamentPlayer).where(
                TournamentPlayer.tournament_id == tournament_id,
                TournamentPlayer.account_id == account_id,
            )
        )

    @staticmethod
    async def withdraw_player(
        s: AsyncSession, tournament_id: str, account_id: str, after_round: int
    ) -> None:
        await s.execute(
            sa.update(TournamentPlayer)
            .where(
                TournamentPlayer.tournament_id == tournament_id,
                TournamentPlayer.account_id == account_id,
            )
            .values(withdrew_after_round=after_round)
        )

    @staticmethod
    async def insert_round(s: AsyncSession, tournament_id: str, pairing: RoundPairing) -> None:
        """Insert round ``pairing.round`` with its tables and make it the current round.
        A round inserted before fails on the primary key (IntegrityError at flush)."""
        now = utcnow()
        s.add(
            TournamentRound(
                tournament_id=tournament_id,
                round=pairing.round,
                status=ROUND_RUNNING,
                byes_json=json.dumps(list(pairing.byes)),
                paired_at=now,
            )
        )
        await s.flush()
        s.add_all(
            TournamentTable(
                tournament_id=tournament_id,
                round=pairing.round,
                number=t.number,
                seats_json=json.dumps(list(t.seats)),
                status=PENDING,
            )
            for t in pairing.tables
        )
        await s.execute(
            sa.update(Tournament)
            .where(Tournament.id == tournament_id)
            .values(current_round=pairing.round)
        )
        await s.flush()

    async def update_table(
        self, tournament_id: str, round_number: int, number: int, only_if: Sequence[str], **values
    ) -> bool:
        """Set ``values`` on a table whose status is in ``only_if``; whether it was."""
        async with self.sessions.begin() as s:
            done = await s.execute(
                sa.update(TournamentTable)
                .where(
                    TournamentTable.tournament_id == tournament_id,
                    TournamentTable.round == round_number,
                    TournamentTable.number == number,
                    TournamentTable.status.in_(list(only_if)),
                )
                .values(**values)
            )
            return done.rowcount == 1

    async def claim_table(
        self,
        tournament_id: str,
        round_number: int,
        number: int,
        token: str,
        now: datetime,
        lease_s: float,
    ) -> bool:
        """Claim a table not started yet for the process ``token``: it is unclaimed or
        its claim is older than ``lease_s``. Whether it was."""
        stale = now - timedelta(seconds=lease_s)
        async with self.sessions.begin() as s:
            done = await s.execute(
                sa.update(TournamentTable)
                .where(
                    TournamentTable.tournament_id == tournament_id,
                    TournamentTable.round == round_number,
                    TournamentTable.number == number,
                    TournamentTable.status.in_([PENDING, CREATED]),
                    sa.or_(
                        TournamentTable.claimed_by.is_(None),
                        TournamentTable.claimed_at < stale,
                    ),
                )
                .values(claimed_by=token, claimed_at=now)
            )
            return done.rowcount == 1

    async def start_simulated(self, tournament_id: str, round_number: int, now: datetime) -> None:
        """Every table of the round not started yet, started at once with made-up lobby
        and game ids (:class:`~.tables.SimulatedTables`: no games are played)."""
        async with self.sessions.begin() as s:
            rows = await s.scalars(
                sa.select(TournamentTable).where(
                    TournamentTable.tournament_id == tournament_id,
                    TournamentTable.round == round_number,
                    TournamentTable.status.in_([PENDING, CREATED]),
                )
            )
            for row in rows:
                fake = f"s{uuid.uuid4().hex[:15]}"
                row.lobby_table_id = row.lobby_table_id or fake
                row.game_id = f"sim-{row.lobby_table_id}"
                row.status, row.started_at = TABLE_RUNNING, now

    async def release_table(
        self, tournament_id: str, round_number: int, number: int, token: str
    ) -> None:
        """Give up ``token``'s claim (the lobby could not be reached: try again later)."""
        async with self.sessions.begin() as s:
            await s.execute(
                sa.update(TournamentTable)
                .where(
                    TournamentTable.tournament_id == tournament_id,
                    TournamentTable.round == round_number,
                    TournamentTable.number == number,
                    TournamentTable.claimed_by == token,
                )
                .values(claimed_by=None, claimed_at=None)
            )

    async def close_table(
        self,
        tournament_id: str,
        round_number: int,
        number: int,
        result: dict[str, Any] | None,
        void_reason: str = "",
    ) -> tuple[bool, int]:
        """Record a table's result (or void it) if it has none yet, under the
        tournament's lock. Returns (whether this call closed it, tables of the round still
        without a result)."""
        async with self.locked(tournament_id, full=None) as (s, _record):
            values: dict[str, Any] = {"finished_at": utcnow()}
            if result is not None:
                values.update(status=TABLE_FINISHED, result_json=json.dumps(result))
            else:
                values.update(status=VOID, void_reason=void_reason)
            done = await s.execute(
                sa.update(TournamentTable)
                .where(
                    TournamentTable.tournament_id == tournament_id,
                    TournamentTable.round == round_number,
                    TournamentTable.number == number,
                    TournamentTable.status.in_(OPEN_TABLE_STATUSES),
                )
                .values(**values)
            )
            return done.rowcount == 1, await self._open_tables(s, tournament_id, round_number)

    @staticmethod
    async def finish_round(s: AsyncSession, tournament_id: str, round_number: int) -> None:
        await s.execute(
            sa.update(TournamentRound)
            .where(
                TournamentRound.tournament_id == tournament_id,
                TournamentRound.round == round_number,
            )
            .values(status=ROUND_FINISHED, finished_at=utcnow())
        )


def is_duplicate(exc: BaseException) -> bool:
    """Whether ``exc`` is the primary-key conflict of a round paired before."""
    return isinstance(exc, sqlalchemy.exc.IntegrityError)
