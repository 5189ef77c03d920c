"""The runs API's pure rules: run ids, the registry checks, model names, limits, and the
record of a run published on a board.

No I/O: `service` reads and writes the database around these.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.db.summary import JobSummary
from app.ratelimit import Limit, address_bucket
from app.v1.schemas import MAX_TASK_REWARDS, RunSubmission, TaskReward
from hbench.errors import HbenchError, Problem
from registry import naming
from registry.loader import Registry

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ID_PREFIX = "run_"
WINDOW = timedelta(hours=24)


def new_run_id(now: datetime, randomness: bytes | None = None) -> str:
    """`run_` and a ULID: 48 bits of milliseconds, then 80 random bits, in Crockford base32,
    so ids sort by creation time and never collide in practice."""
    random_part = randomness if randomness is not None else secrets.token_bytes(10)
    value = (int(now.timestamp() * 1000) << 80) | int.from_bytes(random_part[:10], "big")
    chars = [CROCKFORD[(value >> shift) & 31] for shift in range(125, -5, -5)]
    return ID_PREFIX + "".join(chars)


def benchmark_problems(submission: RunSubmission, registry: Registry) -> list[Problem]:
    """`benchmarkSlug` must name a benchmark of the registry."""
    if submission.benchmark_slug in registry.benchmarks:
        return []
    return [
        Problem(
            "validation_error",
            f"benchmarkSlug {submission.benchmark_slug!r} is not a benchmark of the registry; "
            "`hbench registry search` lists them",
            "benchmarkSlug",
        )
    ]


def check_submission(submission: RunSubmission, registry: Registry) -> None:
    problems = benchmark_problems(submission, registry)
    if problems:
        raise HbenchError.from_problems(problems)


def model_slug(registry: Registry, text: str) -> str | None:
    """The one `modelSlug` of a free-text model name, for the runs, their filters and the
    aggregates alike (`registry.naming`): a registry model by its slug, name, Harbor names
    or aliases, whatever the case or provider prefix; any other model by its normalised
    text (`Anthropic/Claude-Opus-4-8` is `claude-opus-4-8`)."""
    return naming.model_slug(registry, text)


def model_filter(registry: Registry, text: str | None) -> str | None:
    """A `?model=` query as the slug runs are stored under; the text itself when it
    normalises to nothing."""
    if not text:
        return None
    return model_slug(registry, text) or text


@dataclass(frozen=True)
class PushLimits:
    """How many pushes an address and an account may make in the window."""

    per_ip: int
    per_user: int


def push_limits(limits: PushLimits, address: str | None, user: str | None) -> list[Limit]:
    """The buckets a push counts in. Every push counts toward its address. Anonymous, the
    address may push `per_ip`; signed in, the account may push `per_user`, and the address
    at most as many, so several accounts behind one address can't multiply the limit."""
    ip = address_bucket("runs", address)
    if user is None:
        return [Limit(ip, limits.per_ip, WINDOW)]
    return [Limit(f"runs:user:{user}", limits.per_user, WINDOW), Limit(ip, limits.per_user, WINDOW)]


def limit_message(limits: PushLimits) -> str:
    return (
        f"Too many run submissions ({limits.per_ip}/24h per IP, {limits.per_user}/24h per "
        "user). Try again later."
    )


def published_submission(summary: JobSummary, benchmark: str, metric: str) -> RunSubmission:
    """A job published on a board, as a run summary: the same figures `hbench push` sends
    (`score = mean reward * 100`, each trial's reward, tokens, cost and versions).

    Built, not validated: its names are the checked job's, which the registry's board
    placed, and a push's rules for typed text (`shown_name`) are not the job's to meet."""
    rewards = task_rewards(summary.results)
    usage = summary.usage
    tokens = [usage.input_tokens, usage.output_tokens]
    return RunSubmission.model_construct(
        benchmark_slug=benchmark,
        model=summary.model or "none",
        harness=summary.agent.name or "unknown",
        task_count=max(1, len(summary.results)),
        n_attempts=max(1, summary.n_attempts),
        score=min(100.0, max(0.0, summary.score * 100)),
        metric=metric,
        # Harbor's input count includes cached tokens already.
        tokens_used=sum(t for t in tokens if t is not None)
        if any(t is not None for t in tokens)
        else None,
        cost_usd=usage.cost_usd,
        harbor_version=_short(summary.harbor_version),
        cli_version=_short(summary.hbench_version),
        # A job of more trials than a summary may list keeps its score, not its rewards.
        task_rewards=rewards if len(rewards) <= MAX_TASK_REWARDS else None,
    )


def task_rewards(results: Mapping[str, Sequence[float | None]]) -> list[TaskReward]:
    """One reward per trial, in task then attempt order; an errored trial counts 0."""
    return [
        TaskReward.model_construct(task=task[:200], reward=float(reward or 0.0))
        for task, rewards in sorted(results.items())
        for reward in rewards
    ]


def _short(value: object) -> str | None:
    return str(value)[:50] if value else None
