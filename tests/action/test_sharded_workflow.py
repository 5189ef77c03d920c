"""The reusable workflow with `shards: 3`, its jobs run by the local runner as GitHub runs
them: one issues the demo board's run in three shards with the job's OIDC token, a matrix
of three jobs each claims, runs (for real, in the runner image, with Harbor's docker
environment) and uploads one shard on a runner of its own, and a last job reports the
merged run in its step summary. Published, the run is on the board once, run on CI, and
counted once.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from app.db.models import IssuedRun, IssuedRunStatus, Job
from app.db.summary import JobSummary
from tests.action.conftest import IMAGE, ROOT, CallerGitHub
from tests.action.runner import ActionRunner
from tests.action.workflow_runner import SKIP_REMOTE, WorkflowRun, place_checkout, run_workflow

WORKFLOW_FILE = ROOT / ".github" / "workflows" / "run-benchmark.yml"
RUN_ID = 4301
BOARD = "hbench-demo"
TASKS = ["count-lines", "hello-file", "prime-factor", "reverse-words", "sum-numbers"]


@pytest.fixture(scope="module")
def ran(caller: CallerGitHub, runner_image: str) -> Iterator[WorkflowRun]:
    del runner_image  # built: the pinned action runs it by its tag
    caller.workflow_run(RUN_ID)

    def runner_for(name: str) -> ActionRunner:
        """Each job on a runner of its own, the workflow's checkout placed in its workspace:
        the shards run at once."""
        job = caller.runner_job(name, own_runner=True)
        place_checkout(job.workspace, IMAGE)
        return ActionRunner(job.workspace, job.temp, job.env, skip_remote=SKIP_REMOTE)

    inputs: dict[str, Any] = {
        "service-url": caller.service.url,
        "board": BOARD,
        "agent": "oracle",
        "network": "host",
        "shards": 3,
        "shard-runs-on": '["self-hosted", "linux", "x64", "shard"]',
        "shard-timeout-minutes": 30,
    }
    yield run_workflow(WORKFLOW_FILE, inputs, {}, runner_for)


@pytest.mark.docker
def test_a_three_shard_matrix_runs_uploads_and_reports_one_merged_run(
    ran: WorkflowRun, caller: CallerGitHub
) -> None:
    assert list(ran.jobs) == ["issue", "shard", "report"]  # `run`, the unsharded job, skipped
    assert ran.needs["run"]["result"] == "skipped"
    for job_run in [run for runs in ran.jobs.values() for run in runs]:
        assert job_run.result.succeeded, job_run.result.log
    shards = json.loads(ran.needs["issue"]["outputs"]["shards"])
    assert [s["index"] for s in shards] == [1, 2, 3]
    assert sorted(t for s in shards for t in s["tasks"]) == TASKS

    # Each shard on a runner of its own, with the shard inputs' labels and time limit.
    matrix = ran.jobs["shard"]
    assert [job.name for job in matrix] == ["shard-1", "shard-2", "shard-3"]
    assert {json.dumps(job.runs_on) for job in matrix} == {
        '["self-hosted", "linux", "x64", "shard"]'
    }
    assert {job.timeout_minutes for job in matrix} == {30}
    assert len({str(job.result.job.temp) for job in matrix}) == 3
    assert len({str(job.result.job.workspace) for job in matrix}) == 3
    for job, shard in zip(matrix, shards, strict=True):
        assert job.matrix == {"shard": shard}
        assert f"claimed shard {shard['run_id']}" in job.result.log
        assert f"| entry | `{ran.needs['issue']['outputs']['submission']}`" in job.result.summary
        # Bound to this workflow run as the run was issued: each shard earns run on CI.
        assert "| evidence | self-reported, issued, run-on-ci |" in job.result.summary

    (report,) = ran.jobs["report"]
    outputs = ran.needs["report"]["outputs"]
    job_id = str(uuid.UUID(outputs["job-id"]))
    service = caller.service
    assert outputs["page"] == f"{service.url}/bench/jobs/{job_id}"
    summary = report.result.summary
    assert "| shards | 3 of 3 uploaded |" in summary
    assert f"| score | {float(outputs['score']):.3f}, the merged run's |" in summary
    assert f"[{job_id}]({outputs['page']})" in summary

    with service.database.session() as session:
        run = session.get(IssuedRun, uuid.UUID(ran.needs["issue"]["outputs"]["run-id"]))
        assert run is not None and run.status is IssuedRunStatus.UPLOADED
        merged = session.get(Job, uuid.UUID(job_id))
        assert merged is not None and merged.issued_run_id == run.id
        shard_jobs = session.scalars(
            select(Job).join(IssuedRun, Job.issued_run_id == IssuedRun.id)
            .where(IssuedRun.parent_id == run.id)
        ).all()  # fmt: skip
        assert len(shard_jobs) == 3
        merged_summary = JobSummary.of(merged)
    assert merged_summary.task_names == TASKS
    assert merged_summary.ci is not None and merged_summary.ci.run_on_ci
    assert merged_summary.ci.run_id == RUN_ID
    rewards = [r or 0.0 for values in merged_summary.results.values() for r in values]
    assert float(outputs["score"]) == pytest.approx(sum(rewards) / len(TASKS), abs=1e-4)


@pytest.mark.docker
def test_the_merged_run_is_on_the_board_once_run_on_ci_and_counted_once(
    ran: WorkflowRun, caller: CallerGitHub
) -> None:
    service = caller.service
    job_id = ran.needs["report"]["outputs"]["job-id"]
    run_id = ran.needs["issue"]["outputs"]["run-id"]
    with service.database.session() as session:
        shard_ids = [
            str(job.id)
            for job in session.scalars(
                select(Job).join(IssuedRun, Job.issued_run_id == IssuedRun.id)
                .where(IssuedRun.parent_id == uuid.UUID(run_id))
            )
        ]  # fmt: skip
    headers = {"authorization": f"Bearer {service.api_token}"}
    alone = httpx.post(f"{service.url}/api/bench/jobs/{shard_ids[0]}/publish", headers=headers)
    assert (alone.status_code, alone.json()["code"]) == (409, "run-shard-part")
    published = httpx.post(f"{service.url}/api/bench/jobs/{job_id}/publish", headers=headers)
    assert published.status_code == 200, published.text

    # The service's writer commits the run and rebuilds its site in the background.
    board: dict[str, Any] = {}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        answer = httpx.get(f"{service.url}/site/boards/{BOARD}/index.json", timeout=10)
        board = answer.json() if answer.status_code == 200 else {}
        if any(r["id"] == job_id for r in board.get("runs", [])):
            break
        time.sleep(0.5)
    runs = [r for r in board.get("runs", []) if r["entry"] == published.json()["entry"]]
    assert [r["id"] for r in runs] == [job_id], board
    assert "run-on-ci" in runs[0]["evidence"] and runs[0]["issued"]
    (row,) = [r for r in board["rows"] if r["entry"] == runs[0]["entry"]]
    assert (row["runsIssued"], row["runsIssuedPublic"], row["runsPublic"]) == (1, 1, 1), row


def test_a_shard_is_claimed_only_by_a_job_of_the_workflow_run_that_issued_it(
    caller: CallerGitHub,
) -> None:
    """Without Docker: the issue step with `shards`, then the claim a matrix job makes."""
    caller.workflow_run(RUN_ID + 1)
    issuing = caller.runner_job("claims-issue")
    issued = ActionRunner(issuing.workspace, issuing.temp, issuing.env).run(
        ROOT / "actions" / "issue",
        {"service-url": caller.service.url, "board": BOARD, "agent": "oracle", "shards": "2"},
    )
    assert issued.succeeded, issued.log
    shards = json.loads(issued.outputs["shards"])
    assert [s["index"] for s in shards] == [1, 2]
    assert issued.outputs["token-file"] == ""  # the shards' tokens are their jobs' to claim
    assert not list(issuing.temp.glob("hbench/*.run-token"))

    def claim(name: str) -> Any:
        job = caller.runner_job(name)
        return ActionRunner(job.workspace, job.temp, job.env).run(
            ROOT / "actions" / "issue",
            {"service-url": caller.service.url, "agent": "oracle", "shard": shards[0]["run_id"]},
        )

    caller.workflow_run(RUN_ID + 2)  # another workflow run's job
    refused = claim("claims-other")
    assert not refused.succeeded
    (error,) = refused.errors
    assert "(run-shard-mixed)" in error.message
    assert f"run_id {RUN_ID + 2}, issued with {RUN_ID + 1}" in error.message

    caller.workflow_run(RUN_ID + 1)
    claimed = claim("claims-same")
    assert claimed.succeeded, claimed.log
    (token_file,) = Path(claimed.outputs["token-file"]).parent.glob("*.run-token")
    assert token_file.name == f"{shards[0]['job_name']}.run-token"
    spec = json.loads((Path(claimed.outputs["run-dir"]) / "spec.json").read_text())
    assert spec["datasets"][0]["task_names"] == shards[0]["tasks"]

    job = caller.runner_job("claims-report")
    report = ActionRunner(job.workspace, job.temp, job.env).run(
        ROOT / "actions" / "report",
        {"service-url": caller.service.url, "run-id": issued.outputs["run-id"]},
    )
    assert not report.succeeded
    assert "| shards | 0 of 2 uploaded |" in report.summary
    assert "(run-shards-missing)" in report.errors[0].message
