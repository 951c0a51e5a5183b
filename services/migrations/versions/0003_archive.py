"""The archive of finished games: games, their actions and their seats.

Revision ID: 0003_archive
Revises: 0002_tables
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from services.platform.db import UTCDateTime

revision = "0003_archive"
down_revision = "0002_tables"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "archived_games",
        sa.Column("game_id", sa.String(64), primary_key=True),
        sa.Column("title", sa.String(32), nullable=False),
        sa.Column("rules_version", sa.String(64), nullable=False),
        sa.Column("num_players", sa.Integer(), nullable=False),
        sa.Column("options", sa.Text(), nullable=False),
        sa.Column("seed", sa.String(20), nullable=False),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=False),
        sa.Column("archived_at", UTCDateTime(), nullable=False),
        sa.Column("num_actions", sa.Integer(), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
    )
    op.create_index("ix_archived_games_title_finished", "archived_games", ["title", "finished_at"])
    op.create_index("ix_archived_games_finished", "archived_games", ["finished_at", "game_id"])
    op.create_table(
        "archived_actions",
        sa.Column(
            "game_id",
            sa.String(64),
            sa.ForeignKey(
                "archived_games.game_id",
                ondelete="CASCADE",
                name=op.f("fk_archived_actions_game_id_archived_games"),
            ),
            primary_key=True,
        ),
        sa.Column("version", sa.Integer(), primary_key=True),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("events", sa.Text(), nullable=False),
        sa.Column("active", sa.String(64), nullable=False),
    )
    op.create_table(
        "archived_seats",
        sa.Column(
            "game_id",
            sa.String(64),
            sa.ForeignKey(
                "archived_games.game_id",
                ondelete="CASCADE",
                name=op.f("fk_archived_seats_game_id_archived_games"),
            ),
            primary_key=True,
        ),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("policy", sa.String(32), nullable=False),
        sa.Column("account_id", sa.String(32), nullable=True),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
    )
    op.create_index("ix_archived_seats_account_id", "archived_seats", ["account_id"])


def downgrade() -> None:
    op.drop_table("archived_seats")
    op.drop_table("archived_actions")
    op.drop_table("archived_games")
