"""A small runner for composite actions, doing locally what GitHub's runner does with them.

It loads an `action.yml`, fills its inputs' defaults, and runs each step: `run:` steps with
`shell: bash` in a subprocess, `uses: ./path` steps as nested composite actions (a path
relative to the workspace, as on GitHub). It evaluates the expressions the actions use
(`inputs.*`, `steps.<id>.outputs.*`, `github.action_path`, `github.workspace`,
`runner.temp`, `env.*`), gives each step its `GITHUB_OUTPUT`, `GITHUB_ENV`, `GITHUB_PATH`
and `GITHUB_STEP_SUMMARY` files, reads them back, applies `::add-mask::` to every later
line of the log, and collects the `::error` annotations. Like GitHub, it sets no
`INPUT_*` variables for a composite action's steps: the YAML passes them with `env:`.

Remote actions (`owner/repo@ref`) are out of reach offline; those named in `skip_remote`
are recorded as skipped (setup-python, whose Python is the one already on PATH).

A job can be cancelled as GitHub cancels one (its `timeout-minutes`, or a person): when
`cancel_when()` turns true during a step, the step's own process gets SIGINT, then SIGTERM
7.5 s later, and 2.5 s after that every process of the step gets SIGKILL (actions/runner's
`ProcessInvoker.CancelAndKillProcessTree`); the action stops there.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
COMMAND = re.compile(r"^::([a-z-]+)(?: ([^:]*))?::(.*)$")
STEP_TIMEOUT = 600
POLL_SECONDS = 0.2
CANCEL_GRACE = ((signal.SIGINT, 7.5), (signal.SIGTERM, 2.5))
"""How GitHub's runner stops a cancelled step: each signal to its process, then how long it
waits before the next; then it kills the whole process tree."""


class UnsupportedError(Exception):
    """The action uses something this runner does not evaluate."""


@dataclass
class Annotation:
    level: str
    title: str
    message: str


@dataclass
class Job:
    """What a job shares across its steps and nested actions."""

    workspace: Path
    temp: Path
    env: dict[str, str]
    skip_remote: frozenset[str]
    runner_environment: str = "github-hosted"
    cancel_when: Callable[[], bool] | None = None
    cancelled: bool = False
    masks: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    job_env: dict[str, str] = field(default_factory=dict)
    path_entries: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    files: int = 0

    def masked(self, line: str) -> str:
        for secret in self.masks:
            line = line.replace(secret, "***")
        return line

    def new_file(self, kind: str) -> Path:
        self.files += 1
        path = self.temp / "_runner_file_commands" / f"{kind}_{self.files}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        return path


@dataclass
class Result:
    """An action's run: its outputs, whether it succeeded, and what the job saw."""

    outputs: dict[str, str]
    succeeded: bool
    job: Job

    @property
    def cancelled(self) -> bool:
        return self.job.cancelled

    @property
    def log(self) -> str:
        return "\n".join(self.job.log)

    @property
    def errors(self) -> list[Annotation]:
        return [a for a in self.job.annotations if a.level == "error"]

    @property
    def summary(self) -> str:
        return "".join(self.job.summary)


def unescape(text: str) -> str:
    return text.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace(
        "%2C", ","
    ).replace("%25", "%")  # fmt: skip


def read_file_command(path: Path) -> dict[str, str]:
    """`name=value` lines and `name<<DELIM` … `DELIM` blocks, as the runner reads them."""
    values: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.strip():
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body: list[str] = []
            while index < len(lines) and lines[index] != delimiter:
                body.append(lines[index])
                index += 1
            if index >= len(lines):
                raise ValueError(f"{path}: no closing {delimiter!r}")
            index += 1
            values[name] = "\n".join(body)
        else:
            name, _, value = line.partition("=")
            values[name] = value
    return values


@dataclass
class Context:
    """One action's expression context."""

    inputs: dict[str, str]
    steps: dict[str, dict[str, str]]
    action_path: Path
    job: Job

    def value(self, expression: str) -> str:
        if re.fullmatch(r"'(?:[^']|'')*'", expression):
            return expression[1:-1].replace("''", "'")
        match expression.split("."):
            case ["inputs", name]:
                found: str | None = self.inputs.get(name, "")
            case ["steps", step, "outputs", name]:
                found = self.steps.get(step, {}).get(name, "")
            case ["github", "action_path"]:
                found = str(self.action_path)
            case ["github", "workspace"]:
                found = str(self.job.workspace)
            case ["runner", "temp"]:
                found = str(self.job.temp)
            case ["runner", "environment"]:
                found = self.job.runner_environment
            case ["env", name]:
                found = {**self.job.env, **self.job.job_env}.get(name, "")
            case _:
                found = None
        if found is None:
            raise UnsupportedError(f"expression not supported here: {expression}")
        return found

    def render(self, text: Any) -> str:
        return EXPRESSION.sub(lambda m: self.value(m.group(1)), str(text))


class ActionRunner:
    def __init__(
        self,
        workspace: Path,
        temp: Path,
        env: dict[str, str],
        *,
        skip_remote: frozenset[str] = frozenset({"actions/setup-python"}),
        runner_environment: str = "github-hosted",
        cancel_when: Callable[[], bool] | None = None,
    ) -> None:
        self.job = Job(workspace, temp, dict(env), skip_remote, runner_environment, cancel_when)

    def run(self, action_dir: Path, inputs: dict[str, str]) -> Result:
        """Run the composite action in `action_dir` with `inputs` (by their YAML names)."""
        try:
            outputs = self._action(action_dir, inputs)
        except StepFailedError:
            return Result({}, succeeded=False, job=self.job)
        return Result(outputs, succeeded=True, job=self.job)

    def _action(self, action_dir: Path, given: dict[str, str]) -> dict[str, str]:
        metadata = yaml.safe_load((action_dir / "action.yml").read_text())
        if metadata["runs"]["using"] != "composite":
            raise UnsupportedError(f"{action_dir}: only composite actions run here")
        declared = metadata.get("inputs") or {}
        unknown = set(given) - set(declared)
        if unknown:
            raise UnsupportedError(f"{action_dir}: unknown inputs {sorted(unknown)}")
        context = Context({}, {}, action_dir.resolve(), self.job)
        for name, spec in declared.items():
            value = given.get(name)
            context.inputs[name] = (
                value if value is not None else context.render(spec.get("default", ""))
            )
        for step in metadata["runs"]["steps"]:
            if "if" in step:
                raise UnsupportedError("steps with `if:` are not evaluated here")
            outputs = self._step(step, context)
            if "id" in step:
                context.steps[step["id"]] = outputs
        return {
            name: context.render(spec["value"])
            for name, spec in (metadata.get("outputs") or {}).items()
        }

    def _step(self, step: dict[str, Any], context: Context) -> dict[str, str]:
        if "uses" in step:
            uses = str(step["uses"])
            with_inputs = {k: context.render(v) for k, v in (step.get("with") or {}).items()}
            if uses.startswith("./"):
                return self._action((self.job.workspace / uses).resolve(), with_inputs)
            if uses.split("@", 1)[0] in self.job.skip_remote:
                self.job.skipped.append(uses)
                return {}
            raise UnsupportedError(f"a remote action can't run offline: {uses}")
        if step.get("shell") != "bash":
            raise UnsupportedError("run steps must declare `shell: bash`")
        return self._run(step, context)

    def _run(self, step: dict[str, Any], context: Context) -> dict[str, str]:
        job = self.job
        files = {kind: job.new_file(kind) for kind in ("output", "env", "path", "summary")}
        path = os.pathsep.join([*reversed(job.path_entries), job.env.get("PATH", os.defpath)])
        env = {
            **job.env,
            **job.job_env,
            "PATH": path,
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(job.workspace),
            "RUNNER_TEMP": str(job.temp),
            "GITHUB_ACTION_PATH": str(context.action_path),
            "GITHUB_OUTPUT": str(files["output"]),
            "GITHUB_ENV": str(files["env"]),
            "GITHUB_PATH": str(files["path"]),
            "GITHUB_STEP_SUMMARY": str(files["summary"]),
        }
        env.update({k: context.render(v) for k, v in (step.get("env") or {}).items()})
        script = context.render(step["run"])
        with tempfile.NamedTemporaryFile("w", suffix=".sh", dir=job.temp, delete=False) as f:
            f.write(script)
        returncode, output = self._bash(f.name, env)
        Path(f.name).unlink()
        # One stream, in order: a mask applies only to the lines after it, as on GitHub.
        for line in output.splitlines():
            self._line(line)
        job.job_env.update(read_file_command(files["env"]))
        job.path_entries += [p for p in files["path"].read_text().splitlines() if p.strip()]
        job.summary.append(files["summary"].read_text())
        if job.cancelled:
            job.log.append(f"step {step.get('name', step.get('id'))!r} was cancelled")
            raise StepFailedError(returncode)
        if returncode != 0:
            job.log.append(f"step {step.get('name', step.get('id'))!r} failed")
            raise StepFailedError(returncode)
        return read_file_command(files["output"])

    def _bash(self, script: str, env: dict[str, str]) -> tuple[int, str]:
        """Run the step's script in a process group of its own; its exit code and output."""
        job = self.job
        with subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
            cwd=job.workspace, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True,
        ) as process:  # fmt: skip
            deadline = time.monotonic() + STEP_TIMEOUT
            while True:
                try:
                    output, _ = process.communicate(timeout=POLL_SECONDS)
                    return process.returncode, output
                except subprocess.TimeoutExpired:
                    pass  # communicate keeps what it read so far
                if time.monotonic() > deadline or (job.cancel_when and job.cancel_when()):
                    job.cancelled = True
                    return self._cancel(process)

    def _cancel(self, process: subprocess.Popen[str]) -> tuple[int, str]:
        for sent, wait in CANCEL_GRACE:
            process.send_signal(sent)
            try:
                output, _ = process.communicate(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            self._kill_tree(process)  # what the step left behind, as the runner does
            return process.returncode, output
        self._kill_tree(process)
        output, _ = process.communicate()
        return process.returncode, output

    @staticmethod
    def _kill_tree(process: subprocess.Popen[str]) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)

    def _line(self, line: str) -> None:
        job = self.job
        command = COMMAND.match(line)
        if command and command.group(1) == "add-mask":
            secret = unescape(command.group(3))
            if secret:
                job.masks.append(secret)
            job.log.append("::add-mask::***")
            return
        line = job.masked(line)
        job.log.append(line)
        command = COMMAND.match(line)
        if command and command.group(1) in {"error", "warning", "notice"}:
            properties = dict(
                p.split("=", 1) for p in (command.group(2) or "").split(",") if "=" in p
            )
            title = unescape(properties.get("title", ""))
            job.annotations.append(Annotation(command.group(1), title, unescape(command.group(3))))


class StepFailedError(Exception):
    """A step exited non-zero; the action stops there, as on GitHub."""
