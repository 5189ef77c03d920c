"""`hbench-app maintenance run`: the periodic task from the command line.

`--once` runs one round and exits, for cron; without it the task repeats every
`HBENCH_MAINTENANCE_INTERVAL` in the foreground. The service runs the same task itself.
"""

from __future__ import annotations

import time
from typing import Annotated

import typer

from app.bench.retention import policy_of
from app.blobs import open_blob_store
from app.cli_state import StateDir, settings_for
from app.db.migrate import migrated_database
from app.db.models import utcnow
from app.db.session import Database
from app.publish.maintenance import MaintenanceReport, run_maintenance
from app.settings import Settings
from hbench.cli.output import handled

maintenance = typer.Typer(help="Count issued runs, hide and purge job files.", no_args_is_help=True)


@maintenance.callback()
def _group() -> None:
    # A group, even with one command, so `run` reads the same as `data-repo write`.
    pass


@maintenance.command("run")
def run(
    once: Annotated[bool, typer.Option("--once", help="Run one round, then exit.")] = False,
    state_dir: StateDir = None,
) -> None:
    """Count issued runs that stopped waiting on their boards, hide the files of jobs past
    their publish window, purge deleted jobs' files, and sweep orphan archives."""
    with handled():
        settings = settings_for(state_dir)
        database = migrated_database(settings)
        try:
            while True:
                _round(settings, database)
                if once:
                    return
                time.sleep(settings.maintenance_interval.total_seconds())
        except KeyboardInterrupt:
            return
        finally:
            database.dispose()


def _round(settings: Settings, database: Database) -> MaintenanceReport:
    policy = policy_of(settings)
    blobs = open_blob_store(settings)
    report = run_maintenance(database, blobs, now=utcnow(), policy=policy)
    typer.echo(
        f"Counted {report.counted} issued runs; hid the files of {report.hidden} jobs; "
        f"purged {report.purged} deleted jobs' files and {report.orphans} orphan archives.",
        err=True,
    )
    return report
