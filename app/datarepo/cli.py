"""`hbench-app data-repo` (also `python -m app.datarepo`): the data repository from the
command line.

`init DIR` creates a new data repository (the default registry and the Pages workflow in
a first commit on `main`). `write --once` drains the outbox and exits, for scripts and
crash-recovery checks; without it the writer keeps polling in the foreground, for a
deployment that runs it as its own process (with `HBENCH_WRITER_ENABLED=false` on the
service).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from app.cli_state import StateDir, settings_for
from app.datarepo.lock import writer_lock
from app.datarepo.outbox import counts
from app.datarepo.repo_init import create_data_repository, initial_files
from app.datarepo.service import writer_for
from app.datarepo.writer import DrainReport, Writer
from app.db.migrate import migrated_database
from app.github.tokens import InstallationTokens
from app.site.workflow import pages_workflow_files
from hbench.cli.output import handled

data_repo = typer.Typer(help="Write the public data repository.", no_args_is_help=True)


@data_repo.callback()
def _group() -> None:
    # A group, even with one command, so `write` is named the same from either entry
    # point (`hbench-app data-repo write`, `python -m app.datarepo write`).
    pass


@data_repo.command("init")
def init(
    path: Annotated[Path, typer.Argument(help="The new data repository's folder: new, or empty.")],
) -> None:
    """Create a data repository: the default registry and the Pages workflow that builds
    and deploys its site, in a first commit on main. Push it to GitHub to deploy."""
    with handled():
        create_data_repository(
            path, bare=False, files={**initial_files(), **pages_workflow_files()}
        )
    typer.echo(f"Created the data repository {path} (branch main, one commit).")


@data_repo.command("write")
def write(
    once: Annotated[bool, typer.Option("--once", help="Write what is pending, then exit.")] = False,
    state_dir: StateDir = None,
    wait: Annotated[
        float, typer.Option(help="Seconds to wait for another writer to finish.", min=0)
    ] = 60.0,
) -> None:
    """Apply the outbox's pending changes to the data repository, commit and push them.

    Only one writer runs at a time; the service runs one itself unless
    HBENCH_WRITER_ENABLED=false.
    """
    with handled():
        settings = settings_for(state_dir)
        database = migrated_database(settings)
        try:
            # In GitHub mode it pushes with the App's installation tokens, as the service's
            # own writer does: the deployment's writer process (docs/deployment.md).
            writer = writer_for(settings, database, InstallationTokens.from_settings(settings))
            if once:
                _write_once(writer, wait)
                return
            poll = settings.writer_poll_interval.total_seconds()
            typer.echo(f"Writing {settings.data_repository_git_url}; Ctrl-C stops.", err=True)
            try:
                while True:
                    _write_once(writer, wait)
                    time.sleep(poll)
            except KeyboardInterrupt:
                return
        finally:
            database.dispose()


def _write_once(writer: Writer, wait: float) -> DrainReport:
    with writer_lock(writer.database, wait=wait):
        report = writer.drain()
    with writer.database.session() as session:
        left = counts(session, max_attempts=writer.max_attempts)
    typer.echo(
        f"Applied {report.applied} changes in {report.commits} commits"
        f"{f' ({report.landed} more had landed already)' if report.landed else ''}; "
        f"{left.pending} pending, {left.given_up} given up.",
        err=True,
    )
    return report
