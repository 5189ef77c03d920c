"""The `--state-dir` option every `hbench-app` command takes, the settings it makes, and
the database it opens: one definition for the service's command groups."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.db.migrate import upgrade
from app.db.session import Database
from app.main import prepare_state_dir
from app.settings import Settings, load_settings
from hbench.cli.output import fail
from hbench.errors import HbenchError

StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        help="The service's state directory: its SQLite file, blobs and data repository "
        "(default: $HBENCH_STATE_DIR or ./.state).",
        file_okay=False,
    ),
]


def settings_for(state_dir: Path | None) -> Settings:
    """The environment's settings, with the state directory given on the command line."""
    try:
        return load_settings(**({"state_dir": state_dir} if state_dir else {}))
    except HbenchError as error:
        raise fail(error) from None


def migrated_database(settings: Settings) -> Database:
    """The settings' database, its state directory made on first use (readable by its
    owner only, as the service makes it), brought up to the newest schema."""
    prepare_state_dir(settings)
    database = Database(settings.effective_database_url)
    try:
        upgrade(database.engine)
    except BaseException:
        database.dispose()
        raise
    return database
