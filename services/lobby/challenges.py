"""Challenges and invitations (issue 32, item 1), in the durable store (migration
``0010_challenges``), and the rules that judge them.

* ``challenges``: one row per challenge. ``id`` is a random URL-safe token: for an open
  challenge (``invitee_id`` NULL) it is the link anyone signed in can take. ``status`` is
  ``pending``, ``accepted``, ``declined`` or ``canceled``; a pending challenge whose
  ``expires_at`` has passed reads as ``expired`` (evaluated lazily, whenever it is read or
  answered: nothing needs to sweep it). ``taken_by_id`` is the account that accepted.
* ``challenge_settings``: per account, whom it accepts invitations from: ``everyone`` (the
  default, also without a row), ``friends`` or ``nobody``.
* ``challenge_friends``: per account, the accounts whose invitations ``friends`` accepts (the
  platform has no other friends concept: this allow list is it).

Every change of a challenge is a conditional ``UPDATE ... WHERE status = 'pending'``: of two
answers at once (an accept and a cancel) exactly one wins, the other is refused. Accepting runs
in the table's transaction (:meth:`services.lobby.store.TableStore.change` ``also``), so the
seat and the challenge change together or not at all.

>>> import datetime
>>> now = datetime.datetime(2026, 12, 7, tzinfo=datetime.UTC)
>>> c = ChallengeRecord("c1", "t1", 0, "a1", "ada", None, "", PENDING, "railbarons",
...                     now, now + datetime.timedelta(hours=24))
>>> c.state(now), c.state(now + datetime.timedelta(days=2))
('pending', 'expired')
>>> try:
...     require_pending(c, now + datetime.timedelta(days=2))
... except ServiceError as exc:
...     print(exc.code.name, exc.reason)
FAILED_PRECONDITION challenge_expired
"""

from __future__ import annotations

import dataclasses
import datetime
import secrets

import grpc
import sqlalchemy as sa
from sqlalchemy import CheckConstraint, ForeignKey, Index, String
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, aliased, mapped_column

from services.accounts.models import Account
from services.lobby.models import Table
from services.platform.db import Base, UTCDateTime, utcnow
from services.platform.grpc_errors import ServiceError

PENDING, ACCEPTED, DECLINED, CANCELED, EXPIRED = (
    "pending",
    "accepted",
    "declined",
    "canceled",
    "expired",
)
EVERYONE, FRIENDS, NOBODY = "everyone", "friends", "nobody"
ACCEPT_SETTINGS = (EVERYONE, FRIENDS, NOBODY)

DEFAULT_EXPIRY_S = 86_400
"""An invitation's life when the request gives none (24 h)."""
MIN_EXPIRY_S, MAX_EXPIRY_S = 60, 7 * 86_400
MAX_FRIENDS = 200

REFUSED = grpc.StatusCode.FAILED_PRECONDITION
DENIED = grpc.StatusCode.PERMISSION_DENIED


class Challenge(Base):
    __tablename__ = "challenges"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id", ondelete="CASCADE"), index=True)
    seat: Mapped[int]
    inviter_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)
    invitee_id: Mapped[str | None] = mapped_column(ForeignKey("accounts.id"), index=True)
    taken_by_id: Mapped[str | None] = mapped_column(ForeignKey("accounts.id"))
    status: Mapped[str] = mapped_column(String(10))
    created_at: Mapped[datetime.datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime.datetime] = mapped_column(UTCDateTime())
    decided_at: Mapped[datetime.datetime | None] = mapped_column(UTCDateTime())

    __table_args__ = (
        CheckConstraint("status IN ('pending', 'accepted', 'declined', 'canceled')", name="status"),
        Index("ix_challenges_status_expires_at", "status", "expires_at"),
    )


class ChallengeSetting(Base):
    __tablename__ = "challenge_settings"

    account_id: Mapped[str] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    accept: Mapped[str] = mapped_column(String(10))

    __table_args__ = (
        CheckConstraint("accept IN ('everyone', 'friends', 'nobody')", name="accept"),
    )


class ChallengeFriend(Base):
    __tablename__ = "challenge_friends"

    account_id: Mapped[str] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    friend_id: Mapped[str] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )


@dataclasses.dataclass
class ChallengeRecord:
    """One challenge as the lobby works with it (usernames resolved).

    Attributes:
        invitee_id: None for an open challenge (``invitee`` "").
        status: the stored status (see :meth:`state` for the one to show).
        expires_at, created_at: UTC.
    """

    challenge_id: str
    table_id: str
    seat: int
    inviter_id: str
    inviter: str
    invitee_id: str | None
    invitee: str
    status: str
    title: str
    created_at: datetime.datetime
    expires_at: datetime.datetime
    taken_by: str = ""

    def state(self, now: datetime.datetime) -> str:
        """The status to show: ``expired`` for a pending challenge past its expiry."""
        if self.status == PENDING and now >= self.expires_at:
            return EXPIRED
        return self.status


def require_pending(c: ChallengeRecord, now: datetime.datetime) -> None:
    """Refuse to answer a challenge that is no longer pending.

    Raises:
        ServiceError: FAILED_PRECONDITION ``challenge_<state>`` (``challenge_expired``,
            ``challenge_accepted``, ``challenge_declined``, ``challenge_canceled``).
    """
    state = c.state(now)
    if state != PENDING:
        raise ServiceError(
            REFUSED, f"challenge_{state}", f"this challenge is {state}", status=state
        )


def expiry_seconds(requested: int) -> int:
    """The life of a new invitation: ``requested`` seconds (0 = :data:`DEFAULT_EXPIRY_S`).

    Raises:
        ServiceError: INVALID_ARGUMENT ``bad_expiry`` outside 60..604800.
    """
    seconds = requested or DEFAULT_EXPIRY_S
    if not MIN_EXPIRY_S <= seconds <= MAX_EXPIRY_S:
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_expiry",
            f"expires_in_s must be {MIN_EXPIRY_S}..{MAX_EXPIRY_S} (0 = {DEFAULT_EXPIRY_S})",
            min_s=MIN_EXPIRY_S,
            max_s=MAX_EXPIRY_S,
        )
    return seconds


def may_invite(accept: str, friends: set[str], inviter_id: str, invitee: str) -> None:
    """Refuse an invitation the invitee's setting does not accept.

    Args:
        accept: the invitee's setting (``everyone``, ``friends``, ``nobody``).
        friends: the account ids on the invitee's friends list.

    Raises:
        ServiceError: FAILED_PRECONDITION ``invitations_refused`` (``nobody``) or
            ``not_a_friend`` (``friends``, the inviter not on the list).
    """
    if accept == NOBODY:
        raise ServiceError(REFUSED, "invitations_refused", f"{invitee} does not accept invitations")
    if accept == FRIENDS and inviter_id not in friends:
        raise ServiceError(
            REFUSED, "not_a_friend", f"{invitee} accepts invitations from friends only"
        )


def new_challenge_id() -> str:
    """A random challenge id, also an open challenge's link token (128 bits)."""
    return secrets.token_urlsafe(16)


class ChallengeStore:
    """Challenges and the accounts' settings in the database.

    Args:
        sessions: the store's session factory (the tables' one).
    """

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    @staticmethod
    def _query() -> sa.Select:
        inviter = aliased(Account)
        invitee = aliased(Account)
        taker = aliased(Account)
        return (
            sa.select(
                Challenge,
                inviter.username,
                invitee.username,
                taker.username,
                Table.title,
            )
            .join(inviter, inviter.id == Challenge.inviter_id)
            .outerjoin(invitee, invitee.id == Challenge.invitee_id)
            .outerjoin(taker, taker.id == Challenge.taken_by_id)
            .join(Table, Table.id == Challenge.table_id)
        )

    @staticmethod
    def _record(row) -> ChallengeRecord:
        c, inviter, invitee, taker, title = row
        return ChallengeRecord(
            c.id,
            c.table_id,
            c.seat,
            c.inviter_id,
            inviter,
            c.invitee_id,
            invitee or "",
            c.status,
            title,
            c.created_at,
            c.expires_at,
            taker or "",
        )

    async def create(self, c: ChallengeRecord) -> None:
        async with self.sessions.begin() as s:
            s.add(
                Challenge(
                    id=c.challenge_id,
                    table_id=c.table_id,
                    seat=c.seat,
                    inviter_id=c.inviter_id,
                    invitee_id=c.invitee_id,
                    status=c.status,
                    created_at=c.created_at,
                    expires_at=c.expires_at,
                )
            )

    async def get(self, challenge_id: str) -> ChallengeRecord | None:
        async with self.sessions() as s:
            row = (await s.execute(self._query().where(Challenge.id == challenge_id))).first()
            return None if row is None else self._record(row)

    async def pending_of(
        self, account_id: str, now: datetime.datetime
    ) -> tuple[list[ChallengeRecord], list[ChallengeRecord]]:
        """The account's pending, unexpired challenges: (received, sent), newest first."""
        live = (Challenge.status == PENDING) & (Challenge.expires_at > now)
        order = (Challenge.created_at.desc(), Challenge.id)
        async with self.sessions() as s:
            got = await s.execute(
                self._query().where(live, Challenge.invitee_id == account_id).order_by(*order)
            )
            received = [self._record(r) for r in got]
            got = await s.execute(
                self._query().where(live, Challenge.inviter_id == account_id).order_by(*order)
            )
            return received, [self._record(r) for r in got]

    async def pending_for(self, table_id: str, invitee_id: str, now: datetime.datetime) -> bool:
        """Whether ``invitee_id`` holds a pending, unexpired invitation to the table."""
        async with self.sessions() as s:
            found = await s.scalar(
                sa.select(Challenge.id).where(
                    Challenge.table_id == table_id,
                    Challenge.invitee_id == invitee_id,
                    Challenge.status == PENDING,
                    Challenge.expires_at > now,
                )
            )
            return found is not None

    @staticmethod
    async def decide_in(
        s: AsyncSession,
        challenge_id: str,
        status: str,
        now: datetime.datetime,
        taken_by_id: str | None = None,
    ) -> None:
        """Move a pending, unexpired challenge to ``status`` within session ``s``.

        Raises:
            ServiceError: FAILED_PRECONDITION ``challenge_answered`` when it was answered,
                canceled or expired meanwhile (a concurrent call won).
        """
        done = await s.execute(
            sa.update(Challenge)
            .where(
                Challenge.id == challenge_id,
                Challenge.status == PENDING,
                Challenge.expires_at > now,
            )
            .values(status=status, decided_at=now, taken_by_id=taken_by_id)
            .execution_options(synchronize_session=False)
        )
        if done.rowcount == 0:
            raise ServiceError(
                REFUSED, "challenge_answered", "this challenge was answered or withdrawn meanwhile"
            )

    async def decide(self, challenge_id: str, status: str, now: datetime.datetime) -> None:
        """:meth:`decide_in` in a transaction of its own."""
        async with self.sessions.begin() as s:
            await self.decide_in(s, challenge_id, status, now)

    async def settings(self, account_id: str) -> tuple[str, list[tuple[str, str]]]:
        """The account's setting and its friends ``(account id, username)``, by username."""
        async with self.sessions() as s:
            accept = await s.scalar(
                sa.select(ChallengeSetting.accept).where(ChallengeSetting.account_id == account_id)
            )
            rows = await s.execute(
                sa.select(Account.id, Account.username)
                .join(ChallengeFriend, ChallengeFriend.friend_id == Account.id)
                .where(ChallengeFriend.account_id == account_id)
                .order_by(Account.username)
            )
            return accept or EVERYONE, [(i, u) for i, u in rows]

    async def set_settings(self, account_id: str, accept: str, friend_ids: list[str]) -> None:
        """Replace the account's setting and friends list."""
        async with self.sessions.begin() as s:
            await s.execute(
                sa.delete(ChallengeSetting).where(ChallengeSetting.account_id == account_id)
            )
            await s.execute(
                sa.delete(ChallengeFriend).where(ChallengeFriend.account_id == account_id)
            )
            s.add(ChallengeSetting(account_id=account_id, accept=accept))
            for friend in dict.fromkeys(friend_ids):
                s.add(ChallengeFriend(account_id=account_id, friend_id=friend))


def now_utc() -> datetime.datetime:
    """The clock the challenges are judged by (UTC)."""
    return utcnow()
