"""Table chat kept with the archived game (issue 32): ``archived_chat``, one row per message
of a finished table (``services/lobby/chat.py``).

Revision ID: 0010_table_chat
Revises: 0009_reviews
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_table_chat"
down_revision = "0009_reviews"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "archived_chat",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("message_id", sa.String(48), primary_key=True),
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("ms", sa.BigInteger, nullable=False),
        sa.Column("n", sa.Integer, nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("account_id", sa.String(32), nullable=False),
        sa.Column("username", sa.String(64), nullable=False),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
    )
    op.create_index("ix_archived_chat_order", "archived_chat", ["table_id", "ms", "n"])


def downgrade() -> None:
    op.drop_index("ix_archived_chat_order", table_name="archived_chat")
    op.drop_table("archived_chat")
