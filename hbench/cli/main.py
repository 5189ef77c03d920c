"""The `hbench` command: joins the sub-commands in one place."""

from __future__ import annotations

import typer

from hbench import __version__
from hbench.cli import bench, jobs, push, registry, runs
from hbench.cli.run import run

app = typer.Typer(
    name="hbench",
    help="Run Harbor benchmarks, seal and verify job folders, and upload them to hbench.",
    no_args_is_help=True,
    add_completion=False,
)
app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)(run)
app.add_typer(jobs.app, name="jobs")
app.add_typer(registry.app, name="registry")
app.add_typer(runs.app, name="runs")
app.add_typer(bench.app, name="bench")
app.command("push")(push.push_command)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hbench {__version__}")
        raise typer.Exit


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Run Harbor benchmarks, seal and verify job folders, and upload them to hbench."""
