"""The run container: `docker run` with the host's Docker socket and the workspace mounted,
and, when the run fails or is cancelled, the removal of what it left running.

The container gets the host's Docker socket, so the task containers Harbor starts are the
host's siblings, and the workspace mounted at its own path, so the paths Harbor hands to
them mean the same on both sides. Variables enter it by name (`-e NAME`) only. With
`network: host` the container shares the runner's network, to reach a service on its
loopback (a model server at 127.0.0.1).
"""

from __future__ import annotations

import re
import secrets
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from hbench.action.run_plan import Plan
from hbench.errors import HbenchError

DOCKER_SOCKET = "/var/run/docker.sock"
CLEANUP_SECONDS = 30


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
