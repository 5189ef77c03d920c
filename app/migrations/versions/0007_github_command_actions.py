"""The job actions comment commands took, by delivery id, so a redelivery acts once.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30

A migration is a record of the past: it spells out its types here rather than import
them from `app.db.models`, which will move on.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "github_command_actions",
        sa.Column("delivery_id", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.Column("acted_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "delivery_id", "action", "job_id", name=op.f("pk_github_command_actions")
        ),
    )
    op.create_index("ix_github_command_actions_acted_at", "github_command_actions", ["acted_at"])


def downgrade() -> None:
    op.drop_index("ix_github_command_actions_acted_at", table_name="github_command_actions")
    op.drop_table("github_command_actions")
