"""Whether a lobby table's clocks are paused by its organiser (``PauseTable``;
``tables.paused``, shown as ``Table.paused``).

Revision ID: 0006_table_paused
Revises: 0005_clocks
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_table_paused"
down_revision = "0005_clocks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(
            sa.Column("paused", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("paused")
