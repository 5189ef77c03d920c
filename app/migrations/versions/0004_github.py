"""The GitHub App's tables: webhook deliveries taken in, OIDC tokens used, installations.

Revision ID: 0004
Revises: 0001
Create Date: 2026-12-02

A migration is a record of the past: it spells out its types here rather than import
them from `app.db.models`, which will move on.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def timestamp(name: str, *, nullable: bool = False) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "github_deliveries",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        timestamp("received_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_github_deliveries")),
    )
    op.create_index("ix_github_deliveries_received_at", "github_deliveries", ["received_at"])

    op.create_table(
        "oidc_used_tokens",
        sa.Column("jti", sa.String(length=255), nullable=False),
        timestamp("expires_at"),
        timestamp("used_at"),
        sa.PrimaryKeyConstraint("jti", name=op.f("pk_oidc_used_tokens")),
    )
    op.create_index("ix_oidc_used_tokens_expires_at", "oidc_used_tokens", ["expires_at"])

    op.create_table(
        "github_installations",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("account_id", sa.BigInteger(), nullable=False),
        sa.Column("account_login", sa.String(length=39), nullable=False),
        sa.Column("account_type", sa.String(length=32), nullable=False),
        sa.Column("repository_selection", sa.String(length=16), nullable=False),
        sa.Column("installed_by_id", sa.BigInteger(), nullable=True),
        sa.Column("installed_by_login", sa.String(length=39), nullable=True),
        timestamp("suspended_at", nullable=True),
        timestamp("created_at"),
        timestamp("updated_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_github_installations")),
    )
    op.create_index("ix_github_installations_account_id", "github_installations", ["account_id"])

    op.create_table(
        "github_install_repos",
        sa.Column("installation_id", sa.BigInteger(), nullable=False),
        sa.Column("repository_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("full_name", sa.String(length=140), nullable=False),
        sa.ForeignKeyConstraint(
            ["installation_id"],
            ["github_installations.id"],
            name=op.f("fk_github_install_repos_installation_id_github_installations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "installation_id", "repository_id", name=op.f("pk_github_install_repos")
        ),
    )
    op.create_index(
        "ix_github_install_repos_repository_id",
        "github_install_repos",
        ["repository_id"],
    )


def downgrade() -> None:
    # Dropping a table drops its indexes with it.
    op.drop_table("github_install_repos")
    op.drop_table("github_installations")
    op.drop_table("oidc_used_tokens")
    op.drop_table("github_deliveries")
