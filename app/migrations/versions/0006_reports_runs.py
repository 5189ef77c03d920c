"""Reports, the runs API's records, rate-limit windows, and the `taken_down` job status.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03

A migration is a record of the past: it spells out its types here rather than import
them from `app.db.models`, which will move on.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
JOB_STATUSES = ("private", "published", "withdrawn", "deleted")


def timestamp(name: str, *, nullable: bool = False) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def status(name: str, *values: str) -> sa.Column[str]:
    kind = sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=16)
    return sa.Column("status", kind, nullable=False)


def job_statuses(*values: str) -> None:
    # SQLite can't alter a CHECK constraint: batch mode rebuilds the table around it.
    allowed = ", ".join(f"'{value}'" for value in values)
    with op.batch_alter_table("jobs") as batch:
        batch.drop_constraint(op.f("ck_jobs_job_status"), type_="check")
        batch.create_check_constraint(op.f("ck_jobs_job_status"), f"status IN ({allowed})")


def upgrade() -> None:
    job_statuses(*JOB_STATUSES, "taken_down")
    # Adding a nullable column needs no table rebuild, even on SQLite.
    op.add_column("jobs", sa.Column("taken_down_at", sa.DateTime(timezone=True), nullable=True))

    op.create_table(
        "reports",
        sa.Column("id", KEY, autoincrement=True, nullable=False),
        sa.Column("reporter_id", sa.Uuid(), nullable=False),
        sa.Column("entry", sa.String(length=100), nullable=True),
        sa.Column("run", sa.String(length=64), nullable=True),
        sa.Column("job_ref", sa.Uuid(), nullable=True),
        sa.Column("board", sa.String(length=200), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        status("report_status", "open", "dismissed", "taken_down"),
        timestamp("created_at"),
        timestamp("resolved_at", nullable=True),
        sa.Column("resolved_by_id", sa.Uuid(), nullable=True),
        sa.Column("reason", sa.String(length=32), nullable=True),
        sa.Column("note", sa.String(length=280), nullable=True),
        sa.ForeignKeyConstraint(
            ["reporter_id"], ["accounts.id"], name=op.f("fk_reports_reporter_id_accounts")
        ),
        sa.ForeignKeyConstraint(["job_ref"], ["jobs.id"], name=op.f("fk_reports_job_ref_jobs")),
        sa.ForeignKeyConstraint(
            ["resolved_by_id"], ["accounts.id"], name=op.f("fk_reports_resolved_by_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reports")),
    )
    op.create_index("ix_reports_status_created", "reports", ["status", "created_at"])

    op.create_table(
        "reproduced_runs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("benchmark_slug", sa.String(length=100), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("model_slug", sa.String(length=100), nullable=True),
        sa.Column("harness", sa.String(length=100), nullable=False),
        sa.Column("task_count", sa.Integer(), nullable=False),
        sa.Column("n_attempts", sa.Integer(), nullable=False),
        sa.Column("score", sa.Double(), nullable=False),
        sa.Column("metric", sa.String(length=50), nullable=False),
        sa.Column("tokens_used", sa.BigInteger(), nullable=True),
        sa.Column("cost_usd", sa.Double(), nullable=True),
        sa.Column("harbor_version", sa.String(length=50), nullable=True),
        sa.Column("cli_version", sa.String(length=50), nullable=True),
        sa.Column("results_hash", sa.String(length=64), nullable=True),
        sa.Column("task_rewards", JSON, nullable=True),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("user_id", sa.Uuid(), nullable=True),
        status("reproduced_run_status", "uploaded", "validated", "rejected"),
        timestamp("created_at"),
        sa.Column("job_ref", sa.Uuid(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["accounts.id"], name=op.f("fk_reproduced_runs_user_id_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["job_ref"], ["jobs.id"], name=op.f("fk_reproduced_runs_job_ref_jobs")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reproduced_runs")),
        sa.UniqueConstraint("job_ref", name=op.f("uq_reproduced_runs_job_ref")),
    )
    op.create_index("ix_reproduced_runs_created", "reproduced_runs", ["created_at"])
    op.create_index(
        "ix_reproduced_runs_benchmark_model", "reproduced_runs", ["benchmark_slug", "model_slug"]
    )

    op.create_table(
        "rate_limit_hits",
        sa.Column("id", KEY, autoincrement=True, nullable=False),
        sa.Column("bucket", sa.String(length=100), nullable=False),
        timestamp("at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rate_limit_hits")),
    )
    op.create_index("ix_rate_limit_hits_bucket_at", "rate_limit_hits", ["bucket", "at"])


def downgrade() -> None:
    op.drop_index("ix_rate_limit_hits_bucket_at", table_name="rate_limit_hits")
    op.drop_table("rate_limit_hits")
    op.drop_index("ix_reproduced_runs_benchmark_model", table_name="reproduced_runs")
    op.drop_index("ix_reproduced_runs_created", table_name="reproduced_runs")
    op.drop_table("reproduced_runs")
    op.drop_index("ix_reports_status_created", table_name="reports")
    op.drop_table("reports")
    # A job taken down goes back to the status it had before take-downs existed.
    op.execute("UPDATE jobs SET status = 'withdrawn' WHERE status = 'taken_down'")
    job_statuses(*JOB_STATUSES)
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("taken_down_at")
