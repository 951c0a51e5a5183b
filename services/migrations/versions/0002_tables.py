"""The lobby's tables and seats (``services/lobby/models.py``); seats reference accounts.

Revision ID: 0002_tables
Revises: 0001_accounts
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from services.platform.db import UTCDateTime

revision = "0002_tables"
down_revision = "0001_accounts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tables",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("title", sa.String(32), nullable=False),
        sa.Column("num_players", sa.Integer(), nullable=False),
        sa.Column("options_json", sa.Text(), nullable=False),
        sa.Column("seed", sa.String(20), nullable=True),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column(
            "owner_id",
            sa.String(32),
            sa.ForeignKey("accounts.id", name=op.f("fk_tables_owner_id_accounts")),
            nullable=False,
        ),
        sa.Column("game_id", sa.String(64), nullable=True),
        sa.Column("result_json", sa.Text(), nullable=True),
        sa.Column("open_seats", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("start_attempt_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint(
            "status IN ('open', 'starting', 'running', 'finished', 'aborted')",
            name=op.f("ck_tables_status"),
        ),
        sa.CheckConstraint(
            "open_seats >= 0 AND open_seats <= num_players", name=op.f("ck_tables_open_seats")
        ),
        sa.UniqueConstraint("game_id", name=op.f("uq_tables_game_id")),
    )
    op.create_index("ix_tables_owner_id", "tables", ["owner_id"])
    op.create_index("ix_tables_created_at_id", "tables", ["created_at", "id"])
    op.create_index("ix_tables_status_created_at", "tables", ["status", "created_at"])
    op.create_table(
        "table_seats",
        sa.Column(
            "table_id",
            sa.String(16),
            sa.ForeignKey(
                "tables.id", ondelete="CASCADE", name=op.f("fk_table_seats_table_id_tables")
            ),
            primary_key=True,
        ),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column(
            "account_id",
            sa.String(32),
            sa.ForeignKey("accounts.id", name=op.f("fk_table_seats_account_id_accounts")),
            nullable=True,
        ),
        sa.Column("policy", sa.String(32), nullable=True),
        sa.Column("resigned_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint("kind IN ('empty', 'player', 'bot')", name=op.f("ck_table_seats_kind")),
        sa.CheckConstraint(
            "(kind = 'empty') = (account_id IS NULL)",
            name=op.f("ck_table_seats_empty_has_no_account"),
        ),
    )
    op.create_index("ix_table_seats_account_id", "table_seats", ["account_id"])


def downgrade() -> None:
    op.drop_table("table_seats")
    op.drop_table("tables")
