"""The root `action.yml`, run by the local runner as the reusable workflow's job runs it:
issued with the job's OIDC token by the real service, run for real in the runner image with
Harbor's docker environment, and uploaded with a fresh OIDC token of the same job beside
the run token.

One real run of the quick demo board (module-scoped) goes from issue to an accepted
upload; the other tests read what it left, or stop before Docker starts.
"""

from __future__ import annotations

import json
import shlex
import stat
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import jwt
import pytest
from sqlalchemy import select

from app.db.models import IssuedRun, Job
from hbench.action.container import DOCKER_SOCKET
from hbench.jobs.reader import read_job
from tests.action.conftest import (
    IMAGE,
    ROOT,
    WORKFLOW,
    WORKFLOW_SHA,
    CallerGitHub,
    RunnerJob,
    Service,
)
from tests.action.runner import Result

MODEL_KEY = "sk-ant-test-0123456789abcdef"
LAB_URL = "http://127.0.0.1:9/lab"
NOT_FOR_THE_RUN = {
    "GITHUB_TOKEN": "ghs_notforthecontainer",
    "ACTIONS_RUNTIME_TOKEN": "runtime-token-not-for-the-container",
    "SOME_CLOUD_SECRET": "cloud-secret-not-for-the-container",
}
SETUP_PYTHON = "actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065"
RUN_ID = 4101


@dataclass(frozen=True)
class Ran:
    """The root action's run, and the runner job it ran in."""

    result: Result
    job: RunnerJob
    caller: CallerGitHub

    @property
    def service(self) -> Service:
        return self.caller.service

    @property
    def run_token(self) -> str:
        (token_file,) = (self.job.temp / "hbench").glob("*.run-token")
        return token_file.read_text().strip()

    @property
    def run_dir(self) -> Path:
        (run_dir,) = (self.job.workspace / "hbench-runs").iterdir()
        return run_dir

    @property
    def docker_argv(self) -> list[str]:
        (line,) = [x for x in self.result.log.splitlines() if x.startswith("running: docker")]
        return shlex.split(line.removeprefix("running: "))


@pytest.fixture(scope="module")
def ran(caller: CallerGitHub, runner_image: str) -> Iterator[Ran]:
    del runner_image  # built: the action runs it by its tag
    caller.workflow_run(RUN_ID)
    job = caller.runner_job("ran")
    runner = job.runner(ANTHROPIC_API_KEY=MODEL_KEY, LAB_URL=LAB_URL, **NOT_FOR_THE_RUN)
    result = runner.run(
        ROOT,
        {
            "service-url": caller.service.url,
            "board": "hbench-demo-quick",
            "agent": "oracle",
            "image": IMAGE,
            "max-retries": "1",
            "network": "host",
            "pass-env": "LAB_URL",
            "concurrent-trials": "2",
        },
    )
    yield Ran(result, job, caller)


@pytest.mark.docker
def test_the_action_issues_runs_and_uploads_a_job_bound_to_its_workflow_run(ran: Ran) -> None:
    result, service, tokens = ran.result, ran.service, ran.caller.tokens
    assert result.succeeded, result.log
    outputs = result.outputs
    assert outputs["submission"].startswith("oracle-")
    assert outputs["score"] == "1.0000"  # the quick board's two tasks both pass
    job_id = str(uuid.UUID(outputs["job-id"]))
    assert outputs["job-url"] == f"{service.url}/api/bench/jobs/{job_id}"
    assert result.job.skipped == [SETUP_PYTHON]

    # Two tokens of this job, both for the service: one issued the run, a fresh one went
    # beside the run token with the upload.
    issuing, binding = tokens.minted[-2:]
    assert tokens.audiences[-2:] == [service.url, service.url]
    claims = [jwt.decode(t, options={"verify_signature": False}) for t in (issuing, binding)]
    assert claims[0]["jti"] != claims[1]["jti"]
    assert {c["run_id"] for c in claims} == {str(RUN_ID)}
    assert outputs["evidence"].split() == ["self-reported", "issued", "run-on-ci"]
    # The `concurrent-trials` input went into the spec, and Harbor ran the job with it.
    assert json.loads((ran.run_dir / "spec.json").read_text())["n_concurrent_trials"] == 2
    (job_dir,) = (ran.run_dir / "jobs").iterdir()
    assert json.loads((job_dir / "config.json").read_text())["n_concurrent_trials"] == 2

    answer = httpx.get(outputs["job-url"], headers={"authorization": f"Bearer {service.api_token}"})
    assert answer.status_code == 200, answer.text
    stored = answer.json()
    assert stored["name"] == outputs["job-name"]
    assert stored["status"] == "private"
    with service.database.session() as db:
        run = db.get(IssuedRun, uuid.UUID(stored["issued_run_id"]))
        assert run is not None and run.provenance is not None
        assert run.provenance["oidc"]["job_workflow_ref"] == WORKFLOW
        assert run.provenance["oidc"]["job_workflow_sha"] == WORKFLOW_SHA
        job = db.scalars(select(Job).where(Job.id == uuid.UUID(job_id))).one()
        assert job.issued_run_id == run.id

    summary = result.summary
    assert f"`{outputs['submission']}` on board `hbench-demo-quick`" in summary
    assert "| runner | github-hosted |" in summary
    assert "| trials | in docker, 2 at once |" in summary
    assert "| score | 1.000 over 2 trials |" in summary
    assert f"[{job_id}]({outputs['job-url']})" in summary
    assert "| evidence | self-reported, issued, run-on-ci |" in summary
    table = summary.split("| task | attempt | reward | error |\n|---|---|---|---|\n")[1]
    assert table.splitlines() == ["| hello-file | 1 | 1 |  |", "| sum-numbers | 1 | 1 |  |"]
    assert not result.errors


@pytest.mark.docker
def test_the_tokens_are_masked_and_kept_out_of_outputs_and_files(ran: Ran) -> None:
    result, token = ran.result, ran.run_token
    assert token.startswith("hpr_")
    (token_file,) = (ran.job.temp / "hbench").glob("*.run-token")
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert "::add-mask::***" in result.log
    for secret in (token, MODEL_KEY, *ran.caller.tokens.minted):
        assert secret not in result.log
        assert secret not in result.summary
        assert all(secret not in value for value in result.outputs.values())
    # Nothing under the workspace (spec, run details, the job, the service's own state)
    # holds the run token: only its file under RUNNER_TEMP does.
    for path in ran.job.workspace.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path


@pytest.mark.docker
def test_the_container_gets_the_socket_the_workspace_and_only_named_variables(ran: Ran) -> None:
    assert ran.result.succeeded, ran.result.log
    workspace, argv = str(ran.job.workspace), ran.docker_argv
    assert argv[:3] == ["docker", "run", "--rm"]
    name = argv[argv.index("--name") + 1]
    assert name.startswith(f"hbench-{ran.result.outputs['job-name']}-")
    assert argv[argv.index("--network") + 1] == "host"
    volumes = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-v"]
    assert volumes == [f"{DOCKER_SOCKET}:{DOCKER_SOCKET}", f"{workspace}:{workspace}"]
    assert argv[argv.index("-w") + 1] == str(ran.run_dir)
    names = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-e"]
    assert names == ["HARBOR_TELEMETRY", "ANTHROPIC_API_KEY", "LAB_URL"]
    assert argv[argv.index(IMAGE) + 1 :] == [
        "hbench", "run", "--config", "spec.json", "--max-retries", "1",
    ]  # fmt: skip
    secrets = [MODEL_KEY, *NOT_FOR_THE_RUN.values(), ran.run_token, *ran.caller.tokens.minted]
    assert not any(secret in arg for secret in secrets for arg in argv)

    # Harbor ran the trials in its docker environment, and the run left nothing running.
    job = read_job(ran.run_dir / "jobs" / ran.result.outputs["job-name"])
    assert job.config.environment.type == "docker"
    left = subprocess.run(
        ["docker", "ps", "--all", "--quiet", "--filter", f"name={name}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert left.stdout == ""


@pytest.mark.docker
def test_a_refused_upload_ends_with_the_rule_code_and_the_fix(ran: Ran) -> None:
    """The same job, sent again with the same run token, through the upload action alone."""
    assert ran.result.succeeded, ran.result.log
    (token_file,) = (ran.job.temp / "hbench").glob("*.run-token")
    job_dir = ran.run_dir / "jobs" / ran.result.outputs["job-name"]

    again = ran.job.runner().run(
        ROOT / "actions" / "upload",
        {
            "service-url": ran.service.url,
            "job-dir": str(job_dir),
            "token-file": str(token_file),
            "run-dir": str(ran.run_dir),
        },
    )

    assert not again.succeeded
    (error,) = again.errors
    assert error.title == "hbench: the upload was refused"
    # It counted already: a job is published once, which is what the refusal says.
    assert error.message.endswith(
        "(bench-published-before) — see docs/rule-codes.md#bench-published-before"
    )
    assert ran.run_token not in again.log


@pytest.mark.docker
def test_with_upload_false_the_job_is_checked_and_summarised_but_not_sent(ran: Ran) -> None:
    assert ran.result.succeeded, ran.result.log
    job_dir = ran.run_dir / "jobs" / ran.result.outputs["job-name"]

    kept = ran.job.runner(runner_environment="self-hosted").run(
        ROOT / "actions" / "upload",
        {"service-url": ran.service.url, "job-dir": str(job_dir), "upload": "false"},
    )

    assert kept.succeeded, kept.log
    assert kept.outputs["score"] == "1.0000"
    assert kept.outputs["job-id"] == kept.outputs["job-url"] == kept.outputs["evidence"] == ""
    assert "| job | not uploaded |" in kept.summary
    assert "| runner | self-hosted |" in kept.summary
    notices = [(a.level, a.title) for a in kept.job.annotations]
    assert notices == [
        ("notice", "hbench: a self-hosted runner"),
        ("notice", "hbench: not uploaded"),
    ]


def test_without_a_token_or_the_oidc_permission_the_job_is_told_what_to_add(
    service: Service, runner_job: RunnerJob
) -> None:
    result = runner_job.runner().run(
        ROOT, {"service-url": service.url, "board": "hbench-demo", "agent": "oracle"}
    )

    assert not result.succeeded
    (error,) = result.errors
    assert error.title == "hbench: the run was not issued"
    assert "ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN" in error.message
    assert "(action-oidc-unavailable)" in error.message
    assert error.message.endswith(
        "permissions:\n  id-token: write\n  contents: read\nor pass the `api-token` input"
    )
    assert "running: docker" not in result.log
    assert not (runner_job.workspace / "hbench-runs").exists()


def test_a_policy_refusal_lists_every_problem_with_its_code(
    service: Service, runner_job: RunnerJob
) -> None:
    result = runner_job.runner().run(
        ROOT / "actions" / "issue",
        {
            "service-url": service.url,
            "board": "hbench-demo",
            "agent": "claude-code",
            "attempts": "2",
            "api-token": service.api_token,
        },
    )

    assert not result.succeeded
    codes = sorted(e.message.split(" — ")[0].rsplit("(", 1)[1] for e in result.errors)
    assert codes == ["run-agent-not-allowed)", "run-attempts-refused)"]
    assert service.api_token not in result.log


@pytest.mark.docker
def test_the_published_run_shows_it_ran_on_ci_with_its_commit(ran: Ran) -> None:
    """Published, the run's page on the service's site says run on CI and links its commit."""
    service, outputs = ran.service, ran.result.outputs
    assert ran.result.succeeded, ran.result.log
    job_id = str(uuid.UUID(outputs["job-id"]))
    headers = {"authorization": f"Bearer {service.api_token}"}
    published = httpx.post(f"{service.url}/api/bench/jobs/{job_id}/publish", headers=headers)
    assert published.status_code == 200, published.text
    # The service's writer commits the run and rebuilds its site in the background.
    page = f"{service.url}/site/boards/hbench-demo-quick/runs/{job_id}.html"
    commit = ran.caller.claims.get("sha", "a" * 40)
    text = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        answer = httpx.get(page, timeout=10)
        text = answer.text if answer.status_code == 200 else ""
        if "Run on CI" in text:
            break
        time.sleep(0.5)
    assert "evidence-run-on-ci" in text, text[:2000]
    assert f"github.com/octo-org/octo-repo/commit/{commit}" in text
