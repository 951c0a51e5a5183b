"""Tournaments (players, rounds, tables) and OpenSkill ratings (ratings, history, rated games).

Revision ID: 0004_tournaments
Revises: 0003_archive
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from services.platform.db import UTCDateTime

revision = "0004_tournaments"
down_revision = "0003_archive"
branch_labels = None
depends_on = None


def _fk(table: str, column: str, target: str, cascade: bool = False) -> sa.ForeignKey:
    ref_table = target.split(".")[0]
    return sa.ForeignKey(
        target,
        ondelete="CASCADE" if cascade else None,
        name=op.f(f"fk_{table}_{column}_{ref_table}"),
    )


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("title", sa.String(32), nullable=False),
        sa.Column("name", sa.String(80), nullable=False),
        sa.Column(
            "organiser_id",
            sa.String(32),
            _fk("tournaments", "organiser_id", "accounts.id"),
            nullable=False,
        ),
        sa.Column("settings_json", sa.Text(), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("current_round", sa.Integer(), nullable=False),
        sa.Column("seed", sa.String(20), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            "status IN ('registration', 'running', 'paused', 'finished')",
            name=op.f("ck_tournaments_status"),
        ),
    )
    op.create_index("ix_tournaments_organiser_id", "tournaments", ["organiser_id"])
    op.create_index("ix_tournaments_status_created_at", "tournaments", ["status", "created_at"])
    op.create_table(
        "tournament_players",
        sa.Column(
            "tournament_id",
            sa.String(16),
            _fk("tournament_players", "tournament_id", "tournaments.id", cascade=True),
            primary_key=True,
        ),
        sa.Column(
            "account_id",
            sa.String(32),
            _fk("tournament_players", "account_id", "accounts.id"),
            primary_key=True,
        ),
        sa.Column("username", sa.String(30), nullable=False),
        sa.Column("is_bot", sa.Boolean(), nullable=False),
        sa.Column("entered_round", sa.Integer(), nullable=False),
        sa.Column("withdrew_after_round", sa.Integer(), nullable=True),
        sa.Column("registered_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "tournament_rounds",
        sa.Column(
            "tournament_id",
            sa.String(16),
            _fk("tournament_rounds", "tournament_id", "tournaments.id", cascade=True),
            primary_key=True,
        ),
        sa.Column("round", sa.Integer(), primary_key=True),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("byes_json", sa.Text(), nullable=False),
        sa.Column("paired_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
    )
    op.create_table(
        "tournament_tables",
        sa.Column(
            "tournament_id",
            sa.String(16),
            _fk("tournament_tables", "tournament_id", "tournaments.id", cascade=True),
            primary_key=True,
        ),
        sa.Column("round", sa.Integer(), primary_key=True),
        sa.Column("number", sa.Integer(), primary_key=True),
        sa.Column("seats_json", sa.Text(), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("lobby_table_id", sa.String(16), nullable=True),
        sa.Column("game_id", sa.String(64), nullable=True),
        sa.Column("result_json", sa.Text(), nullable=True),
        sa.Column("void_reason", sa.String(16), nullable=True),
        sa.Column("claimed_by", sa.String(32), nullable=True),
        sa.Column("claimed_at", UTCDateTime(), nullable=True),
        sa.Column("started_at", UTCDateTime(), nullable=True),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'created', 'running', 'finished', 'void')",
            name=op.f("ck_tournament_tables_status"),
        ),
        sa.UniqueConstraint("lobby_table_id", name=op.f("uq_tournament_tables_lobby_table_id")),
    )
    op.create_index("ix_tournament_tables_game_id", "tournament_tables", ["game_id"])
    op.create_table(
        "ratings",
        sa.Column("title", sa.String(32), primary_key=True),
        sa.Column(
            "account_id",
            sa.String(32),
            _fk("ratings", "account_id", "accounts.id"),
            primary_key=True,
        ),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("is_bot", sa.Boolean(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("title", sa.String(32), nullable=False),
        sa.Column(
            "account_id",
            sa.String(32),
            _fk("rating_history", "account_id", "accounts.id"),
            nullable=False,
        ),
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("mu_before", sa.Float(), nullable=False),
        sa.Column("sigma_before", sa.Float(), nullable=False),
        sa.Column("mu_after", sa.Float(), nullable=False),
        sa.Column("sigma_after", sa.Float(), nullable=False),
        sa.Column("rated_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("game_id", "account_id", name="uq_rating_history_seat"),
    )
    op.create_index("ix_rating_history_account_id", "rating_history", ["account_id"])
    op.create_table(
        "rated_games",
        sa.Column("game_id", sa.String(64), primary_key=True),
        sa.Column("title", sa.String(32), nullable=False),
        sa.Column("rated_at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rated_games")
    op.drop_table("rating_history")
    op.drop_table("ratings")
    op.drop_table("tournament_tables")
    op.drop_table("tournament_rounds")
    op.drop_table("tournament_players")
    op.drop_table("tournaments")
