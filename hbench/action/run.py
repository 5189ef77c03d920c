"""The Action's second step: `hbench run --config spec.json` inside the hbench runner image.

The container gets the host's Docker socket, so the task containers Harbor starts are the
host's siblings, and the workspace mounted at its own path, so the paths Harbor hands to
them mean the same on both sides. Only the spec's variables and the model keys of
`MODEL_KEYS` enter the container, each by name (`-e NAME`): their values stay in the
environment of the `docker` process and never appear on a command line.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench import __version__
from hbench.action.protocol import Actions, Inputs, StepError, run_step
from hbench.errors import HbenchError
from hbench.issue import RUN_FILE, SPEC_FILE
from hbench.runner import DEFAULT_JOBS_DIR

DOCKER_SOCKET = "/var/run/docker.sock"
DEFAULT_IMAGE = f"hbench-runner:{__version__}"
"""The tag the image is built under from `actions/run/Dockerfile` when no `image` is given."""
TITLE = "hbench: the run failed"

MODEL_KEYS: tuple[str, ...] = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AZURE_API_KEY",
    "AZURE_API_BASE",
    "AZURE_API_VERSION",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "TOGETHERAI_API_KEY",
    "FIREWORKS_AI_API_KEY",
    "XAI_API_KEY",
    "DASHSCOPE_API_KEY",
    "HOSTED_VLLM_API_BASE",
    "HF_TOKEN",
)
"""The model providers' variables passed into the container when the job sets them.
Every other variable of the job (the GitHub token, the run token, cloud credentials)
stays outside."""


@dataclass(frozen=True)
class Plan:
    """What to run: the run's folder, its job, and the container's command and variables."""

    run_dir: Path
    job_dir: Path
    names: tuple[str, ...]
    """The variables that enter the container, by name."""
    values: dict[str, str]
    """The spec's own values (such as `HARBOR_TELEMETRY=0`), set on the docker process."""
    command: tuple[str, ...]


class MissingVariableError(StepError):
    """The run needs a variable of the person running it (a model key) the job lacks."""

    def __init__(self, name: str, description: str) -> None:
        super().__init__(
            "action-env-missing",
            f"the run needs {name} ({description}), and the job lacks it",
            fix=f"set it from a secret:\nenv:\n  {name}: ${{{{ secrets.{name} }}}}",
        )


def inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def read_details(run_dir: Path) -> dict[str, Any]:
    if not (run_dir / SPEC_FILE).is_file():
        message = f"{run_dir} holds no {SPEC_FILE}; pass the issue step's `run-dir` output"
        raise HbenchError("action-input-invalid", message)
    try:
        details = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        message = f"can't read {run_dir / RUN_FILE}, written when the run was issued: {exc}"
        raise HbenchError("action-input-invalid", message) from None
    if not isinstance(details, dict) or not isinstance(details.get("job_name"), str):
        raise HbenchError("action-input-invalid", f"{run_dir / RUN_FILE} names no job")
    return details


def plan(inputs: Inputs, workspace: Path, environ: Mapping[str, str]) -> Plan:
    """Check the inputs and the run's folder; decide the command and the variables."""
    run_dir = Path(inputs.required("run-dir")).resolve()
    if not inside(run_dir, workspace):
        message = f"the run folder {run_dir} must be inside the workspace {workspace}"
        raise HbenchError("action-input-invalid", message + ", the only folder the run sees")
    details = read_details(run_dir)
    command = ["hbench", "run", "--config", SPEC_FILE]
    jobs_dir = run_dir / DEFAULT_JOBS_DIR
    if (given := inputs.get("jobs-dir")) is not None:
        jobs_dir = (run_dir / given).resolve()  # relative to the run's folder, as Harbor reads it
        if not inside(jobs_dir, workspace):
            message = f"`jobs-dir` {jobs_dir} must be inside the workspace {workspace}"
            raise HbenchError("action-input-invalid", message)
        command += ["--jobs-dir", str(jobs_dir)]
    if (retries := inputs.integer("max-retries")) is not None:
        command += ["--max-retries", str(retries)]
    values: dict[str, str] = {}
    names: list[str] = []
    for variable in details.get("environment") or []:
        name, value = variable["name"], variable.get("value")
        if value is not None:
            values[name] = str(value)
        elif not environ.get(name):
            raise MissingVariableError(name, str(variable.get("description") or "set by you"))
        names.append(name)
    names += [key for key in MODEL_KEYS if environ.get(key) and key not in names]
    job_dir = jobs_dir / details["job_name"]
    return Plan(run_dir, job_dir, tuple(names), values, tuple(command))


def docker_run(plan: Plan, workspace: Path, image: str) -> list[str]:
    """The `docker run` argv: socket and workspace mounted, variables by name only."""
    argv = ["docker", "run", "--rm"]
    argv += ["-v", f"{DOCKER_SOCKET}:{DOCKER_SOCKET}"]
    argv += ["-v", f"{workspace}:{workspace}", "-w", str(plan.run_dir)]
    for name in plan.names:
        argv += ["-e", name]
    return [*argv, image, *plan.command]


def docker_build(action_path: Path, image: str) -> list[str]:
    """Build the runner image from this action's Dockerfile; the repository is its context."""
    source = action_path.resolve().parents[1]
    dockerfile = action_path / "Dockerfile"
    return ["docker", "build", "--tag", image, "--file", str(dockerfile), str(source)]


def execute(argv: list[str], env: Mapping[str, str], what: str) -> None:
    docker = shutil.which("docker", path=env.get("PATH"))
    if docker is None:
        raise HbenchError(
            "action-run-failed", "`docker` is not on PATH: run the job on a Linux runner"
        )
    completed = subprocess.run([docker, *argv[1:]], env=dict(env), check=False)
    if completed.returncode != 0:
        message = f"{what} exited with {completed.returncode}; its output is in the log above"
        raise HbenchError("action-run-failed", message)


def run(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    workspace = actions.workspace().resolve()
    planned = plan(inputs, workspace, environ)
    image = inputs.get("image")
    env = {**environ, **planned.values}
    if image is None:
        image = DEFAULT_IMAGE
        action_path = Path(inputs.required("action-path"))
        actions.log(f"building the runner image {image} from {action_path / 'Dockerfile'}")
        execute(docker_build(action_path, image), env, "docker build")
    argv = docker_run(planned, workspace, image)
    actions.log("running: " + " ".join(argv))
    execute(argv, env, "hbench run")
    if not (planned.job_dir / "manifest.json").is_file():
        message = f"the run ended without a sealed job at {planned.job_dir}"
        raise HbenchError("action-run-failed", message)
    actions.set_output("job-dir", str(planned.job_dir))
    actions.set_output("job-name", planned.job_dir.name)


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the issued spec; 0 when a sealed job folder exists, 1 with annotations if not."""
    del argv  # every setting arrives as an input variable
    return run_step(TITLE, lambda actions, env: run(actions, Inputs(env), env), environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
