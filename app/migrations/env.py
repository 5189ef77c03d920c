"""Alembic's entry point: runs the migrations on the connection `app.db.migrate` passes in."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, text

from app.db.models import Base

# Any fixed number: replicas starting together queue on this lock, so only the first
# migrates and the others find the database already at head.
MIGRATION_LOCK_KEY = 0x68_62_65_6E_63_68  # "hbench"


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        # SQLite can't ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
            )
        context.run_migrations()


connection = context.config.attributes.get("connection")
if context.is_offline_mode() or not isinstance(connection, Connection):
    raise RuntimeError("run migrations through app.db.migrate (hbench-app db upgrade)")
run_migrations(connection)
