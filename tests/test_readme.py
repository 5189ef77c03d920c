"""The README is held to the code: every `hbench` command has a row in the client table,
and the Layout table names every folder of the repository."""

from __future__ import annotations

import re
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


def test_the_layout_table_names_every_folder() -> None:
    """Each top-level folder (but hidden ones and what .gitignore keeps out) has a row."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([^`/]+)/` \|", section, flags=re.MULTILINE))
    gitignore = (ROOT / ".gitignore").read_text().splitlines()
    ignored = {line.strip("/") for line in gitignore if line.startswith("/")}
    folders = {
        path.name
        for path in ROOT.iterdir()
        if path.is_dir()
        and not path.name.startswith(".")
        and path.name not in ignored
        and not path.name.endswith(".egg-info")
    }
    assert listed == folders
