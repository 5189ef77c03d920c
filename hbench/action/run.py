"""The Action's second step: `hbench run --config spec.json` inside the hbench runner image,
or `hbench jobs resume` of the job an earlier attempt left in the run's folder.

The container gets the host's Docker socket, so the task containers Harbor starts are the
host's siblings, and the workspace mounted at its own path, so the paths Harbor hands to
them mean the same on both sides. Only the spec's variables, the model providers' and
the remote sandboxes' variables (`hbench.action.variables`) and the names of the
`pass-env` input enter the container, each by name (`-e NAME`): their values stay in the
environment of the `docker` process and never appear on a command line. With
`network: host` the container shares the runner's network, to reach a service on its
loopback (a model server at 127.0.0.1).
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench import __version__
from hbench.action import abandon
from hbench.action.protocol import Actions, Inputs, StepError, run_step
from hbench.action.variables import PASSED_BY_NAME, extra_names
from hbench.errors import HbenchError
from hbench.issue import RUN_FILE, SPEC_FILE
from hbench.runner import DEFAULT_JOBS_DIR

DOCKER_SOCKET = "/var/run/docker.sock"
DEFAULT_IMAGE = f"hbench-runner:{__version__}"
"""The tag the image is built under from `actions/run/Dockerfile` when no `image` is given."""
EXTRA_ENV = "HBENCH_EXTRA_ENV"
"""`NAME=value` lines for names of `pass-env` that the job can't set as variables of its
own: the reusable workflow hands its `extra-env` secret over in it."""
CLEANUP_SECONDS = 30
PULL_SECONDS = 300
"""How long the build's base may take to pull before the step gives up on building."""
NETWORK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
TITLE = "hbench: the run failed"


@dataclass(frozen=True)
class Plan:
    """What to run: the run's folder, its job, and the container's command and variables."""

    run_dir: Path
    job_dir: Path
    names: tuple[str, ...]
    """The variables that enter the container, by name."""
    values: dict[str, str]
    """Values set on the docker process: the spec's own (such as `HARBOR_TELEMETRY=0`)
    and those of `HBENCH_EXTRA_ENV`."""
    command: tuple[str, ...]
    network: str | None = None
    resumed: bool = False
    """Whether the command continues a job an earlier attempt started."""
    secrets: tuple[str, ...] = ()
    """The values of `HBENCH_EXTRA_ENV`, masked before anything is printed."""


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


def extra_values(environ: Mapping[str, str], names: list[str]) -> dict[str, str]:
    """The `NAME=value` lines of `HBENCH_EXTRA_ENV`; each name must be one of `pass-env`."""
    values: dict[str, str] = {}
    for line in environ.get(EXTRA_ENV, "").splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        name = name.strip()
        if not sep or name not in names:
            shown = name if sep else "a line without ="
            raise HbenchError(
                "action-input-invalid",
                f"{EXTRA_ENV} (the workflow's `extra-env` secret) sets {shown}, which "
                "`pass-env` does not list: write each as NAME=value, and list every NAME "
                "in `pass-env`",
            )
        values[name] = value
    return values


def variables(
    inputs: Inputs, details: dict[str, Any], environ: Mapping[str, str]
) -> tuple[list[str], dict[str, str], tuple[str, ...]]:
    """The names that enter the container, the values the docker process gets, and
    those of them that are secrets (`HBENCH_EXTRA_ENV`'s)."""
    extra, problems = extra_names(inputs.get("pass-env"))
    if problems:
        message = "; ".join(problems)
        raise HbenchError("action-input-invalid", f"the input `pass-env`: {message}")
    values = extra_values(environ, extra)
    secrets = tuple(values.values())
    names: list[str] = []
    for variable in details.get("environment") or []:
        name, value = variable["name"], variable.get("value")
        if value is not None:
            values[name] = str(value)
        elif not environ.get(name) and name not in values:
            raise MissingVariableError(name, str(variable.get("description") or "set by you"))
        names.append(name)
    for key in (*PASSED_BY_NAME, *extra):
        if (environ.get(key) or key in values) and key not in names:
            names.append(key)
    return names, values, secrets


def network(inputs: Inputs) -> str | None:
    given = inputs.get("network")
    if given is not None and not NETWORK.fullmatch(given):
        message = f"the input `network` must name a Docker network, such as host, not {given!r}"
        raise HbenchError("action-input-invalid", message)
    return given


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
    job_dir = jobs_dir / details["job_name"]
    resumed = (job_dir / "config.json").is_file()
    if resumed:
        # An earlier attempt's job, from its artifact: Harbor continues it as configured then.
        command = ["hbench", "jobs", "resume", "--path", str(job_dir)]
    names, values, secrets = variables(inputs, details, environ)
    return Plan(
        run_dir, job_dir, tuple(names), values, tuple(command), network(inputs), resumed, secrets
    )


def container_name(plan: Plan) -> str:
    """The run container's name: its job's, and a suffix of its own for each attempt."""
    return f"hbench-{plan.job_dir.name}-{secrets.token_hex(4)}"


def docker_run(plan: Plan, workspace: Path, image: str, name: str | None = None) -> list[str]:
    """The `docker run` argv: socket and workspace mounted, variables by name only."""
    argv = ["docker", "run", "--rm"]
    if name is not None:
        argv += ["--name", name]
    if plan.network is not None:
        argv += ["--network", plan.network]
    argv += ["-v", f"{DOCKER_SOCKET}:{DOCKER_SOCKET}"]
    argv += ["-v", f"{workspace}:{workspace}", "-w", str(plan.run_dir)]
    for variable in plan.names:
        argv += ["-e", variable]
    return [*argv, image, *plan.command]


def docker_build(action_path: Path, image: str) -> list[str]:
    """Build the runner image from this action's Dockerfile; the repository is its context."""
    source = action_path.resolve().parents[1]
    dockerfile = action_path / "Dockerfile"
    return ["docker", "build", "--tag", image, "--file", str(dockerfile), str(source)]


def dockerfile_base(dockerfile: Path) -> str | None:
    """The image the Dockerfile builds on by default: its `ARG BASE=` line's value."""
    try:
        text = dockerfile.read_text(encoding="utf-8")
    except OSError:
        return None
    for line in text.splitlines():
        name, sep, value = line.removeprefix("ARG ").partition("=")
        if line.startswith("ARG ") and sep and name.strip() == "BASE":
            return value.strip()
    return None


def image_present(docker: str, image: str, env: Mapping[str, str]) -> bool:
    """Whether the daemon has the image already (no registry is asked)."""
    argv = [docker, "image", "inspect", "--format", "{{.Id}}", image]
    try:
        done = subprocess.run(
            argv, env=dict(env), capture_output=True, check=False, timeout=CLEANUP_SECONDS
        )
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def pull_base(docker: str, base: str, env: Mapping[str, str]) -> str | None:
    """Pull the build's base within `PULL_SECONDS`; None when it came, else why not."""
    try:
        done = subprocess.run(
            [docker, "pull", "--quiet", base], env=dict(env), capture_output=True, text=True,
            check=False, timeout=PULL_SECONDS,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"its registry did not answer within {PULL_SECONDS} s"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return lines[-1] if lines else f"`docker pull` exited with {done.returncode}"
    return None


def runner_image(
    actions: Actions, inputs: Inputs, env: Mapping[str, str], tag: str = DEFAULT_IMAGE
) -> str:
    """The image to run in: the `image` input (a release pins its own there); else this
    version's image when the daemon has it (`make runner-image` or a pull made it); else
    one built from this action's Dockerfile, on a base that is here or can be pulled.
    A base out of reach stops the step before any build (`action-image-unavailable`)."""
    if (given := inputs.get("image")) is not None:
        return given
    docker = docker_binary(env)
    if image_present(docker, tag, env):
        actions.log(f"using the runner image {tag}, which this runner has already")
        return tag
    action_path = Path(inputs.required("action-path"))
    dockerfile = action_path / "Dockerfile"
    base = dockerfile_base(dockerfile)
    if base is not None and not image_present(docker, base, env):
        actions.log(f"pulling {base}, the base of the runner image")
        if (why := pull_base(docker, base, env)) is not None:
            raise HbenchError(
                "action-image-unavailable",
                f"the runner image {tag} is not on this runner, and its base {base} "
                f"can't be pulled ({why}), so it can't be built: pass the input `image` (a "
                f"runner image this runner has or can pull), or build {tag} here "
                "first (`make runner-image` makes it on a base of Debian's packages)",
            )
    actions.log(f"building the runner image {tag} from {dockerfile}")
    execute(docker_build(action_path, tag), env, "docker build")
    return tag


def docker_binary(env: Mapping[str, str]) -> str:
    docker = shutil.which("docker", path=env.get("PATH"))
    if docker is None:
        raise HbenchError(
            "action-run-failed", "`docker` is not on PATH: run the job on a Linux runner"
        )
    return docker


def execute(
    argv: list[str],
    env: Mapping[str, str],
    what: str,
    cleanup: Callable[[str], None] | None = None,
) -> None:
    """Run a docker command; on a failure, or when the runner cancels the step (SIGINT,
    as on a timeout), `cleanup` removes what the command left running first."""
    docker = docker_binary(env)
    try:
        completed = subprocess.run([docker, *argv[1:]], env=dict(env), check=False)
    except KeyboardInterrupt:
        # The runner sends SIGTERM 7.5 s after SIGINT: nothing interrupts the clean-up.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if cleanup is not None:
            cleanup(docker)
        message = (
            f"{what} was stopped part way: the job was cancelled or ran out of time. What it "
            "finished stays in the run's folder, which the reusable workflow saves for `resume`"
        )
        raise HbenchError("action-run-failed", message) from None
    if completed.returncode != 0:
        if cleanup is not None:
            cleanup(docker)
        message = f"{what} exited with {completed.returncode}; its output is in the log above"
        raise HbenchError("action-run-failed", message)


def compose_project(name: str) -> str:
    """A name as Harbor's docker environment makes a Compose project of it (a trial's
    environments are projects named after the trial, `<trial>__env` and its verifiers')."""
    name = name.lower()
    name = name if re.match(r"^[a-z0-9]", name) else "0" + name
    return re.sub(r"[^a-z0-9_-]", "-", name)


def quietly(argv: list[str]) -> str:
    """Run a clean-up command; its output, whether or not it succeeded."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False, timeout=CLEANUP_SECONDS
        )
    except subprocess.TimeoutExpired:
        return ""
    return done.stdout


def leftovers(docker: str, kind: str, trials: set[str]) -> list[str]:
    """The containers or networks of Compose projects of these trials."""
    listed = quietly(
        [docker, kind, "ls", *(["--all"] if kind == "container" else []),
         "--filter", "label=com.docker.compose.project",
         "--format", '{{.ID}} {{.Label "com.docker.compose.project"}}'],
    )  # fmt: skip
    found = []
    for line in listed.splitlines():
        ident, _, project = line.partition(" ")
        if any(project.startswith(trial) for trial in trials):
            found.append(ident)
    return found


def remove_leftovers(docker: str, container: str, job_dir: Path) -> None:
    """Remove the run container and the containers and networks Harbor started for the
    job's trials: a run stopped part way leaves them running (Harbor had no time to stop
    them), which a self-hosted runner would keep."""
    quietly([docker, "rm", "--force", container])
    if not job_dir.is_dir():
        return
    trials = {compose_project(p.name) for p in job_dir.iterdir() if p.is_dir()}
    if containers := leftovers(docker, "container", trials):
        quietly([docker, "rm", "--force", *containers])
    if networks := leftovers(docker, "network", trials):
        quietly([docker, "network", "rm", *networks])


def run(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    workspace = actions.workspace().resolve()
    planned = plan(inputs, workspace, environ)
    for secret in planned.secrets:
        actions.mask(secret)
    env = {**environ, **planned.values}
    image = runner_image(actions, inputs, env)
    if planned.resumed:
        actions.log(f"resuming the job an earlier attempt left in {planned.job_dir}")
    name = container_name(planned)
    argv = docker_run(planned, workspace, image, name)
    actions.log("running: " + " ".join(argv))
    what = "hbench jobs resume" if planned.resumed else "hbench run"
    execute(argv, env, what, lambda docker: remove_leftovers(docker, name, planned.job_dir))
    if not (planned.job_dir / "manifest.json").is_file():
        message = f"the run ended without a sealed job at {planned.job_dir}"
        raise HbenchError("action-run-failed", message)
    actions.set_output("job-dir", str(planned.job_dir))
    actions.set_output("job-name", planned.job_dir.name)
    actions.set_output("resumed", "true" if planned.resumed else "false")


def run_or_give_up(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    """The step; when it fails, its issued run is abandoned, or kept (`on-failure`)."""
    chosen = abandon.policy(inputs)
    try:
        run(actions, inputs, environ)
    except HbenchError:
        abandon.give_up(actions, inputs, chosen, environ)
        raise


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the issued spec; 0 when a sealed job folder exists, 1 with annotations if not."""
    del argv  # every setting arrives as an input variable
    step = run_or_give_up
    return run_step(TITLE, lambda actions, env: step(actions, Inputs(env), env), environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
