"""Run the Alembic migrations in `app/migrations/` from code: at start-up, in tests, from the CLI.
`migrated_database` opens the service's database brought up to date, for the service and
every `hbench-app` command alike.

There is no `alembic.ini`: the configuration is built here, around a connection the
caller opened, so the migrations run on exactly the engine the service uses. Alembic is
imported where it is used: the upload workers import this module (through the
service's dependencies) and never migrate.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine

from app.db.session import Database
from app.settings import Settings

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration for our migrations, bound to a connection if given."""
    from alembic.config import Config  # noqa: PLC0415 - see the module's docstring

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database up to a revision (the newest by default), in one transaction."""
    from alembic import command  # noqa: PLC0415 - see the module's docstring

    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Take the database back down to a revision (`base` removes every table)."""
    from alembic import command  # noqa: PLC0415 - see the module's docstring

    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), revision)


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for a database never migrated."""
    from alembic.runtime.migration import MigrationContext  # noqa: PLC0415 - as above

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


@cache
def head_revision() -> str:
    """The newest revision in `app/migrations/versions/` (read once per process)."""
    from alembic.script import ScriptDirectory  # noqa: PLC0415 - as above

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no migrations found in {MIGRATIONS_DIR}")
    return head


def prepare_state_dir(settings: Settings) -> None:
    """Create the state directory and its blob folder on first start.

    Only the user running the service may read it: it holds private jobs.
    """
    settings.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    settings.blob_dir.mkdir(parents=True, exist_ok=True)


def migrated_database(settings: Settings) -> Database:
    """The settings' database, its state directory made on first use, brought up to the
    newest schema (the service on start, and every `hbench-app` command)."""
    prepare_state_dir(settings)
    database = Database(settings.effective_database_url)
    try:
        # At head already (every start but the first after an upgrade), Alembic, its
        # environment and every migration script need not be loaded at all.
        if current_revision(database.engine) != head_revision():
            upgrade(database.engine)
    except BaseException:
        database.dispose()
        raise
    return database
