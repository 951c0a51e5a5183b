"""Challenges and invitations (issue 32): ``challenges``, ``challenge_settings`` and
``challenge_friends`` (``services/lobby/challenges.py``); rematch offers: ``rematches``
(``services/lobby/rematch.py``).

Revision ID: 0010_challenges
Revises: 0009_reviews
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from services.platform.db import UTCDateTime

revision = "0010_challenges"
down_revision = "0009_reviews"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "challenges",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "table_id",
            sa.String(16),
            sa.ForeignKey(
                "tables.id", ondelete="CASCADE", name=op.f("fk_challenges_table_id_tables")
            ),
            nullable=False,
        ),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column(
            "inviter_id",
            sa.String(32),
            sa.ForeignKey("accounts.id", name=op.f("fk_challenges_inviter_id_accounts")),
            nullable=False,
        ),
        sa.Column(
            "invitee_id",
            sa.String(32),
            sa.ForeignKey("accounts.id", name=op.f("fk_challenges_invitee_id_accounts")),
            nullable=True,
        ),
        sa.Column(
            "taken_by_id",
            sa.String(32),
            sa.ForeignKey("accounts.id", name=op.f("fk_challenges_taken_by_id_accounts")),
            nullable=True,
        ),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("decided_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'accepted', 'declined', 'canceled')",
            name=op.f("ck_challenges_status"),
        ),
    )
    op.create_index("ix_challenges_table_id", "challenges", ["table_id"])
    op.create_index("ix_challenges_inviter_id", "challenges", ["inviter_id"])
    op.create_index("ix_challenges_invitee_id", "challenges", ["invitee_id"])
    op.create_index("ix_challenges_status_expires_at", "challenges", ["status", "expires_at"])
    op.create_table(
        "challenge_settings",
        sa.Column(
            "account_id",
            sa.String(32),
            sa.ForeignKey(
                "accounts.id",
                ondelete="CASCADE",
                name=op.f("fk_challenge_settings_account_id_accounts"),
            ),
            primary_key=True,
        ),
        sa.Column("accept", sa.String(10), nullable=False),
        sa.CheckConstraint(
            "accept IN ('everyone', 'friends', 'nobody')", name=op.f("ck_challenge_settings_accept")
        ),
    )
    op.create_table(
        "challenge_friends",
        sa.Column(
            "account_id",
            sa.String(32),
            sa.ForeignKey(
                "accounts.id",
                ondelete="CASCADE",
                name=op.f("fk_challenge_friends_account_id_accounts"),
            ),
            primary_key=True,
        ),
        sa.Column(
            "friend_id",
            sa.String(32),
            sa.ForeignKey(
                "accounts.id",
                ondelete="CASCADE",
                name=op.f("fk_challenge_friends_friend_id_accounts"),
            ),
            primary_key=True,
        ),
    )

    op.create_table(
        "rematches",
        sa.Column(
            "table_id",
            sa.String(16),
            sa.ForeignKey(
                "tables.id", ondelete="CASCADE", name=op.f("fk_rematches_table_id_tables")
            ),
            primary_key=True,
        ),
        sa.Column(
            "offered_by_id",
            sa.String(32),
            sa.ForeignKey("accounts.id", name=op.f("fk_rematches_offered_by_id_accounts")),
            nullable=False,
        ),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("accepted_json", sa.Text, nullable=False),
        sa.Column(
            "declined_by_id",
            sa.String(32),
            sa.ForeignKey("accounts.id", name=op.f("fk_rematches_declined_by_id_accounts")),
            nullable=True,
        ),
        sa.Column("new_table_id", sa.String(16), nullable=True),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            "status IN ('pending', 'starting', 'started', 'declined')",
            name=op.f("ck_rematches_status"),
        ),
    )


def downgrade() -> None:
    op.drop_table("rematches")
    op.drop_table("challenge_friends")
    op.drop_table("challenge_settings")
    op.drop_index("ix_challenges_status_expires_at", "challenges")
    op.drop_index("ix_challenges_invitee_id", "challenges")
    op.drop_index("ix_challenges_inviter_id", "challenges")
    op.drop_index("ix_challenges_table_id", "challenges")
    op.drop_table("challenges")
