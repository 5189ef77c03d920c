"""A small runner for a reusable workflow's jobs, doing locally what GitHub does with them:
jobs in the order their `needs` give, each job's `if:`, a `strategy.matrix` fanned out from
an expression (`fromJSON(needs.issue.outputs.shards)`), each matrix job on a runner job of
its own and all of them at once, and the jobs' `outputs` handed to the jobs that need them.

A job's steps run through `ActionRunner` as one composite action: everything but
`steps.*` is evaluated first here, in the workflow's contexts (`inputs` with the
workflow_call's types and defaults, `secrets`, `matrix`, `needs`, `github`), the steps
whose `if:` is false are left out, and `steps.*` is left for the action runner, which
sets them as the steps run. GitHub's expression language is evaluated as far as the
workflow uses it: literals, contexts, `!`, `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||`,
parentheses, and the functions `startsWith`, `fromJSON`, `toJSON`, `always`, `success`,
`failure` and `cancelled`. Remote actions are out of reach offline: `actions/checkout`
stands for the checkout its caller places in the workspace (this repository, at
`.hbench-action`), and the others named in `skip_remote` are recorded as skipped.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from tests.action.runner import ActionRunner, Result, UnsupportedError
from tools.pin_release import pin_action_image

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.DOTALL)
TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>\d+(?:\.\d+)?)"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[<>!(),\[\]])|(?P<name>[A-Za-z_][\w.-]*(?<![.-])))"
)
SKIP_REMOTE = frozenset({"actions/setup-python", "actions/checkout"})
ROOT = Path(__file__).resolve().parents[2]


Thunk = Callable[[], Any]


class Expression:
    """One `${{ … }}` expression, parsed by precedence (`||` < `&&` < comparison < `!`) into
    thunks, so `&&` and `||` evaluate their right side only when GitHub does."""

    def __init__(self, text: str, contexts: Mapping[str, Any]) -> None:
        self.tokens = tokenize(text)
        self.position = 0
        self.contexts = contexts

    def value(self) -> Any:
        thunk = self.either()
        if self.position != len(self.tokens):
            raise UnsupportedError(f"can't evaluate past {self.tokens[self.position]!r}")
        return thunk()

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def either(self) -> Thunk:
        left = self.both()
        while self.peek() == "||":
            self.take()
            right = self.both()
            left = partial(lambda a, b: a() if truthy(a()) else b(), left, right)
        return left

    def both(self) -> Thunk:
        left = self.compared()
        while self.peek() == "&&":
            self.take()
            right = self.compared()
            left = partial(lambda a, b: b() if truthy(a()) else a(), left, right)
        return left

    def compared(self) -> Thunk:
        left = self.negated()
        while self.peek() in {"==", "!=", "<", "<=", ">", ">="}:
            op, right = self.take(), self.negated()
            left = partial(lambda o, a, b: compare(o, a(), b()), op, left, right)
        return left

    def negated(self) -> Thunk:
        if self.peek() == "!":
            self.take()
            inner = self.negated()
            return lambda: not truthy(inner())
        return self.atom()

    def atom(self) -> Thunk:
        token = self.take()
        if token == "(":
            inner = self.either()
            self.expect(")")
            return inner
        if self.peek() == "(":
            self.take()
            arguments = [] if self.peek() == ")" else self.arguments()
            self.expect(")")
            return lambda: call(token, [argument() for argument in arguments], self.contexts)
        return lambda: literal(token, self.contexts)

    def arguments(self) -> list[Thunk]:
        values = [self.either()]
        while self.peek() == ",":
            self.take()
            values.append(self.either())
        return values

    def expect(self, token: str) -> None:
        if self.peek() != token:
            raise UnsupportedError(f"expected {token!r}, found {self.peek()!r}")
        self.take()


LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


def literal(token: str, contexts: Mapping[str, Any]) -> Any:
    """A string, number, `true`, `false` or `null`; else a context's property."""
    if token.startswith("'"):
        return token[1:-1].replace("''", "'")
    if re.fullmatch(r"\d+(?:\.\d+)?", token):
        return float(token) if "." in token else int(token)
    if token in LITERALS:
        return LITERALS[token]
    return look_up(token, contexts)


def tokenize(text: str) -> list[str]:
    tokens, position = [], 0
    while position < len(text.rstrip()):
        match = TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise UnsupportedError(f"can't read the expression {text!r} at {position}")
        tokens.append(match.group(match.lastgroup or 0))
        position = match.end()
    return tokens


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "", 0.0)


def compare(op: str, left: Any, right: Any) -> bool:
    """GitHub's loose comparison: values of two types (null, a number, a string) compare as
    numbers, strings ignoring case."""
    if isinstance(left, str) and isinstance(right, str):
        left, right = left.lower(), right.lower()
    elif kind(left) != kind(right) or kind(left) == "number":
        left, right = as_number(left), as_number(right)
    return bool({
        "==": left == right, "!=": left != right, "<": left < right,
        "<=": left <= right, ">": left > right, ">=": left >= right,
    }[op])  # fmt: skip


def kind(value: Any) -> str:
    """GitHub's types as comparison sees them: null, numbers (booleans among them), strings."""
    if value is None:
        return "null"
    return "number" if isinstance(value, bool | int | float) else type(value).__name__


def as_number(value: Any) -> float:
    if value in (None, ""):
        return 0.0
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "startsWith": lambda text, prefix: str(text).lower().startswith(str(prefix).lower()),
    "fromJSON": lambda text: json.loads(str(text)),
    "toJSON": json.dumps,
}
STATUS_FUNCTIONS = {"always": None, "success": "success", "failure": "failure",
                    "cancelled": "cancelled"}  # fmt: skip
"""The status functions, by the job status each is true for (`always`: any)."""


def call(name: str, arguments: list[Any], contexts: Mapping[str, Any]) -> Any:
    if name in STATUS_FUNCTIONS and not arguments:
        wanted = STATUS_FUNCTIONS[name]
        return wanted is None or contexts.get("job-status", "success") == wanted
    if name in FUNCTIONS:
        return FUNCTIONS[name](*arguments)
    raise UnsupportedError(f"function not supported here: {name}({len(arguments)} arguments)")


def look_up(path: str, contexts: Mapping[str, Any]) -> Any:
    """`inputs.shard-runs-on`, `needs.issue.outputs.shards`, `matrix.shard.run_id`: a
    missing property is null, as on GitHub."""
    root, *parts = path.split(".")
    if root not in contexts:
        raise UnsupportedError(f"context not supported here: {root}")
    value: Any = contexts[root]
    for part in parts:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def render(text: Any, contexts: Mapping[str, Any], *, keep_steps: bool = True) -> Any:
    """A value with its expressions evaluated: the value itself for a lone expression, else
    text. `steps.*` expressions are kept for the action runner, which knows the steps."""
    if not isinstance(text, str):
        return text
    if keep_steps and "steps." in text:
        # Kept whole: such a value holds only step expressions here (the steps' outputs).
        return text
    lone = EXPRESSION.fullmatch(text.strip())
    if lone is not None:
        return Expression(lone.group(1), contexts).value()
    return EXPRESSION.sub(lambda m: as_text(Expression(m.group(1), contexts).value()), text)


def rendered(value: Any, contexts: Mapping[str, Any]) -> Any:
    """A step's mapping, its strings rendered (the `run:` script is an env-only step's)."""
    if isinstance(value, dict):
        return {key: rendered(item, contexts) for key, item in value.items()}
    if isinstance(value, list):
        return [rendered(item, contexts) for item in value]
    result = render(value, contexts)
    return as_text(result) if not isinstance(result, str) else result


@dataclass
class JobRun:
    """One run of a workflow job (one per matrix entry): what it ran on, and its result."""

    name: str
    matrix: dict[str, Any]
    runs_on: Any
    timeout_minutes: Any
    result: Result
    seconds: float = 0.0
    """How long its steps took, on this machine."""


@dataclass
class WorkflowRun:
    """Every job's runs, by job id, and the `needs` context the jobs saw."""

    jobs: dict[str, list[JobRun]] = field(default_factory=dict)
    needs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def succeeded(self, job: str) -> bool:
        return self.needs.get(job, {}).get("result") == "success"


RunnerFor = Callable[[str], ActionRunner]
"""A runner for a job, by its name (`shard-2`): its own RUNNER_TEMP, as a fresh runner's."""


def workflow_inputs(workflow: Mapping[Any, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """The `inputs` context of a workflow_call: defaults, and numbers and booleans typed."""
    declared = workflow[True]["workflow_call"]["inputs"]  # YAML 1.1 reads `on` as True
    unknown = set(given) - set(declared)
    if unknown:
        raise UnsupportedError(f"unknown workflow inputs {sorted(unknown)}")
    values: dict[str, Any] = {}
    for name, spec in declared.items():
        value = given.get(name, spec.get("default"))
        if spec.get("type") == "number" and value is not None:
            value = float(value) if "." in str(value) else int(value)
        elif spec.get("type") == "boolean" and isinstance(value, str):
            value = value.lower() == "true"
        values[name] = value
    return values


def run_workflow(
    path: Path,
    inputs: Mapping[str, Any],
    secrets: Mapping[str, str],
    runner_for: RunnerFor,
    *,
    matrix_at_once: bool = True,
) -> WorkflowRun:
    """Run the workflow's jobs in order, each matrix entry on a runner of its own: all of a
    matrix's jobs at once, as GitHub starts them on as many runners, or one after another
    (`matrix_at_once=False`, to time each alone)."""
    workflow = yaml.safe_load(path.read_text())
    contexts: dict[str, Any] = {
        "inputs": workflow_inputs(workflow, inputs),
        "secrets": dict(secrets),
        "github": {"workflow": workflow.get("name", "")},
    }
    run = WorkflowRun()
    for name, job in ordered_jobs(workflow["jobs"]):
        needs = needs_of(job)
        seen = {**contexts, "needs": {n: run.needs[n] for n in needs}}
        all_passed = all(run.needs[n]["result"] == "success" for n in needs)
        condition = job.get("if", "success()")
        status = "success" if all_passed else "failure"
        wanted = truthy(render(f"${{{{ {condition} }}}}", {**seen, "job-status": status}))
        if not wanted:
            run.needs[name] = {"result": "skipped", "outputs": {}}
            continue
        entries = matrix_entries(job, seen)
        each = partial(run_matrix_job, name, job, seen, runner_for)
        if matrix_at_once and len(entries) > 1:
            with ThreadPoolExecutor(max_workers=len(entries)) as pool:
                runs = list(pool.map(each, entries))
        else:
            runs = [each(entry) for entry in entries]
        run.jobs[name] = runs
        passed = all(r.result.succeeded for r in runs)
        outputs: dict[str, str] = {}
        for job_run in runs:  # GitHub keeps a matrix's last job's outputs
            outputs.update({k: v for k, v in job_run.result.outputs.items() if v})
        run.needs[name] = {"result": "success" if passed else "failure", "outputs": outputs}
    return run


def needs_of(job: Mapping[str, Any]) -> list[str]:
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else list(needs)


def ordered_jobs(jobs: Mapping[str, Any]) -> list[tuple[str, Any]]:
    done: list[str] = []
    while len(done) < len(jobs):
        ready = [
            name
            for name, job in jobs.items()
            if name not in done and all(n in done for n in needs_of(job))
        ]
        if not ready:
            raise UnsupportedError("the jobs' needs form a cycle")
        done += ready
    return [(name, jobs[name]) for name in done]


def matrix_entries(job: Mapping[str, Any], contexts: Mapping[str, Any]) -> list[dict[str, Any]]:
    matrix = (job.get("strategy") or {}).get("matrix")
    if matrix is None:
        return [{}]
    ((key, values),) = matrix.items()
    evaluated = render(values, contexts, keep_steps=False)
    if not isinstance(evaluated, list) or not evaluated:
        raise UnsupportedError(f"the matrix's {key} is not a list: {evaluated!r}")
    return [{key: value} for value in evaluated]


def run_matrix_job(
    name: str,
    job: Mapping[str, Any],
    contexts: Mapping[str, Any],
    runner_for: RunnerFor,
    entry: dict[str, Any],
) -> JobRun:
    return run_job(name, job, {**contexts, "matrix": entry}, runner_for)


def run_job(
    name: str, job: Mapping[str, Any], contexts: Mapping[str, Any], runner_for: RunnerFor
) -> JobRun:
    """The job's steps as one composite action, its expressions but `steps.*` evaluated."""
    entry = contexts.get("matrix") or {}
    label = name if not entry else f"{name}-{next(iter(entry.values())).get('index', '')}"
    steps = []
    for step in job["steps"]:
        condition = step.get("if")
        if condition is not None and not truthy(render(f"${{{{ {condition} }}}}", contexts)):
            continue
        steps.append(rendered({k: v for k, v in step.items() if k != "if"}, contexts))
    action = {
        "name": f"job {label}",
        "runs": {"using": "composite", "steps": steps},
        "outputs": {k: {"value": v} for k, v in (job.get("outputs") or {}).items()},
    }
    runner = runner_for(label)
    with tempfile.TemporaryDirectory(prefix=f"hbench-job-{label}-") as folder:
        (Path(folder) / "action.yml").write_text(yaml.safe_dump(action, sort_keys=False))
        started = time.perf_counter()
        result = runner.run(Path(folder), {})
        seconds = time.perf_counter() - started
    return JobRun(
        name=label,
        matrix=dict(entry),
        runs_on=render(job.get("runs-on"), contexts, keep_steps=False),
        timeout_minutes=render(job.get("timeout-minutes"), contexts, keep_steps=False),
        result=result,
        seconds=seconds,
    )


def place_checkout(workspace: Path, image: str) -> None:
    """What the workflow's checkout step leaves at `.hbench-action`: this repository, as a
    release of it is, its root action's runner image pinned to `image` (a tag built here)."""
    checkout = workspace / ".hbench-action"
    checkout.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in {"action.yml", ".git", ".venv"}:
            (checkout / entry.name).symlink_to(entry)
    pinned = pin_action_image((ROOT / "action.yml").read_text(), image)
    (checkout / "action.yml").write_text(pinned)
