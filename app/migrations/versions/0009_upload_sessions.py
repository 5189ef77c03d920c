"""Uploads in parts: a job over one request's cap is sent as numbered parts, each checked,
then assembled and checked as one upload.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

A migration is a record of the past: it spells out its types here rather than import
them from `app.db.models`, which will move on.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "upload_sessions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=True),
        sa.Column("total_bytes", sa.BigInteger(), nullable=False),
        sa.Column("part_bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("received", sa.Integer(), nullable=False),
        sa.Column("part_digests", JSON_DOCUMENT, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("job_ref", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["accounts.id"], name=op.f("fk_upload_sessions_owner_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_upload_sessions")),
    )
    op.create_index("ix_upload_sessions_owner_status", "upload_sessions", ["owner_id", "status"])
    op.create_index("ix_upload_sessions_expires", "upload_sessions", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_upload_sessions_expires", table_name="upload_sessions")
    op.drop_index("ix_upload_sessions_owner_status", table_name="upload_sessions")
    op.drop_table("upload_sessions")
