"""The `hbench` command: joins the sub-commands in one place.

The commands (`run`, `push`) and the groups (`jobs`, `registry`, `runs`, `bench`) are
imported when one of them runs, not to list them: `hbench --help` imports none of them,
`hbench push` none but `push`, and `hbench jobs upload` none but `jobs`. Each one's
one-line help is written here too, beside the module that holds it;
`tests/hbench/test_cli_start.py` holds the two to each other.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from hbench import __version__
from hbench.quick_exit import skip_last_collections

skip_last_collections()

COMMANDS = {
    "run": (
        "hbench.cli.run",
        "run",
        "Run a benchmark from its spec with Harbor, then seal the job folder.",
    ),
    "audit": (
        "hbench.cli.audit",
        "audit_command",
        "Recompute every board from a clone of the data repository and report what differs.",
    ),
    "push": (
        "hbench.cli.push",
        "push_command",
        "Push a run's score summary: the figures only, never outputs, transcripts or keys.",
    ),
}
"""Each command's module, its function, and its help as `hbench --help` lists it."""
CONTEXT_SETTINGS = {"run": {"allow_extra_args": True, "ignore_unknown_options": True}}
"""A command's own settings: `hbench run` hands the options it does not know to Harbor."""

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
PLAIN = None
"""The markup mode of every `hbench` Typer, the groups' own included: Click's plain help and
error text. Typer's Rich help imports Rich's Markdown and Markdown-It on every `--help` and
every usage error, about half of `hbench --help`'s time (docs/benchmarks.md)."""


class Listing(TyperGroup):
    """A group of `hbench`: its help lists each command with the first paragraph of the
    command's help, wrapped whole, where Click's would cut it at the line's end."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                first = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
                rows.append((name, " ".join(first.split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class DeferredGroup(TyperGroup):
    """A group listed by its name and help alone, its module imported when it runs."""

    module = ""

    def load(self) -> TyperGroup:
        group = typer.main.get_group(importlib.import_module(self.module).app)
        group.name = self.name
        return group


def deferred(module: str) -> type[DeferredGroup]:
    return type(f"Deferred_{module.rpartition('.')[2]}", (DeferredGroup,), {"module": module})


class DeferredCommand(TyperCommand):
    """A command listed by its name and help alone, its function imported when it runs."""

    module = ""
    function = ""

    def load(self) -> TyperCommand:
        single = typer.Typer(add_completion=False, rich_markup_mode=PLAIN)
        function = getattr(importlib.import_module(self.module), self.function)
        settings = CONTEXT_SETTINGS.get(self.name or "")
        single.command(self.name, context_settings=settings)(function)
        command = typer.main.get_command(single)
        assert isinstance(command, TyperCommand)  # noqa: S101 - one command, no group
        return command


def deferred_command(module: str, function: str) -> type[DeferredCommand]:
    name = f"Deferred_{function}"
    return type(name, (DeferredCommand,), {"module": module, "function": function})


def _listed() -> None:
    """Stands in for a deferred command until it runs."""


class Commands(Listing):
    """`hbench`'s own group: a deferred group or command becomes itself when it is the one
    run."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if isinstance(command, DeferredGroup | DeferredCommand) and name is not None:
            command = self.commands[name] = command.load()
        return name, command, rest


app = typer.Typer(
    name="hbench",
    help="Run Harbor benchmarks, seal and verify job folders, and upload them to hbench.",
    no_args_is_help=True,
    add_completion=False,
    cls=Commands,
    rich_markup_mode=PLAIN,
)
for _name, (_module, _function, _help) in COMMANDS.items():
    app.command(_name, cls=deferred_command(_module, _function), help=_help)(_listed)
for _name, (_module, _help) in GROUPS.items():
    app.add_typer(
        typer.Typer(cls=deferred(_module), help=_help, rich_markup_mode=PLAIN), name=_name
    )


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
