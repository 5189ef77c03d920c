"""Run the Alembic migrations in `app/migrations/` from code: at start-up, in tests, from the CLI.

There is no `alembic.ini`: the configuration is built here, around a connection the
caller opened, so the migrations run on exactly the engine the service uses.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine

MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration for our migrations, bound to a connection if given."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database up to a revision (the newest by default), in one transaction."""
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Take the database back down to a revision (`base` removes every table)."""
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), revision)


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for a database never migrated."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str:
    """The newest revision in `app/migrations/versions/`."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no migrations found in {MIGRATIONS_DIR}")
    return head
