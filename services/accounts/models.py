"""The accounts tables (migration ``0001_accounts``).

* ``accounts``: one row per account. ``kind`` is ``human``, ``bot`` (owned by
  ``owner_id``, a human account; irreversible: no call changes ``kind``) or
  ``system`` (a hosted policy shown as an account, e.g. ``greedy-bot``).
  Usernames are unique regardless of case (a unique index on ``lower(username)``).
  ``password_hash`` is an argon2 hash (``None``: the account cannot sign in
  with a password: system bots, hosted bots created without one).
  ``hosted_policy`` names a policy of ``services/bots/policies.py`` when the
  platform's workers play the account.
* ``api_tokens``: personal API tokens. Only ``token_hash`` (SHA-256 hex of the
  token) is stored; ``scopes`` is a space-separated list; ``expires_at`` and
  ``revoked_at`` are ``None`` until set.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, func
from sqlalchemy.orm import Mapped, mapped_column

from services.platform.auth import BOT, HUMAN, SYSTEM
from services.platform.db import Base, UTCDateTime

KINDS = (HUMAN, BOT, SYSTEM)


class Account(Base):
    __tablename__ = "accounts"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    username: Mapped[str] = mapped_column(String(30))
    kind: Mapped[str] = mapped_column(String(8))
    password_hash: Mapped[str | None] = mapped_column(String(256))
    is_admin: Mapped[bool] = mapped_column(default=False)
    owner_id: Mapped[str | None] = mapped_column(ForeignKey("accounts.id"), index=True)
    hosted_policy: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (
        CheckConstraint("kind IN ('human', 'bot', 'system')", name="kind"),
        CheckConstraint("kind <> 'bot' OR owner_id IS NOT NULL", name="bot_has_owner"),
    )


Index("uq_accounts_username_lower", func.lower(Account.username), unique=True)


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(64), default="")
    scopes: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    @property
    def scope_list(self) -> list[str]:
        return self.scopes.split()
