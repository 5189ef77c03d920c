"""Publishing: issued runs counted on their boards, hidden files, and trial prints.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03

A migration is a record of the past: it spells out its types here rather than import
them from `app.db.models`, which will move on.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Adding a nullable column needs no table rebuild, even on SQLite.
    op.add_column("issued_runs", sa.Column("counted_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("jobs", sa.Column("files_hidden_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "trial_prints",
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("task", sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_trial_prints_job_id_jobs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("job_id", "digest", name=op.f("pk_trial_prints")),
    )
    op.create_index("ix_trial_prints_digest", "trial_prints", ["digest"])


def downgrade() -> None:
    op.drop_table("trial_prints")
    # SQLite drops a column only by rebuilding the table: batch mode does that.
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("files_hidden_at")
    with op.batch_alter_table("issued_runs") as batch:
        batch.drop_column("counted_at")
