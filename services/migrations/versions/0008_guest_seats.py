"""Guest seats: the recorded player of a seat of an imported game
(``table_seats.guest``, shown as ``Seat.guest``; NULL = none). A guest is a
name, not an account: the seat of a finished import is ``empty`` with a guest,
the seat of a running import is held by the importing account with a guest.

Revision ID: 0008_guest_seats
Revises: 0006_paused_archived_clocks
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_guest_seats"
down_revision = "0007_oauth"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("table_seats") as batch:
        batch.add_column(sa.Column("guest", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("table_seats") as batch:
        batch.drop_column("guest")
