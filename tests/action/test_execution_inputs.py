"""The Action's `environment` and `concurrent-trials` inputs, run by the local runner: the
issue step sends them, the real service writes them into the spec the run step runs, and
a board's policy refuses what it doesn't allow, storing nothing."""

from __future__ import annotations

import json

from sqlalchemy import func, select

from app.db.models import IssuedRun
from tests.action.conftest import ROOT, RunnerJob, Service

ISSUE = ROOT / "actions" / "issue"


def issued(service: Service) -> int:
    with service.database.session() as session:
        return session.scalar(select(func.count()).select_from(IssuedRun)) or 0


def test_the_inputs_go_into_the_issued_spec(service: Service, runner_job: RunnerJob) -> None:
    result = runner_job.runner().run(
        ISSUE,
        {
            "service-url": service.url,
            "board": "hbench-demo",
            "agent": "oracle",
            "environment": "docker",
            "concurrent-trials": "2",
            "api-token": service.api_token,
        },
    )

    assert result.succeeded, result.log
    run_dir = runner_job.workspace / "hbench-runs" / result.outputs["job-name"]
    spec = json.loads((run_dir / "spec.json").read_text())
    assert spec["n_concurrent_trials"] == 2
    details = json.loads((run_dir / "run.json").read_text())
    assert details["execution"] == {"environment": "docker", "n_concurrent_trials": 2}
    assert "its trials run in docker, 2 at once" in result.log


def test_what_the_board_does_not_allow_is_refused_with_its_codes(
    service: Service, runner_job: RunnerJob
) -> None:
    before = issued(service)

    result = runner_job.runner().run(
        ISSUE,
        {
            "service-url": service.url,
            "board": "hbench-demo",
            "agent": "oracle",
            "environment": "daytona",
            "concurrent-trials": "64",
            "api-token": service.api_token,
        },
    )

    assert not result.succeeded
    codes = sorted(e.message.split(" — ")[0].rsplit("(", 1)[1] for e in result.errors)
    assert codes == ["run-concurrency-refused)", "run-environment-not-allowed)"]
    assert issued(service) == before
    assert not (runner_job.workspace / "hbench-runs").exists()


def test_a_concurrency_that_is_no_number_stops_the_step(
    service: Service, runner_job: RunnerJob
) -> None:
    result = runner_job.runner().run(
        ISSUE,
        {
            "service-url": service.url,
            "board": "hbench-demo",
            "agent": "oracle",
            "concurrent-trials": "many",
            "api-token": service.api_token,
        },
    )

    assert not result.succeeded
    (error,) = result.errors
    assert "the input `concurrent-trials` must be a whole number" in error.message
    assert "(action-input-invalid)" in error.message
