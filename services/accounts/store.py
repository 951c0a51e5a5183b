"""Accounts and tokens in the durable store (``services.accounts.models``).

Every method is one transaction: it either completes or leaves the database
as it was. Lookups by username ignore case (the unique index on
``lower(username)``). Database outages surface as SQLAlchemy / asyncpg
errors that the error interceptor answers with UNAVAILABLE.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
import sqlalchemy.exc
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import aliased

from services.accounts.credentials import new_token, token_hash
from services.accounts.models import BOT, HUMAN, SYSTEM, Account, ApiToken
from services.platform.db import utcnow


class UsernameTaken(Exception):
    """The username (in some case) belongs to another account."""


@dataclass(frozen=True)
class TokenRecord:
    """A token with its account, as the verifier needs them."""

    token: ApiToken
    account: Account
    owner_username: str = ""


def _new_id() -> str:
    return uuid.uuid4().hex


def _lower(name: str):
    return sa.func.lower(Account.username) == name.lower()


class AccountStore:
    """Accounts and API tokens.

    Args:
        sessions: the session factory of the store (``services.platform.db``).
    """

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    # ----------------------------------------------------------------- accounts

    async def create_account(
        self,
        username: str,
        password_hash: str | None,
        kind: str = HUMAN,
        owner_id: str | None = None,
        hosted_policy: str | None = None,
        is_admin: bool = False,
    ) -> Account:
        """A new account (the caller validated the name and hashed the password).

        Raises:
            UsernameTaken: the name, in any case, is taken (nothing written).
        """
        account = Account(
            id=_new_id(),
            username=username,
            kind=kind,
            password_hash=password_hash,
            is_admin=is_admin,
            owner_id=owner_id,
            hosted_policy=hosted_policy,
            created_at=utcnow(),
        )
        try:
            async with self.sessions.begin() as session:
                taken = await session.scalar(sa.select(Account.id).where(_lower(username)))
                if taken is not None:
                    raise UsernameTaken(username)
                session.add(account)
        except sqlalchemy.exc.IntegrityError as exc:  # a concurrent CreateAccount won
            raise UsernameTaken(username) from exc
        return account

    async def by_username(self, username: str) -> Account | None:
        """The account named ``username`` in any case, or None."""
        async with self.sessions() as session:
            return await session.scalar(sa.select(Account).where(_lower(username)))

    async def by_id(self, account_id: str) -> Account | None:
        async with self.sessions() as session:
            return await session.get(Account, account_id)

    async def username_of(self, account_id: str | None) -> str:
        """The username of ``account_id`` ("" for None or unknown)."""
        if account_id is None:
            return ""
        account = await self.by_id(account_id)
        return account.username if account else ""

    async def set_password_hash(self, account_id: str, password_hash: str) -> None:
        async with self.sessions.begin() as session:
            await session.execute(
                sa.update(Account)
                .where(Account.id == account_id)
                .values(password_hash=password_hash)
            )

    async def set_admin(self, account_id: str, is_admin: bool = True) -> None:
        async with self.sessions.begin() as session:
            await session.execute(
                sa.update(Account).where(Account.id == account_id).values(is_admin=is_admin)
            )

    async def set_hosted_policy(self, account_id: str, policy: str | None) -> Account:
        """Binds a bot account to ``policy`` (None: unbinds); the updated account."""
        async with self.sessions.begin() as session:
            account = await session.get(Account, account_id)
            assert account is not None and account.kind == BOT
            account.hosted_policy = policy
        return account

    async def bots_of(self, owner_id: str) -> list[Account]:
        async with self.sessions() as session:
            rows = await session.scalars(
                sa.select(Account)
                .where(Account.owner_id == owner_id)
                .order_by(Account.created_at, Account.id)
            )
            return list(rows)

    async def ensure_system_bots(self, policies: dict[str, str]) -> list[str]:
        """Creates the missing system bot accounts (username -> hosted policy);
        the names created (the migration made the first ones)."""
        created = []
        for name, policy in policies.items():
            if await self.by_username(name) is None:
                try:
                    await self.create_account(name, None, kind=SYSTEM, hosted_policy=policy)
                    created.append(name)
                except UsernameTaken:  # another replica made it first
                    pass
        return created

    # ----------------------------------------------------------------- tokens

    async def create_token(
        self, account: Account, scopes: list[str], lifetime_s: int, label: str
    ) -> tuple[str, ApiToken]:
        """A new token for ``account``: ``(secret, record)``; only its hash is
        stored. ``lifetime_s`` 0 = never expires."""
        secret = new_token()
        now = utcnow()
        record = ApiToken(
            id=_new_id(),
            account_id=account.id,
            token_hash=token_hash(secret),
            label=label,
            scopes=" ".join(scopes),
            created_at=now,
            expires_at=now + timedelta(seconds=lifetime_s) if lifetime_s else None,
            revoked_at=None,
        )
        async with self.sessions.begin() as session:
            session.add(record)
        return secret, record

    async def token_by_hash(self, digest: str) -> TokenRecord | None:
        """The token whose SHA-256 is ``digest``, with its account (and the
        account's owner's username), or None."""
        owner = aliased(Account)
        async with self.sessions() as session:
            row = (
                await session.execute(
                    sa.select(ApiToken, Account, owner.username)
                    .join(Account, ApiToken.account_id == Account.id)
                    .outerjoin(owner, Account.owner_id == owner.id)
                    .where(ApiToken.token_hash == digest)
                )
            ).first()
        if row is None:
            return None
        return TokenRecord(row[0], row[1], row[2] or "")

    async def token_by_id(self, token_id: str) -> ApiToken | None:
        async with self.sessions() as session:
            return await session.get(ApiToken, token_id)

    async def tokens_of(self, account_id: str) -> list[ApiToken]:
        async with self.sessions() as session:
            rows = await session.scalars(
                sa.select(ApiToken)
                .where(ApiToken.account_id == account_id)
                .order_by(ApiToken.created_at, ApiToken.id)
            )
            return list(rows)

    async def revoke(self, token_id: str, when: datetime | None = None) -> ApiToken | None:
        """Marks the token revoked (kept for the listing); an already revoked
        token keeps its first revocation time. The token, or None if unknown."""
        async with self.sessions.begin() as session:
            token = await session.get(ApiToken, token_id)
            if token is not None and token.revoked_at is None:
                token.revoked_at = when or utcnow()
        return token
