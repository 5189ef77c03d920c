"""The `--state-dir` option every `hbench-app` command takes, and the settings it makes:
one definition for the service's command groups (`app.db.migrate.migrated_database` opens the
database they work on)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
