"""The OAuth tables of the gateway (migration ``0007_oauth``; docs/api.md, "OAuth 2 for apps").

* ``oauth_clients``: one row per registered app. Apps are *public clients* (RFC 6749 §2.1: a
  program on someone's computer or phone keeps no secret), so there is no client secret: PKCE
  with S256 (RFC 7636) binds each code to the app that asked for it. ``redirect_uris`` is a
  space-separated list of the exact URIs a code may be sent to; ``owner_id`` the account that
  registered the app.
* ``oauth_codes``: authorization codes, each used at most once and for
  :data:`CODE_LIFETIME_S` seconds. Only ``code_hash`` (SHA-256 hex of the code) is stored, as
  for API tokens. ``scope`` is the space-separated list the account granted; ``code_challenge``
  the app's S256 challenge.

* ``oauth_refresh_tokens`` (migration ``0010_oauth_refresh``): refresh tokens (RFC 6749 §6),
  only their SHA-256 hex stored. Each grant (one consent) is a *family* (``family_id``); every
  refresh uses its token up (``used_at``) and issues the next of the family (rotation, RFC 9700
  §4.14.2). A used token presented again ends the whole family (``revoked_at`` on every row)
  and revokes its access tokens: someone holds a copy. ``access_token_id`` is the id of the
  API token issued with the row.

The access tokens themselves are ordinary API tokens of the accounts service (label
``oauth <client_id> <app name>``): they show on the account page and are revoked like any.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from services.platform.db import (
    Base,
    UTCDateTime,
    create_engine,
    database_url,
    session_factory,
    utcnow,
)

CODE_LIFETIME_S = 60
"""An authorization code expires this long after consent (seconds; RFC 6749 §4.1.2 advises
at most 10 minutes)."""
REFRESH_LIFETIME_S = 30 * 24 * 3600
"""A refresh token expires this long after it was issued, if not used before (seconds): an
app that refreshes at least once a month keeps its grant."""


class OAuthClient(Base):
    __tablename__ = "oauth_clients"

    client_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    owner_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    redirect_uris: Mapped[str] = mapped_column(String(2048))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    @property
    def redirect_uri_list(self) -> list[str]:
        return self.redirect_uris.split()


class OAuthCode(Base):
    __tablename__ = "oauth_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    client_id: Mapped[str] = mapped_column(
        ForeignKey("oauth_clients.client_id", ondelete="CASCADE"), index=True
    )
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    redirect_uri: Mapped[str] = mapped_column(String(512))
    scope: Mapped[str] = mapped_column(String(256))
    code_challenge: Mapped[str] = mapped_column(String(128))
    code_challenge_method: Mapped[str] = mapped_column(String(8))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class OAuthRefreshToken(Base):
    __tablename__ = "oauth_refresh_tokens"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    family_id: Mapped[str] = mapped_column(String(32), index=True)
    client_id: Mapped[str] = mapped_column(
        ForeignKey("oauth_clients.client_id", ondelete="CASCADE"), index=True
    )
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    scope: Mapped[str] = mapped_column(String(256))
    access_token_id: Mapped[str] = mapped_column(String(32), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


def oauth_store(state: Any) -> async_sessionmaker[AsyncSession]:
    """The gateway's sessions of the OAuth tables (``state``: the app's ``app.state``, whose
    ``settings`` name the database), made on first use."""
    if getattr(state, "oauth_sessions", None) is None:
        engine = create_engine(database_url(state.settings))
        state.oauth_sessions = session_factory(engine)
    return state.oauth_sessions


async def end_family(db: AsyncSession, family_id: str) -> list[str]:
    """Revokes every refresh token of the grant ``family_id``; returns the ids of the access
    tokens issued with them (the caller revokes those at the accounts service)."""
    now = utcnow()
    await db.execute(
        update(OAuthRefreshToken)
        .where(OAuthRefreshToken.family_id == family_id, OAuthRefreshToken.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    ids = await db.scalars(
        select(OAuthRefreshToken.access_token_id).where(OAuthRefreshToken.family_id == family_id)
    )
    return sorted(set(ids))


async def end_grant_of_access_token(state: Any, token_id: str) -> None:
    """The person revoked the API token ``token_id`` (the account page, ``DELETE
    /api/tokens/{id}``): if an app was given it, that grant's refresh tokens end too, so the
    app cannot refresh its way back (RFC 7009 §2.1)."""
    async with oauth_store(state)() as db, db.begin():
        families = await db.scalars(
            select(OAuthRefreshToken.family_id).where(OAuthRefreshToken.access_token_id == token_id)
        )
        for family in set(families):
            await end_family(db, family)
