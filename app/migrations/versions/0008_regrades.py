"""The regrade queue: for each uploaded job, whether the service graded its recorded
outputs again, and what it found.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

A migration is a record of the past: it spells out its types here rather than import
them from `app.db.models`, which will move on.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None

STATUSES = ("queued", "running", "agreed", "disagreed", "not_regradable", "failed")
JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "regrades",
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                *STATUSES,
                name="regrade_status",
                native_enum=False,
                create_constraint=True,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("differences", JSON_DOCUMENT, nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_regrades_job_id_jobs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("job_id", name=op.f("pk_regrades")),
    )
    op.create_index(
        "ix_regrades_queued",
        "regrades",
        ["queued_at"],
        postgresql_where=sa.text("status = 'queued'"),
        sqlite_where=sa.text("status = 'queued'"),
    )
    with op.batch_alter_table("reproduced_runs") as batch:
        batch.add_column(sa.Column("evidence", JSON_DOCUMENT, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("reproduced_runs") as batch:
        batch.drop_column("evidence")
    op.drop_index("ix_regrades_queued", table_name="regrades")
    op.drop_table("regrades")
