"""The client starts fast: `hbench --help` imports none of the commands nor the groups, nor
httpx, pydantic, Harbor or the registry; `hbench jobs upload` and `hbench push` import only
what they use (the upload sends without httpx); and the commands' and groups' help, written
beside `hbench.cli.main`, is their own."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hbench.cli.main import COMMANDS, GROUPS, PLAIN, Listing, app

ROOT = Path(__file__).resolve().parents[2]
IMPORTED = """
import json, sys
from hbench.cli.main import app
try:
    app(sys.argv[1:], prog_name="hbench")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""
GROUP_MODULES = {module for module, _ in GROUPS.values()}
COMMAND_MODULES = {module for module, _, _ in COMMANDS.values()}


def imported(*args: str, cwd: Path = ROOT) -> set[str]:
    """The modules a fresh `hbench ARGS` has imported by the time it ends."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORTED, *args],
        capture_output=True, text=True, check=True, cwd=cwd, env={"COLUMNS": "100", "PATH": ""},
    )  # fmt: skip
    names: list[str] = json.loads(done.stdout.splitlines()[-1])
    return set(names)


def under(modules: set[str], *packages: str) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in packages or m in packages)


def test_help_imports_no_group_nor_any_heavy_library() -> None:
    modules = imported("--help")
    assert "hbench.cli.main" in modules
    assert sorted(modules & (GROUP_MODULES | COMMAND_MODULES)) == []
    assert under(modules, "httpx", "pydantic", "harbor", "registry", "jinja2", "sqlalchemy") == []
    assert under(modules, "rich", "markdown_it") == []  # Click's plain help, not Typer's Rich one
    assert "urllib.request" not in modules
    # What is left of hbench is the CLI's own frame, which lists the commands and groups,
    # and what spares its exit the last garbage collections.
    assert under(modules, "hbench") == [
        "hbench", "hbench.cli", "hbench.cli.main", "hbench.quick_exit"
    ]  # fmt: skip


def test_jobs_upload_imports_what_it_uses_and_no_other_group(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-job"
    folder.mkdir()
    url = "http://127.0.0.1:9/api/bench/uploads"
    token = "hpg-run-token: hpr_0"  # never sent: the folder is no job
    modules = imported("jobs", "upload", str(folder), "--url", url, "-H", token, cwd=tmp_path)
    assert "hbench.cli.jobs" in modules
    assert {"hbench.jobs.manifest", "hbench.jobs.reader", "hbench.upload"} <= modules
    assert sorted(modules & ((GROUP_MODULES | COMMAND_MODULES) - {"hbench.cli.jobs"})) == []
    assert under(modules, "harbor", "registry", "jinja2", "sqlalchemy", "httpx", "httpcore") == []
    assert under(modules, "hbench.runner", "hbench.demo", "hbench.issue", "hbench.runsummary") == []


def test_push_imports_no_group(tmp_path: Path) -> None:
    modules = imported("push", "--dry-run", str(tmp_path / "missing.json"), cwd=tmp_path)
    assert "hbench.runsummary" in modules and "registry.loader" in modules  # it uses them
    assert sorted(modules & (GROUP_MODULES | COMMAND_MODULES - {"hbench.cli.push"})) == []
    assert under(modules, "harbor", "jinja2", "sqlalchemy", "hbench.runner", "hbench.upload") == []


@pytest.mark.parametrize("name", list(GROUPS))
def test_a_group_is_listed_with_its_own_help_and_runs_as_itself(name: str) -> None:
    module, listed = GROUPS[name]
    group = importlib.import_module(module).app
    assert group.info.help == listed
    assert group.rich_markup_mode is PLAIN and group.info.cls is Listing
    runner = CliRunner()
    top = runner.invoke(app, ["--help"], terminal_width=200)
    assert top.exit_code == 0
    words = " ".join(top.output.split()) + " "  # the list's lines rejoined
    assert f" {name} {listed} " in words
    own = runner.invoke(app, [name, "--help"], terminal_width=200)
    assert own.exit_code == 0, own.output
    assert listed in own.output and f"hbench {name} [OPTIONS] COMMAND" in own.output


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_is_listed_with_its_own_help_and_runs_as_itself(name: str) -> None:
    module, function, listed = COMMANDS[name]
    docstring = getattr(importlib.import_module(module), function).__doc__
    assert docstring.splitlines()[0] == listed
    runner = CliRunner()
    top = runner.invoke(app, ["--help"], terminal_width=200)
    words = " ".join(top.output.split()) + " "
    assert f" {name} {listed} " in words
    own = runner.invoke(app, [name, "--help"], terminal_width=200)
    assert own.exit_code == 0, own.output
    assert f"hbench {name} [OPTIONS]" in own.output
    assert " ".join(docstring.split()[:12]) in " ".join(own.output.split())


def test_the_command_exits_without_the_last_garbage_collections() -> None:
    # The freeze runs after every exit handler registered after it (the upload workers'
    # shutdown): they have run by then.
    script = (
        "import atexit, gc\n"
        "at_start = gc.get_freeze_count()\n"  # what the interpreter froze itself
        "import hbench.cli.main\n"
        "frozen = lambda: gc.get_freeze_count() > at_start\n"
        "atexit.register(lambda: print('frozen before the others:', frozen()))\n"
        "atexit._run_exitfuncs()\n"
        "print('frozen after them all:', frozen())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout == "frozen before the others: False\nfrozen after them all: True\n"


def test_a_groups_list_shows_each_commands_first_paragraph_whole() -> None:
    # 80 columns: Click's own list would cut `verify`'s line short with "...".
    shown = CliRunner().invoke(app, ["jobs", "--help"], terminal_width=80)
    assert shown.exit_code == 0, shown.output
    listing = " ".join(shown.output.split("Commands:")[1].split())
    assert "verify Check a job: unchanged since it was sealed, finished, and every planned " \
        "trial has a result. pack" in listing  # fmt: skip
