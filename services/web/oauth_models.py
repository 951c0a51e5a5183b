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

The access tokens themselves are ordinary API tokens of the accounts service (label
``oauth <client_id> <app name>``): they show on the account page and are revoked like any.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from services.platform.db import Base, UTCDateTime

CODE_LIFETIME_S = 60
"""An authorization code expires this long after consent (seconds; RFC 6749 §4.1.2 advises
at most 10 minutes)."""


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
