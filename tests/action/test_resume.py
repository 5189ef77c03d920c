"""A long run that runs out of time survives: the root action, issued with a workflow run's
OIDC token and run for real in the runner image, is cancelled part way as GitHub cancels a
job at its `timeout-minutes`; what the reusable workflow saves as its artifact comes back
in a new workflow run, where a caller's own composite action chains the three steps: the
issue step resumes the run (a new run token, the old one refused), the run step continues
the job with `hbench jobs resume`, and the upload step sends it bound to the new workflow
run; a token of another workflow run is refused (`oidc-upload-mismatch`). A resumed run is
issued, never run on CI."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from app.db.models import IssuedRun, IssuedRunStatus, Job
from hbench.action.container import compose_project
from hbench.jobs.verification import verify
from tests.action.conftest import IMAGE, ROOT, CallerGitHub, chown_tree, read_json

pytestmark = pytest.mark.docker

FIRST_RUN, SECOND_RUN = 5201, 5202
RUNNER_UID = 1001
"""The runner's user on GitHub's hosted runners: the second job's download is its own."""
CALLER = """\
name: a caller's own steps
description: resume a saved run with hbench's steps, one by one
inputs:
  service-url:
    description: the service
    required: true
runs:
  using: composite
  steps:
    - id: issue
      uses: ./hbench/actions/issue
      with:
        service-url: ${{ inputs.service-url }}
        agent: oracle
        resume-dir: hbench-runs
    - id: run
      uses: ./hbench/actions/run
      with:
        run-dir: ${{ steps.issue.outputs.run-dir }}
        image: hbench-runner:test
outputs:
  run-dir:
    description: the run's folder
    value: ${{ steps.issue.outputs.run-dir }}
  token-file:
    description: the new run token's file
    value: ${{ steps.issue.outputs.token-file }}
  job-dir:
    description: the sealed job
    value: ${{ steps.run.outputs.job-dir }}
  resumed:
    description: whether the job was continued
    value: ${{ steps.run.outputs.resumed }}
"""


def finished_trials(job_dir: Path) -> set[str]:
    return {p.parent.name for p in job_dir.glob("*/result.json")}


def compose_leftovers(docker: str, job_dir: Path) -> list[str]:
    """The containers still there of Compose projects of the job's trials."""
    listed = subprocess.run(
        [docker, "ps", "--all", "--filter", "label=com.docker.compose.project",
         "--format", '{{.Label "com.docker.compose.project"}}'],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    trials = {compose_project(p.name) for p in job_dir.iterdir() if p.is_dir()}
    return [project for project in listed if any(project.startswith(t) for t in trials)]


def test_a_run_out_of_time_is_resumed_in_a_new_workflow_run_and_uploaded_bound_to_it(
    caller: CallerGitHub, runner_image: str, tmp_path: Path
) -> None:
    service = caller.service

    # The first workflow run: cancelled once a trial has finished, as at its time limit.
    caller.workflow_run(FIRST_RUN)
    first = caller.runner_job("first")
    runs = first.workspace / "hbench-runs"
    cancelled = first.runner(cancel_when=lambda: any(runs.glob("*/jobs/*/*/result.json"))).run(
        ROOT,
        # As the reusable workflow runs it: a failed run stays issued, for its resume.
        {"service-url": service.url, "board": "hbench-demo-quick", "agent": "oracle",
         "image": IMAGE, "concurrent-trials": "1", "on-failure": "keep"},
    )  # fmt: skip

    assert cancelled.cancelled and not cancelled.succeeded, cancelled.log
    (error,) = cancelled.errors
    assert "was stopped part way" in error.message
    assert "(action-run-failed)" in error.message
    (run_dir,) = runs.iterdir()
    details = read_json(run_dir / "run.json")
    job_dir = run_dir / "jobs" / details["job_name"]
    done_before = finished_trials(job_dir)
    assert done_before
    assert not (job_dir / "manifest.json").exists()
    assert compose_leftovers(runner_image, job_dir) == []  # the step removed them
    (old_token_file,) = (first.temp / "hbench").glob("*.run-token")
    old_token = old_token_file.read_text().strip()

    # What the workflow's `if: failure() || cancelled()` step saves (hidden files aside, as
    # upload-artifact does): the run's folder, with no token in it.
    artifact = tmp_path / "artifact"
    shutil.copytree(runs, artifact, ignore=shutil.ignore_patterns(".*"))
    for path in artifact.rglob("*"):
        assert not path.is_file() or old_token.encode() not in path.read_bytes(), path

    # The second workflow run downloads it (`resume`) and continues with the steps.
    caller.workflow_run(SECOND_RUN)
    second = caller.runner_job("second")
    shutil.copytree(artifact, second.workspace / "hbench-runs")
    chown_tree(second.workspace / "hbench-runs", RUNNER_UID)
    (second.workspace / "caller").mkdir(exist_ok=True)
    (second.workspace / "caller" / "action.yml").write_text(CALLER)
    if not (second.workspace / "hbench").exists():
        (second.workspace / "hbench").symlink_to(ROOT)  # where a checkout of hbench would be
    resumed = second.runner().run(second.workspace / "caller", {"service-url": service.url})

    assert resumed.succeeded, resumed.log
    assert resumed.outputs["resumed"] == "true"
    assert resumed.outputs["run-dir"] == str(second.workspace / "hbench-runs" / run_dir.name)
    job_dir = Path(resumed.outputs["job-dir"])
    assert verify(job_dir) == []
    assert done_before <= finished_trials(job_dir)  # continued, not run again
    assert len(finished_trials(job_dir)) == 2  # the quick board's two tasks
    assert {p.stat().st_uid for p in job_dir.rglob("*")} == {RUNNER_UID}
    new_token = Path(resumed.outputs["token-file"]).read_text().strip()
    assert new_token != old_token
    assert new_token not in resumed.log

    def upload(token_file: Path) -> tuple[bool, list[str], dict[str, str]]:
        done = second.runner().run(
            ROOT / "actions" / "upload",
            {"service-url": service.url, "job-dir": str(job_dir),
             "token-file": str(token_file), "run-dir": resumed.outputs["run-dir"],
             "on-failure": "keep"},
        )  # fmt: skip
        codes = [e.message.split(" — ")[0].rsplit("(", 1)[1].rstrip(")") for e in done.errors]
        return done.succeeded, codes, done.outputs

    # The earlier workflow run's token stopped working; the earlier run can't bind it either.
    kept = tmp_path / "old.run-token"
    kept.write_text(old_token + "\n")
    assert upload(kept)[:2] == (False, ["run-token-invalid"])
    caller.workflow_run(FIRST_RUN)
    assert upload(Path(resumed.outputs["token-file"]))[:2] == (False, ["oidc-upload-mismatch"])

    caller.workflow_run(SECOND_RUN)
    accepted, codes, outputs = upload(Path(resumed.outputs["token-file"]))

    assert accepted, codes
    assert outputs["evidence"].split() == ["self-reported", "issued"]
    with service.database.session() as db:
        run = db.get(IssuedRun, uuid.UUID(details["run_id"]))
        assert run is not None
        assert run.status is IssuedRunStatus.UPLOADED
        job = db.scalars(select(Job).where(Job.id == uuid.UUID(outputs["job-id"]))).one()
        assert job.issued_run_id == run.id
