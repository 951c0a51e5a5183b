"""Pauses and clocks kept: whether a lobby table's clocks are paused by its
organiser (``tables.paused``, shown as ``Table.paused``), and what the archive
needs to replay a timed game (``archived_games.replay``: the creation record's
clock settings, clock start and resignation rule as JSON; ``archived_actions.at_ms``:
when each entry was appended).

Revision ID: 0006_paused_archived_clocks
Revises: 0005_clocks
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_paused_archived_clocks"
down_revision = "0005_clocks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(
            sa.Column("paused", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("archived_games") as batch:
        batch.add_column(sa.Column("replay", sa.Text(), nullable=True))
    with op.batch_alter_table("archived_actions") as batch:
        batch.add_column(sa.Column("at_ms", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("archived_actions") as batch:
        batch.drop_column("at_ms")
    with op.batch_alter_table("archived_games") as batch:
        batch.drop_column("replay")
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("paused")
