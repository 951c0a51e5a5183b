"""OAuth 2 refresh tokens, rotated per grant family (``services/web/oauth_models.py``).

Revision ID: 0010_oauth_refresh
Revises: 0009_reviews
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from services.platform.db import UTCDateTime

revision = "0010_oauth_refresh"
down_revision = "0009_reviews"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "oauth_refresh_tokens",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("family_id", sa.String(32), nullable=False, index=True),
        sa.Column(
            "client_id",
            sa.String(32),
            sa.ForeignKey("oauth_clients.client_id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column(
            "account_id",
            sa.String(32),
            sa.ForeignKey("accounts.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("scope", sa.String(256), nullable=False),
        sa.Column("access_token_id", sa.String(32), nullable=False, index=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("used_at", UTCDateTime(), nullable=True),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("oauth_refresh_tokens")
