"""Game reviews (issue 31): ``game_reviews``, one row per reviewed table
(``services/bots/review_store.py``).

Revision ID: 0009_reviews
Revises: 0008_guest_seats
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from services.platform.db import UTCDateTime

revision = "0009_reviews"
down_revision = "0008_guest_seats"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "game_reviews",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("title", sa.String(32), nullable=False),
        sa.Column("requested_by", sa.String(32), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("done", sa.Integer, nullable=False),
        sa.Column("total", sa.Integer, nullable=False),
        sa.Column("entries", sa.Text, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("requested_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("game_reviews")
