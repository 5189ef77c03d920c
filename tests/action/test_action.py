"""The root `action.yml` and its steps, run by the local runner against the real service.

One real Harbor run of the demo board (module-scoped) goes from issue to an accepted
upload; the other tests read what it left, or stop before Harbor runs.
"""

from __future__ import annotations

import json
import stat
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from hbench.action.run import DOCKER_SOCKET
from tests.action.conftest import ROOT, RunnerJob, Service, new_runner_job
from tests.action.runner import Result

IMAGE = "hbench-runner:test"
MODEL_KEY = "sk-ant-test-0123456789abcdef"
NOT_FOR_THE_RUN = {"GITHUB_TOKEN": "ghs_notforthecontainer", "AWS_SECRET_ACCESS_KEY": "aws-nope"}


@dataclass(frozen=True)
class Ran:
    """The root action's run, and the runner job it ran in."""

    result: Result
    job: RunnerJob
    service: Service

    @property
    def run_token(self) -> str:
        (token_file,) = (self.job.temp / "hbench").glob("*.run-token")
        return token_file.read_text().strip()


@pytest.fixture(scope="module")
def ran(service: Service, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    job = new_runner_job(tmp_path_factory.mktemp("ran"))
    runner = job.runner(ANTHROPIC_API_KEY=MODEL_KEY, **NOT_FOR_THE_RUN)
    result = runner.run(
        ROOT,
        {
            "service-url": service.url,
            "board": "hbench-demo",
            "agent": "oracle",
            "api-token": service.api_token,
            "image": IMAGE,
            "max-retries": "1",
        },
    )
    yield Ran(result, job, service)


@pytest.mark.harbor
def test_the_action_issues_runs_and_uploads_a_job(ran: Ran) -> None:
    result, service = ran.result, ran.service
    assert result.succeeded, result.log
    outputs = result.outputs
    assert outputs["submission"].startswith("oracle-")
    assert outputs["score"] == "0.8000"  # the demo's oracle fails one task on purpose
    job_id = str(uuid.UUID(outputs["job-id"]))
    assert outputs["job-url"] == f"{service.url}/api/bench/jobs/{job_id}"
    assert result.job.skipped == ["actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065"]

    # The job is on the service, as the uploaded run of the issued entry.
    answer = httpx.get(outputs["job-url"], headers={"authorization": f"Bearer {service.api_token}"})
    assert answer.status_code == 200, answer.text
    stored = answer.json()
    assert stored["name"] == outputs["job-name"]
    assert stored["issued_run_id"] is not None
    assert stored["status"] == "private"

    summary = result.summary
    assert f"`{outputs['submission']}` on board `hbench-demo`" in summary
    assert "| score | 0.800 over 5 trials |" in summary
    assert f"[{job_id}]({outputs['job-url']})" in summary
    table = summary.split("| task | attempt | reward | error |\n|---|---|---|---|\n")[1]
    assert table.splitlines() == [
        "| count-lines | 1 | 1 |  |",
        "| hello-file | 1 | 1 |  |",
        "| prime-factor | 1 | 0 |  |",
        "| reverse-words | 1 | 1 |  |",
        "| sum-numbers | 1 | 1 |  |",
    ]
    assert not result.errors


@pytest.mark.harbor
def test_the_run_token_is_masked_and_kept_out_of_outputs_and_files(ran: Ran) -> None:
    result, token = ran.result, ran.run_token
    assert token.startswith("hpr_")
    (token_file,) = (ran.job.temp / "hbench").glob("*.run-token")
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert "::add-mask::***" in result.log
    for secret in (token, ran.service.api_token, MODEL_KEY):
        assert secret not in result.log
        assert secret not in result.summary
        assert all(secret not in value for value in result.outputs.values())
    # Nothing under the workspace (spec, run details, job) holds the run token.
    for path in ran.job.workspace.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path


@pytest.mark.harbor
def test_the_container_gets_the_socket_the_workspace_and_only_named_variables(ran: Ran) -> None:
    assert ran.result.succeeded, ran.result.log
    workspace = str(ran.job.workspace)
    (call,) = ran.job.docker_calls()  # an image was given: nothing is built
    argv = call["argv"]
    assert argv[:2] == ["run", "--rm"]
    volumes = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-v"]
    assert volumes == [f"{DOCKER_SOCKET}:{DOCKER_SOCKET}", f"{workspace}:{workspace}"]
    workdir = argv[argv.index("-w") + 1]
    assert Path(workdir).parent == ran.job.workspace / "hbench-runs"
    names = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-e"]
    assert names == ["HARBOR_TELEMETRY", "ANTHROPIC_API_KEY"]
    image_at = argv.index(IMAGE)
    assert argv[image_at + 1 :] == ["hbench", "run", "--config", "spec.json", "--max-retries", "1"]
    # No value on the command line; the command saw the named variables and nothing else.
    secrets = [MODEL_KEY, *NOT_FOR_THE_RUN.values(), ran.service.api_token, ran.run_token]
    assert not any(secret in arg for secret in secrets for arg in argv)
    assert call["env"] == sorted(["ANTHROPIC_API_KEY", "HARBOR_TELEMETRY", "HOME", "PATH"])
    assert json.loads((Path(workdir) / "run.json").read_text())["job_name"] in workdir


@pytest.mark.harbor
def test_a_refused_upload_ends_with_the_rule_code_and_the_fix(ran: Ran) -> None:
    """The same job, sent again with the same run token, through the upload action alone."""
    assert ran.result.succeeded, ran.result.log
    (token_file,) = (ran.job.temp / "hbench").glob("*.run-token")
    (run_dir,) = (ran.job.workspace / "hbench-runs").iterdir()
    job_dir = run_dir / "jobs" / ran.result.outputs["job-name"]

    again = ran.job.runner().run(
        ROOT / "actions" / "upload",
        {
            "service-url": ran.service.url,
            "job-dir": str(job_dir),
            "token-file": str(token_file),
            "run-dir": str(run_dir),
        },
    )

    assert not again.succeeded
    (error,) = again.errors
    assert error.title == "hbench: the upload was refused"
    assert error.message.endswith("(run-token-used) — see docs/rule-codes.md#run-token-used")
    assert ran.run_token not in again.log


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
    assert runner_job.docker_calls() == []
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


@pytest.mark.harbor
def test_with_upload_false_the_job_is_checked_and_summarised_but_not_sent(ran: Ran) -> None:
    assert ran.result.succeeded, ran.result.log
    (run_dir,) = (ran.job.workspace / "hbench-runs").iterdir()
    job_dir = run_dir / "jobs" / ran.result.outputs["job-name"]

    kept = ran.job.runner().run(
        ROOT / "actions" / "upload",
        {"service-url": ran.service.url, "job-dir": str(job_dir), "upload": "false"},
    )

    assert kept.succeeded, kept.log
    assert kept.outputs["score"] == "0.8000"
    assert kept.outputs["job-id"] == kept.outputs["job-url"] == ""
    assert "| job | not uploaded |" in kept.summary
    (notice,) = kept.job.annotations
    assert (notice.level, notice.title) == ("notice", "hbench: not uploaded")
