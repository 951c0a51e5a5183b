"""Tables in the durable store (``services/lobby/models.py``): the truth of a table.

Every change is one transaction (:meth:`TableStore.change`): it first bumps
the table's ``revision``, which takes the row's write lock on PostgreSQL (and
the database's on SQLite), then reads the table, lets the caller's function
check and change it (raising to refuse: the transaction is rolled back,
nothing is written), and writes back what changed. So two joins of one seat,
or two starts of one table, run one after the other; the second sees the
first's result and is refused.

Database outages surface as SQLAlchemy / driver errors, which the error
interceptor answers with UNAVAILABLE ``database_unavailable``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from services.accounts.models import BOT as BOT_ACCOUNT
from services.accounts.models import SYSTEM, Account
from services.lobby.models import BOT, EMPTY, OPEN, PLAYER, Table, TableSeat
from services.lobby.table_cache import TableCache
from services.platform.db import utcnow

MAX_PAGE_SIZE = 200
DEFAULT_PAGE_SIZE = 50


@dataclasses.dataclass
class SeatRecord:
    """One seat.

    Attributes:
        kind: ``"empty"``, ``"player"`` or ``"bot"`` (a hosted policy's seat).
        account_id, username: the seat's account (``""`` while empty).
        bot_account: the account is a bot or system bot account.
        policy: the hosted policy playing the seat (bots; a resigned seat the
            game continues with).
        resigned: the seat resigned.
        guest: the recorded player's name of an imported game's seat (not an
            account; ``""`` = none).
    """

    kind: str = EMPTY
    account_id: str = ""
    username: str = ""
    bot_account: bool = False
    policy: str = ""
    resigned: bool = False
    taken_over_at: int | None = None
    guest: str = ""


@dataclasses.dataclass
class TableRecord:
    """A table as the lobby works with it.

    Attributes:
        table_id, title, num_players: what was asked for.
        options_json: the title's options as JSON text (``""`` = defaults).
        seed: a seed fixed by the creator (tables of bots only), else None.
        seats: one :class:`SeatRecord` per seat.
        status: ``open``, ``starting``, ``running``, ``finished`` or ``aborted``.
        owner_id, owner: the creating account (id, username).
        game_id: the game on the title's rules service, once started.
        result: ``{"scores", "ranks", "end_reason"}`` once finished.
        created_at: when it was created (UTC).
        start_attempt_at: when a start began (status ``starting``).
        clock: the clock settings as JSON (``ClockSettings.to_json()``), or None.
        tournament_id: the tournament of the table ("" = a casual table).
        paused: the organiser paused its clocks (``PauseTable``).
    """

    table_id: str
    title: str
    num_players: int
    options_json: str
    seed: int | None
    seats: list[SeatRecord]
    owner_id: str
    owner: str = ""
    status: str = OPEN
    game_id: str = ""
    result: dict[str, Any] | None = None
    created_at: datetime = dataclasses.field(default_factory=utcnow)
    start_attempt_at: datetime | None = None
    clock: dict[str, Any] | None = None
    tournament_id: str = ""
    paused: bool = False

    def bot_seats(self) -> dict[int, str]:
        """Seat index -> hosted policy, for the seats the platform plays."""
        return {i: s.policy for i, s in enumerate(self.seats) if s.policy}

    def has_players(self) -> bool:
        """Whether an account playing through the API holds a seat (a person,
        or a bot account that plays itself)."""
        return any(s.kind == PLAYER or (s.kind == BOT and not s.policy) for s in self.seats)


class TableNotFound(KeyError):
    """No table of that id."""


class BadPageToken(ValueError):
    """A page token this store did not issue."""


@dataclasses.dataclass(frozen=True)
class TableFilter:
    """What ``ListTables`` asks for (every field optional)."""

    title: str = ""
    statuses: Sequence[str] = ()
    open_seat: bool = False
    player: str = ""


def _encode_token(table: TableRecord) -> str:
    raw = json.dumps([table.created_at.isoformat(), table.table_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_token(token: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        created, table_id = json.loads(raw)
        return datetime.fromisoformat(created), str(table_id)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise BadPageToken(token) from exc


def _page_query(where: TableFilter, page_size: int, page_token: str) -> sa.Select:
    """The ids (and creation times) of one ``ListTables`` page and one more row.

    Raises:
        BadPageToken: a token this store did not issue.
    """
    query = sa.select(Table.id, Table.created_at)
    if where.title:
        query = query.where(Table.title == where.title)
    if where.statuses:
        query = query.where(Table.status.in_(list(where.statuses)))
    if where.open_seat:
        query = query.where(Table.open_seats > 0, Table.status == OPEN)
    if where.player:
        seated = (
            sa.select(TableSeat.table_id)
            .join(Account, TableSeat.account_id == Account.id)
            .where(sa.func.lower(Account.username) == where.player.lower())
        )
        query = query.where(Table.id.in_(seated))
    if page_token:
        created, last_id = _decode_token(page_token)
        query = query.where(
            sa.or_(
                Table.created_at < created,
                sa.and_(Table.created_at == created, Table.id < last_id),
            )
        )
    return query.order_by(Table.created_at.desc(), Table.id.desc()).limit(page_size + 1)


class TableStore:
    """Tables and seats.

    Args:
        sessions: the session factory of the store (``services.platform.db``).
        cache: the records read, kept (the lobby's: :mod:`services.lobby.table_cache`);
            every change and creation here drops its table once committed. None: every
            read is a query.
        announce: awaited with a table's id after each change or creation committed (the
            lobby: :func:`~services.lobby.table_cache.publish_change`, so that the other
            lobbies drop it too).
    """

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        cache: TableCache | None = None,
        announce: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.sessions = sessions
        self.cache = cache
        self.announce = announce

    async def _changed(self, table_id: str) -> None:
        """After a commit that touched ``table_id``: drop it here, tell the others."""
        if self.cache is not None:
            self.cache.forget(table_id)
        if self.announce is not None:
            await self.announce(table_id)

    async def create(self, table: TableRecord) -> None:
        """Store a new table (its seats empty or as given)."""
        async with self.sessions.begin() as session:
            session.add(
                Table(
                    id=table.table_id,
                    title=table.title,
                    num_players=table.num_players,
                    options_json=table.options_json,
                    seed=None if table.seed is None else str(table.seed),
                    status=table.status,
                    owner_id=table.owner_id,
                    game_id=table.game_id or None,
                    result_json=None if table.result is None else json.dumps(table.result),
                    open_seats=sum(1 for s in table.seats if s.kind == EMPTY),
                    revision=0,
                    created_at=table.created_at,
                    start_attempt_at=None,
                    clock_json=None if table.clock is None else json.dumps(table.clock),
                    tournament_id=table.tournament_id or None,
                )
            )
            await session.flush()
            session.add_all(
                TableSeat(
                    table_id=table.table_id,
                    seat=i,
                    kind=s.kind,
                    account_id=s.account_id or None,
                    policy=s.policy or None,
                    resigned_at=None,
                    guest=s.guest or None,
                )
                for i, s in enumerate(table.seats)
            )
        await self._changed(table.table_id)

    async def get(self, table_id: str) -> TableRecord:
        """The table (from the cache when it holds it). Raises :class:`TableNotFound`."""
        if self.cache is not None:
            found = self.cache.get(table_id)
            if found is not None:
                return found
        tables = await self._read([table_id])
        if not tables:
            raise TableNotFound(table_id)
        return tables[0]

    async def _read(self, ids: list[str]) -> list[TableRecord]:
        """The tables ``ids`` that exist, in that order, read from the store (and kept)."""
        generation = self.cache.generation() if self.cache is not None else 0
        async with self.sessions() as session:
            tables = await self._load_many(session, ids)
        if self.cache is not None:
            for table in tables:
                self.cache.put(table, generation)
        return tables

    async def by_game(self, game_id: str) -> TableRecord | None:
        """The table playing ``game_id``, or None (e.g. an imported game)."""
        async with self.sessions() as session:
            table_id = await session.scalar(sa.select(Table.id).where(Table.game_id == game_id))
            return None if table_id is None else await self._load(session, table_id)

    async def change(
        self,
        table_id: str,
        change: Callable[[TableRecord], None],
        also: Callable[[AsyncSession], Awaitable[None]] | None = None,
    ) -> TableRecord:
        """Lock the table, apply ``change`` (which may raise to refuse: nothing
        is written then), write back; the changed table. ``also`` runs in the same
        transaction after ``change`` (another table's row that changes with this one, e.g. a
        challenge accepted: :mod:`services.lobby.challenges`); it may raise to refuse too.

        Raises:
            TableNotFound: unknown table; whatever ``change`` raises.
        """
        async with self.sessions.begin() as session:
            locked = await session.execute(
                sa.update(Table)
                .where(Table.id == table_id)
                .values(revision=Table.revision + 1)
                .execution_options(synchronize_session=False)
            )
            if locked.rowcount == 0:
                raise TableNotFound(table_id)
            before = await self._load(session, table_id)
            after = dataclasses.replace(
                before, seats=[dataclasses.replace(s) for s in before.seats]
            )
            change(after)
            if also is not None:
                await also(session)
            await self._write(session, before, after)
        await self._changed(table_id)
        return after

    async def list(
        self, where: TableFilter, page_size: int, page_token: str = ""
    ) -> tuple[list[TableRecord], str]:
        """One page of tables, newest first, and the token of the next page
        (``""``: the last page).

        Raises:
            BadPageToken: a token this store did not issue.
        """
        asked = (where, page_size, page_token)
        known = self.cache.page(asked) if self.cache is not None else None
        if known is None:
            generation = self.cache.generation() if self.cache is not None else 0
            query = _page_query(where, page_size, page_token)
            async with self.sessions() as session:
                ids = [row[0] for row in (await session.execute(query)).all()]
            known = ids[:page_size], len(ids) > page_size
            if self.cache is not None:
                self.cache.put_page(asked, *known, generation)
        page, more = known
        cached = {t: self.cache.get(t) for t in page} if self.cache is not None else {}
        missing = [t for t in page if cached.get(t) is None]
        read = {t.table_id: t for t in await self._read(missing)} if missing else {}
        tables = [x for t in page if (x := cached.get(t) or read.get(t)) is not None]
        return tables, _encode_token(tables[-1]) if more else ""

    # ----------------------------------------------------------------- rows

    async def _load(self, session: AsyncSession, table_id: str) -> TableRecord:
        tables = await self._load_many(session, [table_id])
        if not tables:
            raise TableNotFound(table_id)
        return tables[0]

    async def _load_many(self, session: AsyncSession, ids: list[str]) -> list[TableRecord]:
        """The tables ``ids`` that exist, in that order (two queries in all)."""
        if not ids:
            return []
        owner = sa.orm.aliased(Account)
        rows = (
            await session.execute(
                sa.select(Table, owner.username)
                .join(owner, Table.owner_id == owner.id)
                .where(Table.id.in_(ids))
            )
        ).all()
        seats: dict[str, list[SeatRecord]] = {}
        for s, name, kind in (
            await session.execute(
                sa.select(TableSeat, Account.username, Account.kind)
                .outerjoin(Account, TableSeat.account_id == Account.id)
                .where(TableSeat.table_id.in_(ids))
                .order_by(TableSeat.table_id, TableSeat.seat)
            )
        ).all():
            seats.setdefault(s.table_id, []).append(
                SeatRecord(
                    kind=s.kind,
                    account_id=s.account_id or "",
                    username=name or "",
                    bot_account=kind in (BOT_ACCOUNT, SYSTEM),
                    policy=s.policy or "",
                    resigned=s.resigned_at is not None,
                    taken_over_at=s.taken_over_at,
                    guest=s.guest or "",
                )
            )
        by_id = {
            table.id: TableRecord(
                table_id=table.id,
                title=table.title,
                num_players=table.num_players,
                options_json=table.options_json,
                seed=None if table.seed is None else int(table.seed),
                seats=seats.get(table.id, []),
                owner_id=table.owner_id,
                owner=owner_name,
                status=table.status,
                game_id=table.game_id or "",
                result=None if table.result_json is None else json.loads(table.result_json),
                created_at=table.created_at,
                start_attempt_at=table.start_attempt_at,
                clock=None if table.clock_json is None else json.loads(table.clock_json),
                tournament_id=table.tournament_id or "",
                paused=bool(table.paused),
            )
            for table, owner_name in rows
        }
        return [by_id[i] for i in ids if i in by_id]

    async def _write(self, session: AsyncSession, before: TableRecord, after: TableRecord) -> None:
        values: dict[str, Any] = {}
        for field, column in (
            ("status", "status"),
            ("game_id", "game_id"),
            ("start_attempt_at", "start_attempt_at"),
        ):
            if getattr(before, field) != getattr(after, field):
                values[column] = getattr(after, field) or None
        if before.paused != after.paused:
            values["paused"] = after.paused
        if before.result != after.result:
            values["result_json"] = None if after.result is None else json.dumps(after.result)
        open_seats = sum(1 for s in after.seats if s.kind == EMPTY)
        if open_seats != sum(1 for s in before.seats if s.kind == EMPTY):
            values["open_seats"] = open_seats
        if values:
            await session.execute(sa.update(Table).where(Table.id == after.table_id).values(values))
        now = utcnow()
        for i, (old, new) in enumerate(zip(before.seats, after.seats, strict=True)):
            if old == new:
                continue
            seat_values: dict[str, Any] = {
                "kind": new.kind,
                "account_id": new.account_id or None,
                "policy": new.policy or None,
                "taken_over_at": new.taken_over_at,
            }
            if new.resigned != old.resigned:
                seat_values["resigned_at"] = now if new.resigned else None
            await session.execute(
                sa.update(TableSeat)
                .where(TableSeat.table_id == after.table_id, TableSeat.seat == i)
                .values(seat_values)
            )


__all__ = [
    "BOT",
    "EMPTY",
    "PLAYER",
    "BadPageToken",
    "SeatRecord",
    "TableFilter",
    "TableNotFound",
    "TableRecord",
    "TableStore",
]
