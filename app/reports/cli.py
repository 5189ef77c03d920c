"""`hbench-app reports …` and `hbench-app deny …`: the maintainers' queue and deny list from
the service's machine, on its database directly (the same functions the admin API calls)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.cli_state import StateDir, settings_for
from app.db.migrate import migrated_database
from app.db.models import Account, utcnow
from app.reports import service
from app.reports.policy import REASONS
from app.settings import Settings
from hbench.cli.output import handled

reports = typer.Typer(help="The maintainers' report queue and take-downs.", no_args_is_help=True)
deny = typer.Typer(
    help="The deny list: accounts that can't be issued runs or upload.", no_args_is_help=True
)


@contextmanager
def database_session(state_dir: Path | None) -> Iterator[tuple[Session, Settings]]:
    """A session on the service's database, brought up to the newest schema first."""
    settings = settings_for(state_dir)
    database = migrated_database(settings)
    try:
        with database.session() as session:
            yield session, settings
    finally:
        database.dispose()


def acting_maintainer(session: Session, settings: Settings) -> Account:
    # Whoever runs commands on the service's machine runs the service: they act as its
    # local user, recorded as the one who resolved the report.
    return ensure_account(session, settings.local_login, is_maintainer=True)


@reports.command("list")
def list_reports(
    open_only: Annotated[bool, typer.Option("--open", help="Only open reports.")] = False,
    state_dir: StateDir = None,
) -> None:
    """List reports, open ones first: number, status, run, and what's wrong."""
    with handled(), database_session(state_dir) as (session, _):
        rows = service.list_reports(session, open_only=open_only)
        for report, reporter in rows:
            target = " ".join(
                f"{k}={v}" for k, v in (("entry", report.entry), ("run", report.run)) if v
            )
            typer.echo(
                f"#{report.id}\t{report.status.value}\t{report.created_at:%Y-%m-%d %H:%M}\t"
                f"{target}\tby {reporter}\t{report.message}"
            )
        if not rows:
            typer.echo("No reports.", err=True)


@reports.command("dismiss")
def dismiss(number: int, state_dir: StateDir = None) -> None:
    """Leave the run as it is and close report NUMBER."""
    with handled(), database_session(state_dir) as (session, settings):
        service.dismiss(session, acting_maintainer(session, settings), number, now=utcnow())
    typer.echo(f"Dismissed report {number}.")


@reports.command("take-down")
def take_down(
    number: int,
    reason: Annotated[str, typer.Option("--reason", help=f"One of: {', '.join(REASONS)}.")],
    note: Annotated[str, typer.Option("--note", help="For the audit log: 280 characters.")],
    run: Annotated[
        str | None, typer.Option("--run", help="The run, when the report names several.")
    ] = None,
    state_dir: StateDir = None,
) -> None:
    """Take down the run report NUMBER is about, for a reason and with a short note."""
    with handled(), database_session(state_dir) as (session, settings):
        done = service.take_down_report(
            session, acting_maintainer(session, settings), number,
            reason=reason, note=note, run=run, now=utcnow(),
        )  # fmt: skip
    typer.echo(f"Took down run {done.run_id} on {done.board} ({done.reason}).")


@deny.command("add")
def deny_add(login: str, state_dir: StateDir = None) -> None:
    """Put LOGIN on the deny list."""
    with handled(), database_session(state_dir) as (session, settings):
        service.deny(session, login, settings)
    typer.echo(f"Denied {login}.")


@deny.command("remove")
def deny_remove(login: str, state_dir: StateDir = None) -> None:
    """Take LOGIN off the deny list."""
    with handled(), database_session(state_dir) as (session, _):
        service.allow(session, login)
    typer.echo(f"Allowed {login} again.")


@deny.command("list")
def deny_list(state_dir: StateDir = None) -> None:
    """List the denied logins, one a line."""
    with handled(), database_session(state_dir) as (session, _):
        for login in service.denied(session):
            typer.echo(login)
