"""Accounts, API tokens, issued runs, private jobs and the outbox of data-repo writes.

Revision ID: 0001
Revises:
Create Date: 2026-11-30

A migration is a record of the past: it spells out its types here rather than import
them from `app.db.models`, which will move on.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def timestamp(name: str, *, nullable: bool = False) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def status(name: str, *values: str) -> sa.Column[str]:
    kind = sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=16)
    return sa.Column("status", kind, nullable=False)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("login", sa.String(length=39), nullable=False),
        sa.Column("github_id", sa.BigInteger(), nullable=True),
        sa.Column("is_maintainer", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("is_denied", sa.Boolean(), server_default=sa.false(), nullable=False),
        timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
        sa.UniqueConstraint("github_id", name=op.f("uq_accounts_github_id")),
    )
    op.create_index(
        "ux_accounts_login", "accounts", [sa.literal_column("lower(login)")], unique=True
    )

    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        timestamp("created_at"),
        timestamp("last_used_at", nullable=True),
        timestamp("revoked_at", nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_api_tokens_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    op.create_index("ix_api_tokens_account_created", "api_tokens", ["account_id", "created_at"])

    op.create_table(
        "issued_runs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("board", sa.String(length=200), nullable=False),
        sa.Column("entry", sa.String(length=100), nullable=False),
        sa.Column("spec", JSON, nullable=False),
        sa.Column("spec_digest", sa.String(length=80), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        status("issued_run_status", "issued", "uploaded", "expired", "abandoned"),
        timestamp("issued_at"),
        timestamp("expires_at"),
        sa.Column("provenance", JSON, nullable=True),
        sa.CheckConstraint(
            "expires_at > issued_at", name=op.f("ck_issued_runs_expires_after_issue")
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_issued_runs_account_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_issued_runs")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_issued_runs_token_hash")),
    )
    op.create_index("ix_issued_runs_account_issued", "issued_runs", ["account_id", "issued_at"])
    op.create_index(
        "ix_issued_runs_account_board_status", "issued_runs", ["account_id", "board", "status"]
    )
    op.create_index("ix_issued_runs_board_status", "issued_runs", ["board", "status"])

    op.create_table(
        "jobs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("job_name", sa.String(length=255), nullable=False),
        status("job_status", "private", "published", "withdrawn", "deleted"),
        sa.Column("summary", JSON, nullable=False),
        sa.Column("checks", JSON, nullable=False),
        sa.Column("redactions", JSON, nullable=False),
        sa.Column("fingerprint", JSON, nullable=True),
        sa.Column("blob_key", sa.String(length=512), nullable=True),
        sa.Column("issued_run_id", sa.Uuid(), nullable=True),
        sa.Column("board", sa.String(length=200), nullable=True),
        sa.Column("entry", sa.String(length=100), nullable=True),
        timestamp("uploaded_at"),
        timestamp("published_at", nullable=True),
        timestamp("withdrawn_at", nullable=True),
        timestamp("deleted_at", nullable=True),
        sa.ForeignKeyConstraint(
            ["issued_run_id"], ["issued_runs.id"], name=op.f("fk_jobs_issued_run_id_issued_runs")
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["accounts.id"], name=op.f("fk_jobs_owner_id_accounts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sa.UniqueConstraint("issued_run_id", name=op.f("uq_jobs_issued_run_id")),
    )
    op.create_index("ix_jobs_owner_uploaded", "jobs", ["owner_id", "uploaded_at"])
    op.create_index("ix_jobs_job_id", "jobs", ["job_id"])
    op.create_index("ix_jobs_board_status", "jobs", ["board", "status"])

    op.create_table(
        "outbox",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        timestamp("created_at"),
        timestamp("applied_at", nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
    )
    op.create_index(
        "ix_outbox_pending",
        "outbox",
        ["id"],
        postgresql_where=sa.text("applied_at IS NULL"),
        sqlite_where=sa.text("applied_at IS NULL"),
    )


def downgrade() -> None:
    # Dropping a table drops its indexes with it.
    op.drop_table("outbox")
    op.drop_table("jobs")
    op.drop_table("issued_runs")
    op.drop_table("api_tokens")
    op.drop_table("accounts")
