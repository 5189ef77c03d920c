"""The `hbench` command: joins the sub-commands in one place.

The groups (`jobs`, `registry`, `runs`, `bench`) are imported when one of them runs, not to
list them: `hbench --help` and `hbench push` import none of them, and `hbench jobs upload`
none but `jobs`. Each group's one-line help is written here too, beside the module that
holds the group; `tests/hbench/test_cli_start.py` holds the two to each other.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperGroup

from hbench import __version__
from hbench.cli import push
from hbench.cli.run import run

GROUPS = {
    "jobs": ("hbench.cli.jobs", "Resume, verify, pack and upload job folders."),
    "registry": (
        "hbench.cli.registry",
        "Search, pull and run the registry's benchmarks, and check registry folders.",
    ),
    "runs": ("hbench.cli.runs", "Issue runs from an hbench service, list them, and abandon them."),
    "bench": (
        "hbench.cli.bench",
        "Your bench: list, show, publish, withdraw and delete your uploaded jobs.",
    ),
}
"""Each group's module (whose `app` is the group) and its help, as `hbench --help` lists it."""


class DeferredGroup(TyperGroup):
    """A group listed by its name and help alone, its module imported when it runs."""

    module = ""

    def load(self) -> TyperGroup:
        group = typer.main.get_group(importlib.import_module(self.module).app)
        group.name = self.name
        return group


def deferred(module: str) -> type[DeferredGroup]:
    return type(f"Deferred_{module.rpartition('.')[2]}", (DeferredGroup,), {"module": module})


class Commands(TyperGroup):
    """`hbench`'s own group: a deferred group becomes itself when it is the one run."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if isinstance(command, DeferredGroup) and name is not None:
            command = self.commands[name] = command.load()
        return name, command, rest


app = typer.Typer(
    name="hbench",
    help="Run Harbor benchmarks, seal and verify job folders, and upload them to hbench.",
    no_args_is_help=True,
    add_completion=False,
    cls=Commands,
)
app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)(run)
for _name, (_module, _help) in GROUPS.items():
    app.add_typer(typer.Typer(cls=deferred(_module), help=_help), name=_name)
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
