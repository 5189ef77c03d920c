"""What the service issues (../shared/spec/hbench-issue-a-run.txt, "What you can issue"):
the request resolved against the registry (`app.runs.lookup`), a table of checks, and
the board's limits.

Pure functions: the registry and the counts come in as values, problems go out. Every
check runs and every failure is returned, not the first; the limits are counted only
once the request itself is sound, since they need its board.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.runs.lookup import Lookup, Target, listing, look_up
from app.runs.schemas import IssueRequest
from hbench.errors import HbenchError, Problem
from registry.loader import Registry
from registry.schema import ISSUED_ATTEMPTS, Board

DAY = timedelta(hours=24)
"""The window of a board's `runsPerDay`."""

RESERVED_KWARGS = {
    "prompt_template_path": "send the template's text as declarative.prompt_template instead",
    "model_name": "the board decides the model",
}
"""Agent options the spec sets itself, and why they can't come from the body."""

INSTRUCTION = re.compile(r"\{\{-?\s*instruction\b")
"""Harbor renders a prompt template with the task's text as `instruction`."""

Check = Callable[[IssueRequest, Lookup], Iterable[Problem]]


def check_request(request: IssueRequest, registry: Registry, *, denied: bool) -> Target:
    """The request's target, or an HbenchError listing every reason it can't be issued."""
    lookup, problems = look_up(request, registry)
    problems = [*problems]
    for check in CHECKS:
        problems.extend(check(request, lookup))
    if denied:
        problems.append(Problem("account-denied", "a maintainer denied this account"))
    if request.names_entry:
        # The spec names this refusal; it leads, whatever else is wrong.
        message = (
            "the service names entries itself, from the agent and its settings; "
            "leave `name` out, and read the name from the answer's `submission`"
        )
        problems.insert(0, Problem("entry-name-generated", message, "body.name"))
    target = lookup.target()
    # A look-up that found no target always says why, so `problems` is never empty here.
    if problems or target is None:
        raise HbenchError.from_problems(problems)
    return target


def runner_problems(board: Board, runner_environment: str | None) -> list[Problem]:
    """A board of GitHub-hosted runs takes a run only from a workflow on such a runner;
    `runner_environment` is the issuing OIDC token's, None for any other issuer."""
    if board.runner != "github-hosted":
        return []
    if runner_environment is None:
        return [
            Problem(
                "board-actions-only",
                f"the board {board.slug} takes only runs a GitHub Actions workflow issues on a "
                "runner GitHub hosts: issue it from the reusable workflow (docs/action.md), "
                "with `permissions: id-token: write`",
            )
        ]
    if runner_environment != "github-hosted":
        return [
            Problem(
                "oidc-runner-self-hosted",
                f"the board {board.slug} takes only runs on runners GitHub hosts, and this "
                f"job runs on a {runner_environment} runner: set the job's `runs-on` to a "
                "GitHub-hosted label (such as ubuntu-latest)",
                "claims.runner_environment",
            )
        ]
    return []


def agent_listed(request: IssueRequest, lookup: Lookup) -> Iterable[Problem]:
    model, agent = lookup.model, request.declarative.agent
    if model is not None and agent not in model.agents:
        message = (
            f"the agent {agent!r} is not issued with {model.slug}; its agents: "
            f"{listing(model.agents)}"
        )
        yield Problem("run-agent-not-allowed", message, "body.declarative.agent")


def attempts_allowed(request: IssueRequest, lookup: Lookup) -> Iterable[Problem]:
    allowed = lookup.board.attempts if lookup.board is not None else list(ISSUED_ATTEMPTS)
    if request.n_attempts not in allowed:
        where = f"the board {lookup.board.slug}" if lookup.board else "an issued run"
        choices = " or ".join(str(n) for n in sorted(allowed))
        message = f"{where} takes {choices} attempts per task, not {request.n_attempts}"
        yield Problem("run-attempts-refused", message, "body.n_attempts")


def kwargs_unreserved(request: IssueRequest, lookup: Lookup) -> Iterable[Problem]:
    for key, why in RESERVED_KWARGS.items():
        if key in request.declarative.kwargs:
            message = f"the option {key} is set by the spec itself ({why}); remove it"
            yield Problem("run-kwargs-reserved", message, f"body.declarative.kwargs.{key}")


OPTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
"""An agent option as Harbor passes it, a Python keyword argument, in ASCII: a name in
another script, form or with an invisible character would show on the board beside the
option it looks like (`temp\u0435rature` with a Cyrillic `\u0435`, NFD `te\u0301mperature`) as
another entry."""


def kwargs_named(request: IssueRequest, _: Lookup) -> Iterable[Problem]:
    for key in request.declarative.kwargs:
        if not OPTION_NAME.match(key):
            message = (
                f"the option {key[:40]!a}{'…' if len(key) > 40 else ''} is no agent option's "
                "name: those are ASCII letters, digits and _, not starting with a digit, up to "
                "100 characters, as on Agents"
            )
            yield Problem("run-kwargs-name-invalid", message, "body.declarative.kwargs")


DOCKER = "docker"
"""Harbor's docker environment: where every issued run's trials run unless its board's
policy allows other environment types (`environments`), or it asks for an environment
class its benchmark allows besides (`customEnvironments`)."""


def environment_allowed(request: IssueRequest, lookup: Lookup) -> Iterable[Problem]:
    wanted, benchmark, board = request.environment, lookup.benchmark, lookup.board
    if wanted is None or benchmark is None:
        return
    if ":" not in wanted:
        # A Harbor environment type: the board's policy lists those its runs may use.
        if board is not None and wanted not in board.environments:
            message = (
                f"the board {board.slug} runs its issued runs in {listing(board.environments)}; "
                f"{wanted!r} is not one. Leave `environment` out to run in "
                f"{board.environments[0]}, or name one of those"
            )
            yield Problem("run-environment-not-allowed", message, "body.environment")
        return
    if wanted not in benchmark.custom_environments:
        allowed = listing([DOCKER, *benchmark.custom_environments])
        message = (
            f"{benchmark.slug}'s runs run in one of: {allowed}; {wanted!r} is not one. Leave "
            "`environment` out to run in Harbor's docker environment"
        )
        yield Problem("run-environment-refused", message, "body.environment")


def concurrency_allowed(request: IssueRequest, lookup: Lookup) -> Iterable[Problem]:
    wanted, board = request.n_concurrent_trials, lookup.board
    if wanted is None or board is None or wanted <= board.max_concurrent_trials:
        return
    message = (
        f"the board {board.slug} runs at most {board.max_concurrent_trials} trials at once, "
        f"not {wanted}; ask for {board.max_concurrent_trials} or fewer, or leave "
        "`n_concurrent_trials` out"
    )
    yield Problem("run-concurrency-refused", message, "body.n_concurrent_trials")


def shards_allowed(request: IssueRequest, lookup: Lookup) -> Iterable[Problem]:
    wanted, board = request.shards, lookup.board
    if board is None or wanted <= board.max_shards:
        return
    message = (
        f"the board {board.slug} splits a run into at most {board.max_shards} shards, not "
        f"{wanted}; ask for {board.max_shards} or fewer, or leave `shards` out"
    )
    yield Problem("run-shards-too-many", message, "body.shards")


def run_tasks(target: Target) -> list[str] | None:
    """The run's task names, sorted: its task set's, else the tasks its benchmark pins;
    None when the registry lists neither (such a run can't be split)."""
    if target.task_set.tasks:
        return sorted(target.task_set.tasks)
    pins = target.benchmark.harbor.task_digests
    return sorted(pins) if pins else None


def run_in(request: IssueRequest, target: Target) -> str:
    """The environment an allowed request's trials run in: the one it asks for, else its
    board's first."""
    return request.environment or target.board.environments[0]


def template_uses_instruction(request: IssueRequest, lookup: Lookup) -> Iterable[Problem]:
    template = request.declarative.prompt_template
    if template is not None and INSTRUCTION.search(template) is None:
        message = (
            "the prompt template never uses {{ instruction }}, so the agent would not see "
            "the task; put {{ instruction }} where the task's text belongs"
        )
        yield Problem("run-prompt-template-invalid", message, "body.declarative.prompt_template")


CHECKS: tuple[Check, ...] = (
    agent_listed,
    attempts_allowed,
    concurrency_allowed,
    environment_allowed,
    kwargs_named,
    kwargs_unreserved,
    shards_allowed,
    template_uses_instruction,
)


@dataclass(frozen=True)
class Usage:
    """One account's runs on one board, as its limits count them."""

    issued_last_day: Sequence[datetime]  # when each run of the last 24 hours was issued
    waiting_until: Sequence[datetime]  # when each run waiting for upload expires


def limit_problems(board: Board, usage: Usage, now: datetime) -> list[Problem]:
    """The board's limits this account has reached, each saying when a slot frees."""
    problems = []
    per_day, waiting = board.limits.runs_per_day, board.limits.runs_waiting
    if len(usage.issued_last_day) >= per_day:
        # With n runs in the window and room for `per_day`, the run issued
        # (n - per_day + 1)-th leaving the window makes room for one more.
        frees = sorted(usage.issued_last_day)[len(usage.issued_last_day) - per_day] + DAY
        message = (
            f"you were issued {len(usage.issued_last_day)} runs on {board.slug} in the last 24 "
            f"hours, its limit, abandoned and expired ones included; the next slot frees "
            f"{when(frees, now)}"
        )
        problems.append(Problem("run-limit-daily", message))
    if len(usage.waiting_until) >= waiting:
        frees = sorted(usage.waiting_until)[len(usage.waiting_until) - waiting]
        message = (
            f"{len(usage.waiting_until)} of your runs on {board.slug} are waiting for upload, "
            f"its limit; upload one, or free a slot now with `hbench runs abandon RUN_ID` "
            f"(`hbench runs list` shows them); otherwise one expires {when(frees, now)}"
        )
        problems.append(Problem("run-limit-waiting", message))
    return problems


def when(moment: datetime, now: datetime) -> str:
    """`at 2026-10-30 14:05 UTC (in 3 h 12 min)`: a time people can act on."""
    minutes = max(0, int((moment - now).total_seconds() + 59) // 60)
    hours, minutes = divmod(minutes, 60)
    wait = f"{hours} h {minutes} min" if hours else f"{minutes} min"
    return f"at {moment:%Y-%m-%d %H:%M} UTC (in {wait})"
