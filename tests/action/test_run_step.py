"""The run step's checks before `docker` (no container starts for them), and one failed run
in the real runner image: reported with its code, leaving no container behind."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import subprocess
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from hbench import __version__
from hbench.action import run
from hbench.action.container import docker_run
from hbench.action.image import DEFAULT_IMAGE, docker_build
from hbench.action.protocol import Inputs
from hbench.action.run_plan import MissingVariableError, plan
from hbench.action.variables import (
    MODEL_KEYS,
    PASSED_BY_NAME,
    PROVIDER_VARIABLES,
    SANDBOX_KEYS,
    SANDBOX_VARIABLES,
    extra_names,
)
from tests.action.conftest import IMAGE, ROOT, RunnerJob


def issued_folder(job: RunnerJob, environment: list[dict[str, object]]) -> Path:
    run_dir = job.workspace / "hbench-runs" / "demo-job"
    run_dir.mkdir(parents=True)
    (run_dir / "spec.json").write_text("[]")  # not a spec: `hbench run` stops at once
    details = {"job_name": "demo-job", "environment": environment}
    (run_dir / "run.json").write_text(json.dumps(details))
    return run_dir


def step(job: RunnerJob, extra: dict[str, str] | None = None, **inputs: str) -> tuple[int, str]:
    output = job.temp / "output"
    output.touch()
    environ = {
        **job.env,
        "GITHUB_WORKSPACE": str(job.workspace),
        "RUNNER_TEMP": str(job.temp),
        "GITHUB_OUTPUT": str(output),
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
        **(extra or {}),
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

    code, printed = step(runner_job, RUN_DIR=str(run_dir), IMAGE=IMAGE)

    assert code == 1
    assert "the run needs ANTHROPIC_API_KEY (your Anthropic API key)" in printed
    assert "(action-env-missing) — set it from a secret:%0Aenv:%0A  ANTHROPIC_API_KEY: " in printed
    assert printed.rstrip().endswith("${{ secrets.ANTHROPIC_API_KEY }}")
    assert "running: docker" not in printed


def test_a_run_folder_outside_the_workspace_is_refused(
    runner_job: RunnerJob, tmp_path: Path
) -> None:
    code, printed = step(runner_job, RUN_DIR=str(tmp_path), IMAGE=IMAGE)

    assert code == 1
    assert "must be inside the workspace" in printed
    assert "(action-input-invalid)" in printed
    assert "running: docker" not in printed


def test_pass_env_takes_variable_names_and_refuses_the_runners_own() -> None:
    names, problems = extra_names("LAB_URL, MY_KEY\nLAB_URL  9LIVES bad-name GITHUB_TOKEN PATH")

    assert names == ["LAB_URL", "MY_KEY"]
    assert problems == [
        "'9LIVES' is not a variable name (letters, digits and _)",
        "'bad-name' is not a variable name (letters, digits and _)",
        "GITHUB_TOKEN is the runner's or the image's own and never enters",
        "PATH is the runner's or the image's own and never enters",
    ]


def test_a_bad_pass_env_or_an_unlisted_extra_value_stops_the_step(
    runner_job: RunnerJob,
) -> None:
    run_dir = issued_folder(runner_job, [])

    code, printed = step(runner_job, RUN_DIR=str(run_dir), IMAGE=IMAGE, PASS_ENV="ACTIONS_X")
    assert code == 1
    assert "the input `pass-env`: ACTIONS_X is the runner's" in printed

    secret = "lab-secret-value-42"
    code, printed = step(
        runner_job,
        {"HBENCH_EXTRA_ENV": f"LAB_TOKEN={secret}\nOTHER=1"},
        RUN_DIR=str(run_dir),
        IMAGE=IMAGE,
        PASS_ENV="LAB_TOKEN",
    )
    assert code == 1
    assert "sets OTHER, which `pass-env` does not list" in printed
    assert secret not in printed


def test_extra_values_enter_by_name_and_are_masked(runner_job: RunnerJob) -> None:
    run_dir = issued_folder(runner_job, [{"name": "HARBOR_TELEMETRY", "value": "0"}])
    environ = {"HBENCH_EXTRA_ENV": "LAB_TOKEN=lab-secret-value-42\n", "OPENAI_API_KEY": "sk-x"}
    inputs = Inputs({"INPUT_RUN_DIR": str(run_dir), "INPUT_PASS_ENV": "LAB_TOKEN"})

    planned = plan(inputs, runner_job.workspace, environ)

    assert planned.names == ("HARBOR_TELEMETRY", "OPENAI_API_KEY", "LAB_TOKEN")
    assert planned.values == {"LAB_TOKEN": "lab-secret-value-42", "HARBOR_TELEMETRY": "0"}
    assert planned.secrets == ("lab-secret-value-42",)
    assert not planned.resumed
    assert planned.command == ("hbench", "run", "--config", "spec.json")


def test_a_job_an_earlier_attempt_left_is_resumed_not_run_again(runner_job: RunnerJob) -> None:
    run_dir = issued_folder(runner_job, [])
    job_dir = run_dir / "jobs" / "demo-job"
    job_dir.mkdir(parents=True)
    (job_dir / "config.json").write_text("{}")

    planned = plan(Inputs({"INPUT_RUN_DIR": str(run_dir)}), runner_job.workspace, {})

    assert planned.resumed
    assert planned.command == ("hbench", "jobs", "resume", "--path", str(job_dir))


def test_the_allow_list_names_each_provider_once() -> None:
    assert len(MODEL_KEYS) == len(set(MODEL_KEYS))
    assert {"ANTHROPIC_API_KEY", "AWS_BEARER_TOKEN_BEDROCK", "HOSTED_VLLM_API_BASE"} <= set(
        MODEL_KEYS
    )
    assert all(names for names in PROVIDER_VARIABLES.values())


def test_the_sandboxes_keys_enter_by_name_and_a_missing_one_stops_the_step(
    runner_job: RunnerJob,
) -> None:
    needed: list[dict[str, object]] = [{"name": "HARBOR_TELEMETRY", "value": "0"},
              {"name": "DAYTONA_API_KEY", "value": None, "secret": True,
               "description": "your Daytona API key"}]  # fmt: skip
    run_dir = issued_folder(runner_job, needed)
    environ = {"DAYTONA_API_KEY": "dtn-secret", "MODAL_TOKEN_ID": "ak-1", "UNLISTED": "x"}

    planned = plan(Inputs({"INPUT_RUN_DIR": str(run_dir)}), runner_job.workspace, environ)

    assert planned.names == ("HARBOR_TELEMETRY", "DAYTONA_API_KEY", "MODAL_TOKEN_ID")
    assert "dtn-secret" not in docker_run(planned, runner_job.workspace, IMAGE)
    with pytest.raises(MissingVariableError, match="DAYTONA_API_KEY"):
        plan(Inputs({"INPUT_RUN_DIR": str(run_dir)}), runner_job.workspace, {})


def test_the_sandbox_allow_list_holds_what_harbors_environments_read() -> None:
    from app.runs.spec import SANDBOX_VARIABLES as ISSUED  # noqa: PLC0415

    found = importlib.util.find_spec("harbor")
    assert found is not None and found.origin is not None
    harbor = Path(found.origin).parent / "environments"
    sources = {
        "Daytona": (harbor / "daytona" / "environment.py").read_text()
        + (harbor / "daytona" / "snapshots.py").read_text(),
        "E2B": (harbor / "e2b.py").read_text(),
        "Modal": (harbor / "modal.py").read_text(),
        "Runloop": (harbor / "runloop.py").read_text(),
    }
    for sandbox, names in SANDBOX_VARIABLES.items():
        for name in names:
            read = re.compile(rf'os\.environ\.get\(\s*"{name}"')
            assert read.search(sources[sandbox]), (sandbox, name)
    assert len(PASSED_BY_NAME) == len(set(PASSED_BY_NAME)) == len(MODEL_KEYS) + len(SANDBOX_KEYS)
    # Every key the service names for a sandbox run enters the container.
    assert {name for names in ISSUED.values() for name, _ in names} <= set(SANDBOX_KEYS)


def test_without_an_image_the_step_builds_one_from_the_actions_dockerfile() -> None:
    action_path = ROOT / "actions" / "run"

    argv = docker_build(action_path, DEFAULT_IMAGE)

    dockerfile = str(action_path / "Dockerfile")
    assert f"hbench-runner:{__version__}" == DEFAULT_IMAGE
    assert argv == ["docker", "build", "--tag", DEFAULT_IMAGE, "--file", dockerfile, str(ROOT)]


@pytest.mark.docker
def test_a_failed_run_in_the_image_is_reported_and_leaves_no_container(
    runner_job: RunnerJob, runner_image: str
) -> None:
    run_dir = issued_folder(runner_job, [])

    code, printed = step(runner_job, RUN_DIR=str(run_dir), IMAGE=IMAGE)

    assert code == 1
    # `hbench run` in the container refuses the spec, and the step says so.
    assert "hbench run exited with 1" in printed
    assert "(action-run-failed)" in printed
    left = subprocess.run(
        [runner_image, "ps", "--all", "--quiet", "--filter", "name=hbench-demo-job-"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert left.stdout == ""
