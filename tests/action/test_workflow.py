"""The reusable workflow takes its code from its own commit, never from its caller: its first
step (hbench/action/workflow_source.py, as it is) reads the repository and commit the job
runs from the job's OIDC token, run here as the workflow runs it against the runner's token
endpoint; the checkout, the saved run and the resume are wired to it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import rsa

from hbench.action import workflow_source
from hbench.codes import CODE_NAMES
from tests.action.conftest import ROOT, WORKFLOW, WORKFLOW_SHA, TokenEndpoint, token_endpoint
from tests.action.runner import read_file_command
from tests.fakes.github import FakeGitHub
from tests.fakes.github.oidc import REMOVE

WORKFLOW_FILE = ROOT / ".github" / "workflows" / "run-benchmark.yml"
MODULE = Path(workflow_source.__file__)
STDLIB = {"__future__", "base64", "json", "os", "re", "sys", "urllib", "pathlib"}


def job() -> dict[str, Any]:
    run = yaml.safe_load(WORKFLOW_FILE.read_text())["jobs"]["run"]
    assert isinstance(run, dict)
    return run


def step(step_id: str) -> dict[str, Any]:
    return next(s for s in job()["steps"] if s.get("id") == step_id)


@pytest.fixture(scope="module")
def fake() -> FakeGitHub:
    keys = [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2)]
    return FakeGitHub(keys[0], keys[1:], url="https://token.actions.githubusercontent.com")


@pytest.fixture
def endpoint(fake: FakeGitHub) -> Iterator[TokenEndpoint]:
    claims = {"job_workflow_ref": WORKFLOW, "job_workflow_sha": WORKFLOW_SHA}
    with token_endpoint(lambda audience: fake.oidc.mint(audience, **claims)) as tokens:
        yield tokens


def run_first_step(tmp_path: Path, environ: dict[str, str]) -> tuple[int, str, dict[str, str]]:
    """The step's `run:` with bash, as the runner runs it: its exit code, output, outputs."""
    output = tmp_path / "output"
    output.write_text("")
    env = {"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(output), **environ}
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step("source")["run"]],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr, read_file_command(output)


def test_the_first_step_runs_the_module_as_it_is() -> None:
    embedded = f"python3 -I - <<'PY'\n{MODULE.read_text()}PY\n"
    assert step("source")["run"] == embedded, (
        f"the step `source` of {WORKFLOW_FILE.name} must run {MODULE.name} as it is: paste the "
        "module, indented, between its `<<'PY'` and `PY` lines"
    )
    # Before any checkout, with the runner's own Python: the standard library alone.
    text = MODULE.read_text().splitlines()
    imported = {
        line.split()[1].split(".")[0] for line in text if line.startswith(("import", "from"))
    }
    assert imported <= STDLIB, imported


def test_the_first_step_finds_the_workflows_own_repository_and_commit(
    tmp_path: Path, endpoint: TokenEndpoint
) -> None:
    code, printed, outputs = run_first_step(tmp_path, endpoint.environ())

    assert code == 0, printed
    assert outputs == {
        "repository": "hbench/hbench",
        "sha": WORKFLOW_SHA,
        "ref": "refs/tags/v0.3.0",
        "workflow": WORKFLOW,
        "runner-environment": "github-hosted",
    }
    # A token for no service, masked before anything else is printed.
    assert endpoint.audiences == [workflow_source.AUDIENCE]
    assert endpoint.authorizations == [f"bearer {endpoint.request_token}"]
    (token,) = endpoint.minted
    assert printed.splitlines()[0] == f"::add-mask::{token}"
    assert token not in "\n".join(printed.splitlines()[1:])


def test_without_id_token_write_the_first_step_says_what_to_add(tmp_path: Path) -> None:
    code, printed, outputs = run_first_step(tmp_path, {})

    assert code == 1
    assert outputs == {}
    assert printed.startswith("::error title=hbench%3A this workflow can't find its own code::")
    assert "`permissions: id-token: write` (action-oidc-unavailable)" in printed


def test_a_token_naming_no_workflow_commit_is_refused(tmp_path: Path, fake: FakeGitHub) -> None:
    claims = {"job_workflow_ref": WORKFLOW, "job_workflow_sha": REMOVE}
    with token_endpoint(lambda audience: fake.oidc.mint(audience, **claims)) as tokens:
        code, printed, outputs = run_first_step(tmp_path, tokens.environ())

    assert code == 1
    assert outputs == {}
    assert "(action-workflow-source-unknown)" in printed
    assert "see docs/rule-codes.md#action-workflow-source-unknown" in printed


def test_the_module_speaks_only_documented_codes() -> None:
    codes = {"action-oidc-unavailable", "action-oidc-failed", "action-workflow-source-unknown"}
    text = MODULE.read_text()
    assert all(f'"{code}"' in text for code in codes)
    assert codes <= CODE_NAMES


def test_the_checkout_is_of_that_repository_at_that_commit() -> None:
    names = [s.get("id") or s.get("name") for s in job()["steps"]]
    checkout = job()["steps"][1]
    assert names[0] == "source"
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"] == {
        "repository": "${{ steps.source.outputs.repository }}",
        "ref": "${{ steps.source.outputs.sha }}",
        "path": ".hbench-action",
        "persist-credentials": False,
    }
    assert step("hbench")["uses"] == "./.hbench-action"


def test_a_failed_run_is_saved_and_a_resume_downloads_it() -> None:
    steps = job()["steps"]
    download = next(s for s in steps if "download-artifact@" in s.get("uses", ""))
    save = next(s for s in steps if "upload-artifact@" in s.get("uses", ""))
    assert steps.index(download) < steps.index(step("hbench")) < steps.index(save)
    assert download["if"] == "inputs.resume != ''"
    assert download["with"] == {
        "name": "hbench-run",
        "path": "hbench-runs",
        "run-id": "${{ inputs.resume }}",
        "github-token": "${{ github.token }}",
    }
    assert (
        step("hbench")["with"]["resume-dir"] == "${{ inputs.resume != '' && 'hbench-runs' || '' }}"
    )
    assert save["if"] == "failure() || cancelled()"
    # The run's folders only: the token lives under RUNNER_TEMP, the checkout elsewhere.
    assert save["with"]["name"] == "hbench-run"
    assert save["with"]["path"] == "hbench-runs/"
    assert "include-hidden-files" not in save["with"]


def test_the_runner_and_the_time_limit_come_from_the_inputs() -> None:
    run = job()
    assert run["runs-on"] == (
        "${{ startsWith(inputs.runs-on, '[') && fromJSON(inputs.runs-on) || inputs.runs-on }}"
    )
    assert run["timeout-minutes"] == "${{ inputs.timeout-minutes }}"
    inputs = yaml.safe_load(WORKFLOW_FILE.read_text())[True]["workflow_call"]["inputs"]
    assert inputs["runs-on"]["default"] == "ubuntu-latest"
    assert inputs["timeout-minutes"] == {**inputs["timeout-minutes"], "type": "number",
                                         "default": 360}  # fmt: skip
