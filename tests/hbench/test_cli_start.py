"""The client starts fast: `hbench --help` imports none of the command groups, nor httpx,
pydantic, Harbor or the registry; `hbench jobs upload` and `hbench push` import only what
they use; and the groups' help, written beside `hbench.cli.main`, is the groups' own."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hbench.cli.main import GROUPS, app

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
    assert sorted(modules & GROUP_MODULES) == []
    assert under(modules, "httpx", "pydantic", "harbor", "registry", "jinja2", "sqlalchemy") == []
    assert under(modules, "hbench.jobs", "hbench.runner", "hbench.service", "hbench.upload") == []
    # What is left of hbench is the CLI's own frame: the top-level commands and their output.
    assert {m for m in modules if m.startswith("hbench")} <= {
        "hbench", "hbench.cli", "hbench.cli.main", "hbench.cli.output", "hbench.cli.push",
        "hbench.cli.run", "hbench.errors", "hbench.push", "hbench.rules", "hbench.rule_docs",
        "hbench.limits",
    }  # fmt: skip


def test_jobs_upload_imports_what_it_uses_and_no_other_group(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-job"
    folder.mkdir()
    url = "http://127.0.0.1:9/api/bench/uploads"
    token = "hpg-run-token: hpr_0"  # never sent: the folder is no job
    modules = imported("jobs", "upload", str(folder), "--url", url, "-H", token, cwd=tmp_path)
    assert "hbench.cli.jobs" in modules
    assert {"hbench.jobs.manifest", "hbench.jobs.reader", "hbench.upload", "httpx"} <= modules
    assert sorted(modules & (GROUP_MODULES - {"hbench.cli.jobs"})) == []
    assert under(modules, "harbor", "registry", "jinja2", "sqlalchemy") == []
    assert under(modules, "hbench.runner", "hbench.demo", "hbench.issue", "hbench.runsummary") == []


def test_push_imports_no_group(tmp_path: Path) -> None:
    modules = imported("push", "--dry-run", str(tmp_path / "missing.json"), cwd=tmp_path)
    assert "hbench.runsummary" in modules and "registry.loader" in modules  # it uses them
    assert sorted(modules & GROUP_MODULES) == []
    assert under(modules, "harbor", "jinja2", "sqlalchemy", "hbench.runner", "hbench.upload") == []


@pytest.mark.parametrize("name", list(GROUPS))
def test_a_group_is_listed_with_its_own_help_and_runs_as_itself(name: str) -> None:
    module, listed = GROUPS[name]
    assert importlib.import_module(module).app.info.help == listed
    runner = CliRunner()
    top = runner.invoke(app, ["--help"], terminal_width=200)
    assert top.exit_code == 0
    words = " ".join(top.output.replace("│", " ").split())  # the panel's lines rejoined
    assert f" {name} {listed} " in words
    own = runner.invoke(app, [name, "--help"], terminal_width=200)
    assert own.exit_code == 0, own.output
    assert listed in own.output and f"hbench {name} [OPTIONS] COMMAND" in own.output
