"""`hbench-app site`: build the static Pages site from a checkout of the data repository."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from hbench.cli.output import handled

site = typer.Typer(help="Build the static Pages site.", no_args_is_help=True)


@site.callback()
def _group() -> None:
    # A group, even with one command, so the command reads `hbench-app site build`.
    pass


@site.command("build")
def build(
    data_repo: Annotated[
        Path,
        typer.Option(
            "--data-repo",
            help="A checkout of the data repository.",
            file_okay=False,
            exists=True,
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Where the site goes.", file_okay=False)],
    full: Annotated[
        bool, typer.Option("--full", help="Render every page, not only what changed.")
    ] = False,
    service_url: Annotated[
        str | None,
        typer.Option(help="The service's address, for the commands on the take-part page."),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Processes that render boards in a large build.", min=1)
    ] = os.cpu_count() or 1,
) -> None:
    """Build the site into OUT; a second build renders only what changed since."""
    # Here, not at the top: every `hbench-app` command, and every upload worker (which runs
    # the service's script again as it starts), would load the site builder for nothing.
    from sitebuild.build import build_site  # noqa: PLC0415
    from sitebuild.config import SiteConfig  # noqa: PLC0415

    with handled():
        report = build_site(
            data_repo, out, SiteConfig(service_url=service_url), full=full, workers=workers
        )
    kind = "full build" if report.full else "rebuild"
    typer.echo(
        f"Built {out} ({kind}): {report.units_rendered} parts rendered, "
        f"{report.files_written} files written, {report.files_removed} removed.",
        err=True,
    )
