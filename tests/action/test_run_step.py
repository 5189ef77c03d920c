"""The run step's checks before and around `docker`: no Harbor run gets this far."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

from hbench import __version__
from hbench.action import run
from tests.action.conftest import ROOT, RunnerJob


def issued_folder(job: RunnerJob, environment: list[dict[str, object]]) -> Path:
    run_dir = job.workspace / "hbench-runs" / "demo-job"
    run_dir.mkdir(parents=True)
    (run_dir / "spec.json").write_text("[]")  # not a spec: `hbench run` stops at once
    details = {"job_name": "demo-job", "environment": environment}
    (run_dir / "run.json").write_text(json.dumps(details))
    return run_dir


def step(job: RunnerJob, **inputs: str) -> tuple[int, str]:
    output = job.temp / "output"
    output.touch()
    environ = {
        **job.env,
        "GITHUB_WORKSPACE": str(job.workspace),
        "RUNNER_TEMP": str(job.temp),
        "GITHUB_OUTPUT": str(output),
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
    }
    printed = io.StringIO()
    with redirect_stdout(printed):
        code = run.main([], environ)
    return code, printed.getvalue()


def test_a_missing_model_key_stops_the_step_before_docker_with_the_yaml_to_add(
    runner_job: RunnerJob,
) -> None:
    key = {"name": "ANTHROPIC_API_KEY", "value": None, "secret": True,
           "description": "your Anthropic API key"}  # fmt: skip
    run_dir = issued_folder(runner_job, [key])

    code, printed = step(runner_job, RUN_DIR=str(run_dir), IMAGE="hbench-runner:test")

    assert code == 1
    assert "the run needs ANTHROPIC_API_KEY (your Anthropic API key)" in printed
    assert "(action-env-missing) — set it from a secret:%0Aenv:%0A  ANTHROPIC_API_KEY: " in printed
    assert printed.rstrip().endswith("${{ secrets.ANTHROPIC_API_KEY }}")
    assert runner_job.docker_calls() == []


def test_without_an_image_it_is_built_from_the_dockerfile_and_a_failed_run_is_reported(
    runner_job: RunnerJob,
) -> None:
    run_dir = issued_folder(runner_job, [])

    code, printed = step(runner_job, RUN_DIR=str(run_dir), ACTION_PATH=str(ROOT / "actions/run"))

    assert code == 1
    build, ran = runner_job.docker_calls()
    image = f"hbench-runner:{__version__}"
    dockerfile = str(ROOT / "actions" / "run" / "Dockerfile")
    assert build["argv"] == ["build", "--tag", image, "--file", dockerfile, str(ROOT)]
    assert ran["argv"][-5:] == [image, "hbench", "run", "--config", "spec.json"]
    # `hbench run` in the "container" refuses the spec, and the step says so.
    assert "hbench run exited with 1" in printed
    assert "(action-run-failed)" in printed


def test_a_run_folder_outside_the_workspace_is_refused(
    runner_job: RunnerJob, tmp_path: Path
) -> None:
    code, printed = step(runner_job, RUN_DIR=str(tmp_path), IMAGE="hbench-runner:test")

    assert code == 1
    assert "must be inside the workspace" in printed
    assert "(action-input-invalid)" in printed
    assert runner_job.docker_calls() == []
