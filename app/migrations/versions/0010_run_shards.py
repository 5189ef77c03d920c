"""Sharded issued runs: a run split into K shards keeps one row of its own (its whole spec,
its count on the board) and one row per shard, each with its spec, token and upload.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01

A migration is a record of the past: it spells out its types here rather than import
them from `app.db.models`, which will move on.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("issued_runs") as batch:
        batch.add_column(sa.Column("parent_id", sa.Uuid(), nullable=True))
        batch.add_column(sa.Column("shard_index", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("shard_count", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_issued_runs_parent_id_issued_runs"), "issued_runs", ["parent_id"], ["id"]
        )
        batch.create_index("ix_issued_runs_parent", ["parent_id"])


def downgrade() -> None:
    with op.batch_alter_table("issued_runs") as batch:
        batch.drop_index("ix_issued_runs_parent")
        batch.drop_constraint(op.f("fk_issued_runs_parent_id_issued_runs"), type_="foreignkey")
        batch.drop_column("shard_count")
        batch.drop_column("shard_index")
        batch.drop_column("parent_id")
