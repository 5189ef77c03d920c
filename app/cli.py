"""The `hbench-app` command: start the service, make API tokens, migrate the database."""

from __future__ import annotations

# First: the collector stays off while the service's modules load (hbench/quick_start.py).
from hbench import quick_start  # isort: split

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from app.auth.service import create_api_token, ensure_account
from app.cli_state import StateDir, settings_for
from app.datarepo.cli import data_repo
from app.datarepo.service import start_background_writer
from app.db.migrate import current_revision, head_revision, migrated_database
from app.db.session import Database
from app.github.cli import github_app
from app.github.tokens import InstallationTokens
from app.http.server import APP_FACTORY, server_config
from app.http.server import run as run_server
from app.observe.metrics import MULTIPROCESS_VARIABLE, fresh_metrics_dir
from app.publish.cli import maintenance
from app.regrade.cli import embedded_worker, regrade
from app.reports.cli import deny, reports
from app.settings import Settings, env_name, is_login
from app.site.cli import site
from hbench.quick_exit import skip_last_collections

quick_start.loaded()
skip_last_collections()

app = typer.Typer(
    name="hbench-app",
    help="Run the hbench service: the API, its database and its stores.",
    no_args_is_help=True,
    add_completion=False,
)
tokens = typer.Typer(help="Make API tokens from the service's machine.", no_args_is_help=True)
db = typer.Typer(help="Manage the service's database.", no_args_is_help=True)
app.add_typer(tokens, name="tokens")
app.add_typer(db, name="db")
app.add_typer(data_repo, name="data-repo")
app.add_typer(site, name="site")
app.add_typer(maintenance, name="maintenance")
app.add_typer(reports, name="reports")
app.add_typer(deny, name="deny")
app.add_typer(regrade, name="regrade")
app.add_typer(github_app, name="github-app")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port to listen on.", min=0, max=65535)] = 8000,
    state_dir: StateDir = None,
) -> None:
    """Start the service (local mode unless HBENCH_MODE says otherwise), and its regrade
    worker as a process of its own (unless HBENCH_REGRADE_WORKER=separate).

    It answers with HBENCH_WORKERS processes: by default one on SQLite, one per core on
    PostgreSQL.

    On first start this creates the state directory, its SQLite database and its blob
    folder; every start brings the database up to the newest schema. Behind a proxy, set
    HBENCH_TRUSTED_PROXIES to its address, or no forwarded client address is believed.
    """
    settings = settings_for(state_dir)
    typer.echo(
        f"hbench service in {settings.mode} mode, state in {settings.state_dir.resolve()}: "
        f"http://{host}:{port}/docs",
        err=True,
    )
    # Migrate before the worker starts, so the two processes never migrate at once.
    migrated_database(settings).dispose()
    # uvicorn ends by raising the signal that stopped it again, under the handler it found:
    # this one, so the worker is stopped too (the default handler would end the process
    # before the block below could stop it).
    signal.signal(signal.SIGTERM, _stop)
    workers = settings.serve_workers
    with embedded_worker(settings):
        if workers == 1:
            # Here, not at the top: an upload worker runs this script again as it starts
            # (Python 3.12's fork server never imports `__main__` for it, python/cpython
            # #126631), and none of them needs the routes.
            from app.main import create_app  # noqa: PLC0415

            run_server(server_config(create_app(settings), settings, host=host, port=port))
            return
        # Each worker builds its app from the environment: this one, with the state
        # directory given here, and their metrics shared through files (app/observe/).
        # They share the writer's checkout too, so the writer runs here, for them all.
        os.environ[env_name("state_dir")] = str(settings.state_dir.resolve())
        os.environ[MULTIPROCESS_VARIABLE] = str(fresh_metrics_dir(settings))
        os.environ[env_name("writer_enabled")] = "false"
        os.environ[env_name("site_follow")] = "false"
        config = server_config(APP_FACTORY, settings, host=host, port=port, workers=workers)
        with supervisor_writer(settings):
            run_server(config)


@contextmanager
def supervisor_writer(settings: Settings) -> Iterator[None]:
    """The data-repository writer of a service of several workers, in the supervisor: it
    finds their changes by polling (`HBENCH_WRITER_POLL_INTERVAL`). `serve` has migrated
    the database already."""
    database = Database(settings.effective_database_url)
    writer = start_background_writer(settings, database, InstallationTokens.from_settings(settings))
    try:
        yield
    finally:
        if writer is not None:
            writer.stop()
        database.dispose()


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _check_login(value: str) -> str:
    if not is_login(value):
        raise typer.BadParameter("use a GitHub-style login: letters, digits and single hyphens")
    return value


def _check_name(value: str) -> str:
    value = value.strip()
    if not 1 <= len(value) <= 100:
        raise typer.BadParameter("give the token a name of 1 to 100 characters")
    return value


@tokens.command("create")
def tokens_create(
    login: Annotated[
        str, typer.Option(help="The account's login; created if new.", callback=_check_login)
    ],
    name: Annotated[str, typer.Option(help="What the token is for.", callback=_check_name)] = "cli",
    state_dir: StateDir = None,
) -> None:
    """Print a new API token for an account, creating the account if needed.

    Only the token goes to standard output, so `export HPG_API_TOKEN=$(hbench-app tokens
    create --login me)` works; it is shown this once.
    """
    database = migrated_database(settings_for(state_dir))
    try:
        with database.session() as session:
            account = ensure_account(session, login)
            row, token = create_api_token(session, account, name)
            typer.echo(
                f"Created API token {row.prefix}… ({row.name!r}) for {account.login}; "
                "it is shown only this once.",
                err=True,
            )
    finally:
        database.dispose()
    typer.echo(token)


@db.command("upgrade")
def db_upgrade(state_dir: StateDir = None) -> None:
    """Bring the database up to the newest schema (the service also does this on start)."""
    database = migrated_database(settings_for(state_dir))
    try:
        revision = current_revision(database.engine)
    finally:
        database.dispose()
    typer.echo(f"The database is at revision {revision} (newest: {head_revision()}).")
