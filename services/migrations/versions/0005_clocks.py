"""Clocks of lobby tables: each table's clock settings (time control, timeout
policy; ``services/match/controls.py``) and tournament, and the version from
which a bot plays a seat taken over after a timeout.

Revision ID: 0005_clocks
Revises: 0004_tournaments
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_clocks"
down_revision = "0004_tournaments"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("clock_json", sa.Text(), nullable=True))
        batch.add_column(sa.Column("tournament_id", sa.String(64), nullable=True))
    with op.batch_alter_table("table_seats") as batch:
        batch.add_column(sa.Column("taken_over_at", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("table_seats") as batch:
        batch.drop_column("taken_over_at")
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("tournament_id")
        batch.drop_column("clock_json")
