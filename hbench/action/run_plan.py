"""The run step's plan: its inputs and the run's folder checked, the command decided, and
the variables that enter the container chosen.

Only the spec's variables, the model providers' and the remote sandboxes' variables
(`hbench.action.variables`) and the names of the `pass-env` input enter the container, each
by name: their values stay in the environment of the `docker` process and never appear on
a command line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench.action.protocol import Inputs, StepError
from hbench.action.variables import PASSED_BY_NAME, extra_names
from hbench.errors import HbenchError
from hbench.issue import RUN_FILE, SPEC_FILE
from hbench.runner import DEFAULT_JOBS_DIR

EXTRA_ENV = "HBENCH_EXTRA_ENV"
"""`NAME=value` lines for names of `pass-env` that the job can't set as variables of its
own: the reusable workflow hands its `extra-env` secret over in it."""
NETWORK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


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
