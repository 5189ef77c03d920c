"""`hbench-app data-repo init DIR`: a new data repository that the Pages workflow can build."""

from __future__ import annotations

import subprocess
from pathlib import Path

from typer.testing import CliRunner

from app.cli import app
from app.site.workflow import WORKFLOW_PATH
from sitebuild.build import build_site

runner = CliRunner()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def test_init_commits_the_registry_and_the_pages_workflow(tmp_path: Path) -> None:
    repo = tmp_path / "data"

    created = runner.invoke(app, ["data-repo", "init", str(repo)])

    assert created.exit_code == 0, created.output
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert len(git(repo, "log", "--format=%H").split()) == 1
    tracked = git(repo, "ls-files").split()
    assert WORKFLOW_PATH in tracked
    assert any(p.startswith("registry/benchmarks/") for p in tracked)
    assert git(repo, "status", "--porcelain") == ""
    # What the Pages workflow runs: a site builds from the new repository as it is.
    report = build_site(repo, tmp_path / "site")
    assert report.files_written > 0
    assert (tmp_path / "site" / "index.html").is_file()


def test_init_refuses_a_folder_that_holds_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")

    refused = runner.invoke(app, ["data-repo", "init", str(tmp_path)])

    assert refused.exit_code == 1
    assert "(datarepo-exists)" in refused.output
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
