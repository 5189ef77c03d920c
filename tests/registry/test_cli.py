"""`hbench registry search|info|check|demo-dataset`, through Typer's CliRunner, on folders and a
site; the commands `info` prints, run in a shell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hbench.cli.registry import app
from registry.export import export_registry
from registry.loader import DEFAULT_DIR, load_registry

from .helpers import copy_default_registry

runner = CliRunner()


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves files without logging each request onto the CLI's captured output."""

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    for path, text in export_registry(load_registry()).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


@pytest.fixture(scope="module")
def site(export_dir: Path) -> Iterator[str]:
    """The export served over HTTP, as a published site serves it."""
    handler = partial(QuietHandler, directory=str(export_dir))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_search_reads_the_bundled_registry_by_default() -> None:
    result = runner.invoke(app, ["search", "terminal", "--json"])
    assert result.exit_code == 0, result.output
    assert [e["slug"] for e in json.loads(result.output)] == [
        "terminal-bench-2", "terminal-bench-2-sample",
    ]  # fmt: skip


def test_search_prints_one_line_per_benchmark() -> None:
    result = runner.invoke(app, ["search", "gpqa", "--harbor-only", "--axis", "science"])
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "gpqa-diamond\tGPQA Diamond\tadapter\tgpqa-diamond@1.0\taccuracy\t198 tasks"
    ]


@pytest.mark.parametrize("source", ["export", "source", "site"])
def test_info_reads_an_export_a_source_folder_or_a_site(
    source: str, export_dir: Path, site: str
) -> None:
    where = {"export": str(export_dir), "source": str(DEFAULT_DIR), "site": site}[source]
    result = runner.invoke(app, ["info", "humanevalfix", "--json", "--registry", where])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["paper"] == "https://arxiv.org/abs/2308.07124"
    assert record["harbor"]["dataset"] == "humanevalfix@1.0"


def test_info_as_text_names_the_facts() -> None:
    result = runner.invoke(app, ["info", "swe-bench-verified"])
    assert result.exit_code == 0
    assert "known score: 77.2 Claude Sonnet 4.5 (self_reported)" in result.output
    assert "license: MIT License; redistribution allowed" in result.output


def test_info_of_an_unknown_slug_fails_with_its_code(site: str) -> None:
    for extra in ([], ["--registry", site]):
        result = runner.invoke(app, ["info", "no-such-bench", *extra])
        assert result.exit_code == 1
        assert "(registry-benchmark-not-found)" in result.output


def test_a_missing_registry_fails_with_its_code(tmp_path: Path) -> None:
    result = runner.invoke(app, ["search", "--registry", str(tmp_path / "nowhere")])
    assert result.exit_code == 1
    assert "(registry-not-found)" in result.output


def test_check_passes_the_default_registry() -> None:
    result = runner.invoke(app, ["check", str(DEFAULT_DIR)])
    assert result.exit_code == 0, result.output
    assert "no problems" in result.output


def test_check_prints_every_problem_with_its_code(tmp_path: Path) -> None:
    root = copy_default_registry(tmp_path / "reg")
    board = root / "boards" / "hbench-demo.json"
    board.write_text(json.dumps({**json.loads(board.read_text()), "model": "gpt-99"}))
    registry_json = tmp_path / "registry.json"
    registry_json.write_text(json.dumps([{"name": "aime", "version": "1.0", "tasks": []}]))
    result = runner.invoke(app, ["check", str(root), "--harbor-registry", str(registry_json)])
    assert result.exit_code == 1
    assert "(registry-unknown-model)" in result.output
    assert "(registry-task-count-mismatch)" in result.output


@pytest.mark.harbor
def test_every_command_info_prints_for_the_demo_runs_as_printed(tmp_path: Path) -> None:
    """Pasted one after the other in a fresh folder: write the demo dataset, then run it with
    Harbor in the sandbox. The Docker line is that same line with Harbor's default
    environment; tests/docker runs the demo there."""
    shown = runner.invoke(app, ["info", "hbench-demo", "--json"])
    assert shown.exit_code == 0, shown.output
    lay_out, in_docker, in_sandbox = json.loads(shown.output)["commands"]
    assert in_sandbox == f"{in_docker} --env hbench.sandbox.environment:BubblewrapEnvironment"
    # The shell finds hbench and harbor where this Python's scripts are, as an installed
    # hbench's user's would.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PATH": path, "HARBOR_TELEMETRY": "0"}
    for command in (lay_out, in_sandbox):
        done = subprocess.run(  # noqa: S602 - the printed line, run as a user's shell would
            command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    (result,) = tmp_path.glob("jobs/*/result.json")
    trials = [json.loads(p.read_text()) for p in tmp_path.glob("jobs/*/*/result.json")]
    rewards = [trial["verifier_result"]["rewards"]["reward"] for trial in trials]
    assert sorted(rewards) == [0.0, 1.0, 1.0, 1.0, 1.0], result.read_text()
