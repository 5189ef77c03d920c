"""The README's client table is held to the CLI: every `hbench` command has a row."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.core import TyperGroup
from typer.main import get_command

from hbench.cli.main import app

ROOT = Path(__file__).resolve().parents[1]


def command_names(group: typer.Typer) -> list[str]:
    """Every command line of the CLI, such as `hbench jobs verify`."""
    root = get_command(group)
    assert isinstance(root, TyperGroup)
    names: list[str] = []
    for name, command in root.commands.items():
        children = command.commands if isinstance(command, TyperGroup) else None
        if children:
            names += [f"hbench {name} {child}" for child in children]
        else:
            names.append(f"hbench {name}")
    return sorted(names)


def test_every_command_has_a_row_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| `hbench ")]
    missing = [name for name in command_names(app) if not any(f"`{name}" in r for r in rows)]
    assert missing == []
