"""Accounts and personal API tokens; the system bot accounts of the hosted
policies (``random-bot``, ``greedy-bot``).

Revision ID: 0001_accounts
Revises:
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from services.platform.db import UTCDateTime

revision = "0001_accounts"
down_revision = None
branch_labels = None
depends_on = None

SYSTEM_BOTS = {"random-bot": "random", "greedy-bot": "greedy"}
ACCOUNT_NAMESPACE = uuid.UUID("7d1f3c52-5b0e-4a8e-9a53-0c6f2d8f4e11")


def upgrade() -> None:
    accounts = op.create_table(
        "accounts",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("username", sa.String(30), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("password_hash", sa.String(256), nullable=True),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column(
            "owner_id",
            sa.String(32),
            sa.ForeignKey("accounts.id", name=op.f("fk_accounts_owner_id_accounts")),
            nullable=True,
        ),
        sa.Column("hosted_policy", sa.String(32), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("kind IN ('human', 'bot', 'system')", name=op.f("ck_accounts_kind")),
        sa.CheckConstraint(
            "kind <> 'bot' OR owner_id IS NOT NULL", name=op.f("ck_accounts_bot_has_owner")
        ),
    )
    op.create_index("ix_accounts_owner_id", "accounts", ["owner_id"])
    op.create_index(
        "uq_accounts_username_lower", "accounts", [sa.text("lower(username)")], unique=True
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "account_id",
            sa.String(32),
            sa.ForeignKey(
                "accounts.id", ondelete="CASCADE", name=op.f("fk_api_tokens_account_id_accounts")
            ),
            nullable=False,
        ),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("label", sa.String(64), nullable=False),
        sa.Column("scopes", sa.String(256), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=True),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    op.create_index("ix_api_tokens_account_id", "api_tokens", ["account_id"])
    now = datetime.now(UTC)
    op.bulk_insert(
        accounts,
        [
            {
                "id": uuid.uuid5(ACCOUNT_NAMESPACE, name).hex,
                "username": name,
                "kind": "system",
                "password_hash": None,
                "is_admin": False,
                "owner_id": None,
                "hosted_policy": policy,
                "created_at": now,
            }
            for name, policy in SYSTEM_BOTS.items()
        ],
    )


def downgrade() -> None:
    op.drop_table("api_tokens")
    op.drop_table("accounts")
