"""A failed attempt gives up its issued run: the root action, issued by the real service
with an API token, fails in its run step (an image without hbench), and the run is
abandoned with that API token (never its run token), its slot free, as one issued with
the job's OIDC token is with a fresh one; with `on-failure: keep` it stays issued,
and a notice says how to abandon it. And the run step's image: this version's image when
the runner has it, never a build whose base can't be pulled."""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import pytest

from app.db.models import IssuedRun, IssuedRunStatus
from hbench.action import image
from hbench.action.protocol import Actions, Inputs
from hbench.errors import HbenchError
from tests.action.conftest import IMAGE, ROOT, CallerGitHub, RunnerJob, Service
from tools import images

pytestmark = pytest.mark.docker

NO_HBENCH = images.PYTHON_BASE.tag
"""An image the runner has, without hbench in it: `hbench run` can't start there."""


def status_of(service: Service, run_id: str) -> IssuedRunStatus:
    with service.database.session() as db:
        issued = db.get(IssuedRun, uuid.UUID(run_id))
        assert issued is not None
        return issued.status


@pytest.mark.parametrize("on_failure", ["abandon", "keep"])
def test_a_failed_run_is_abandoned_or_kept_as_on_failure_says(
    service: Service, runner_job: RunnerJob, runner_image: str, on_failure: str
) -> None:
    del runner_image  # Docker is up: the run step starts a container that fails
    inputs = {
        "service-url": service.url,
        "board": "hbench-demo-quick",
        "agent": "oracle",
        "api-token": service.api_token,
        "image": NO_HBENCH,
        "on-failure": on_failure,
    }

    result = runner_job.runner().run(ROOT, inputs)

    assert not result.succeeded
    assert "(action-run-failed)" in result.errors[0].message
    (run_json,) = (runner_job.workspace / "hbench-runs").glob("*/run.json")
    run_id = run_json.read_text().split('"run_id": "')[1].split('"')[0]
    notices = [a.message for a in result.job.annotations if a.level == "notice"]
    if on_failure == "abandon":
        assert status_of(service, run_id) is IssuedRunStatus.ABANDONED
        assert f"abandoned the run {run_id}: its slot on hbench-demo-quick is free" in notices
    else:
        assert status_of(service, run_id) is IssuedRunStatus.ISSUED
        (kept,) = notices
        assert f"the run {run_id} stays issued on hbench-demo-quick" in kept
        assert kept.endswith(f"`hbench runs abandon {run_id}`")
    (token_file,) = (runner_job.temp / "hbench").glob("*.run-token")
    assert token_file.read_text().strip() not in result.log


def test_a_run_issued_with_the_jobs_oidc_token_is_abandoned_with_a_fresh_one(
    caller: CallerGitHub, runner_image: str
) -> None:
    del runner_image
    caller.workflow_run(4242)
    job = caller.runner_job("abandoned")
    inputs = {"service-url": caller.service.url, "board": "hbench-demo-quick",
              "agent": "oracle", "image": NO_HBENCH}  # fmt: skip

    result = job.runner().run(ROOT, inputs)

    assert not result.succeeded
    (run_json,) = (job.workspace / "hbench-runs").glob("*/run.json")
    run_id = run_json.read_text().split('"run_id": "')[1].split('"')[0]
    assert status_of(caller.service, run_id) is IssuedRunStatus.ABANDONED
    notices = [a.message for a in result.job.annotations if a.level == "notice"]
    assert f"abandoned the run {run_id}: its slot on hbench-demo-quick is free" in notices


def step_of(job: RunnerJob, action_path: Path) -> tuple[Actions, Inputs]:
    environ = {**job.env, "INPUT_ACTION_PATH": str(action_path)}
    return Actions(environ, out=io.StringIO()), Inputs(environ)


def test_without_an_image_the_step_runs_this_versions_image_when_the_runner_has_it(
    runner_job: RunnerJob, runner_image: str, tmp_path: Path
) -> None:
    del runner_image  # built: the runner has it under its tag
    actions, inputs = step_of(runner_job, tmp_path / "no-dockerfile-here")

    assert image.runner_image(actions, inputs, runner_job.env, tag=IMAGE) == IMAGE
    assert isinstance(actions.out, io.StringIO)
    assert (
        actions.out.getvalue() == f"using the runner image {IMAGE}, which this runner has already\n"
    )


def test_a_base_that_cant_be_pulled_stops_the_step_before_any_build(
    runner_job: RunnerJob, runner_image: str, tmp_path: Path
) -> None:
    del runner_image
    (tmp_path / "Dockerfile").write_text(
        "ARG BASE=registry.invalid/hbench/python:3.12\nFROM ${BASE}\n"
    )
    actions, inputs = step_of(runner_job, tmp_path)
    tag = f"hbench-runner:never-built-{uuid.uuid4().hex[:8]}"

    with pytest.raises(HbenchError) as raised:
        image.runner_image(actions, inputs, runner_job.env, tag=tag)

    (problem,) = raised.value.problems
    assert problem.code == "action-image-unavailable"
    assert f"the runner image {tag} is not on this runner, and its base " in problem.message
    assert "registry.invalid/hbench/python:3.12 can't be pulled (" in problem.message
    assert isinstance(actions.out, io.StringIO)
    assert "building" not in actions.out.getvalue()
    assert not image.image_present("docker", tag, runner_job.env)
