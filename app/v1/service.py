"""The runs store: pushed summaries, runs published on boards, and reading them back.

Functions take the caller's session. `push_run` commits (its answer must not be sent
before the run is stored); `record_published_run` and `reject_published_run` do not, so
publishing and take-downs keep one transaction for the job's row, the outbox and this.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, func, or_, select
from sqlalchemy.orm import Session

from app.datarepo.changes import PushedRunChange
from app.datarepo.outbox import enqueue
from app.db.models import Account, Job, ReproducedRun, ReproducedRunStatus
from app.db.summary import JobSummary
from app.ratelimit import check_and_record
from app.uploads.redact import redact_text
from app.v1 import policy
from app.v1.aggregates import Scored
from app.v1.schemas import (
    Pagination,
    RunEvidence,
    RunRecord,
    RunSubmission,
    TaskReward,
    timestamp,
)
from hbench.errors import HbenchError
from registry.datarepo.models import PushedReward, PushedRun
from registry.evidence import LEVELS, describe
from registry.loader import Registry

COUNTED = (ReproducedRunStatus.UPLOADED, ReproducedRunStatus.VALIDATED)
"""Runs the list and the aggregates show: a run taken down is `rejected`, and left out."""


def push_run(
    session: Session,
    submission: RunSubmission,
    *,
    registry: Registry,
    account: Account | None,
    address: str | None,
    limits: policy.PushLimits,
    now: datetime,
) -> ReproducedRun:
    """Store a pushed summary as `uploaded`, within the address's and account's limits, and
    send it to the data repository in the same transaction (`pushed-runs/<id>.json`, the
    site's runs pages). Its free text is redacted first, as a job's is."""
    policy.check_submission(submission, registry)
    submission = redacted(submission)
    user = str(account.id) if account is not None else None
    decision = check_and_record(session, policy.push_limits(limits, address, user), now)
    if not decision.allowed:
        wait = decision.retry_after.total_seconds() if decision.retry_after else 0
        raise RateLimitedError(policy.limit_message(limits), max(1, math.ceil(wait)))
    row = new_row(submission, registry, now=now, status=ReproducedRunStatus.UPLOADED)
    row.user_id = account.id if account is not None else None
    session.add(row)
    enqueue(session, PushedRunChange(run=pushed_record(row, account)), at=now)
    session.commit()
    return row


def redacted(submission: RunSubmission) -> RunSubmission:
    """The summary with what looks like a key replaced in every text it holds, before it is
    stored and made public: the model and harness as typed, the notes, the task names."""
    rewards = submission.task_rewards
    return submission.model_copy(
        update={
            "model": redact_text(submission.model).text,
            "harness": redact_text(submission.harness).text,
            "notes": redact_text(submission.notes).text if submission.notes else None,
            "task_rewards": [
                r.model_copy(update={"task": redact_text(r.task).text}) for r in rewards
            ]
            if rewards is not None
            else None,
        }
    )


def pushed_record(row: ReproducedRun, account: Account | None) -> PushedRun:
    """A pushed run as the data repository keeps it."""
    return PushedRun(
        id=row.id, benchmark=row.benchmark_slug, model=row.model, model_slug=row.model_slug,
        harness=row.harness, task_count=row.task_count, n_attempts=row.n_attempts,
        score=row.score, metric=row.metric, tokens_used=row.tokens_used,
        cost_usd=row.cost_usd, harbor_version=row.harbor_version,
        cli_version=row.cli_version, results_hash=row.results_hash,
        task_rewards=[PushedReward.model_validate(r) for r in row.task_rewards]
        if row.task_rewards is not None
        else None,
        notes=row.notes, pushed_by=account.login if account is not None else None,
        pushed_at=row.created_at,
    )  # fmt: skip


class RateLimitedError(HbenchError):
    """`rate_limited`, with the seconds until a slot frees (the `retry-after` header)."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__("rate_limited", message)
        self.retry_after = retry_after


def new_row(
    submission: RunSubmission, registry: Registry, *, now: datetime, status: ReproducedRunStatus
) -> ReproducedRun:
    rewards = submission.task_rewards
    return ReproducedRun(
        id=policy.new_run_id(now),
        benchmark_slug=submission.benchmark_slug,
        model=submission.model,
        model_slug=policy.model_slug(registry, submission.model),
        harness=submission.harness,
        task_count=submission.task_count,
        n_attempts=submission.n_attempts,
        score=submission.score,
        metric=submission.metric,
        tokens_used=submission.tokens_used,
        cost_usd=submission.cost_usd,
        harbor_version=submission.harbor_version,
        cli_version=submission.cli_version,
        results_hash=submission.results_hash.lower() if submission.results_hash else None,
        task_rewards=[r.model_dump() for r in rewards] if rewards is not None else None,
        notes=submission.notes,
        status=status,
        created_at=now,
    )


def record_published_run(
    session: Session,
    job: Job,
    board: str,
    *,
    registry: Registry,
    now: datetime,
    evidence: Sequence[str] | None = None,
) -> ReproducedRun | None:
    """Record a job just published on `board` as a `validated` run of the runs API.

    Publishing calls this in its own transaction, and commits. Once per job: publishing
    again returns the run already recorded. None when the board's benchmark is not in the
    registry, since every run of the API names a registry benchmark.
    """
    existing = session.scalars(select(ReproducedRun).where(ReproducedRun.job_ref == job.id))
    found = existing.one_or_none()
    if found is not None:
        return found
    summary = JobSummary.of(job)
    benchmark = board_benchmark(registry, board, summary.dataset)
    if benchmark is None:
        return None
    metric = registry.benchmarks[benchmark].metric
    submission = policy.published_submission(summary, benchmark, metric)
    row = new_row(submission, registry, now=now, status=ReproducedRunStatus.VALIDATED)
    row.user_id, row.job_ref = job.owner_id, job.id
    row.evidence = list(evidence) if evidence is not None else None
    session.add(row)
    session.flush()
    return row


def board_benchmark(registry: Registry, board: str, dataset: object) -> str | None:
    """The benchmark of a board: the registry's board, or the one run on its dataset."""
    known = registry.boards.get(board)
    if known is not None:
        return known.benchmark if known.benchmark in registry.benchmarks else None
    matches = registry.benchmarks_for_dataset(dataset) if isinstance(dataset, str) else []
    return matches[0].slug if matches else None


def reject_published_run(session: Session, job_id: uuid.UUID) -> None:
    """Mark the run recorded for a job `rejected` (taken down), uncommitted."""
    row = session.scalars(select(ReproducedRun).where(ReproducedRun.job_ref == job_id))
    found = row.one_or_none()
    if found is not None:
        found.status = ReproducedRunStatus.REJECTED


@dataclass(frozen=True)
class RunFilter:
    benchmark: str | None = None
    model: str | None = None
    harness: str | None = None


def _filtered(where: RunFilter) -> Select[ReproducedRun]:
    query = select(ReproducedRun).where(ReproducedRun.status.in_(COUNTED))
    if where.benchmark:
        query = query.where(ReproducedRun.benchmark_slug == where.benchmark)
    if where.model:
        # A model is asked for by its registry slug, or by the text pushed.
        query = query.where(
            or_(ReproducedRun.model_slug == where.model, ReproducedRun.model == where.model)
        )
    if where.harness:
        query = query.where(ReproducedRun.harness == where.harness)
    return query


def list_runs(
    session: Session, where: RunFilter, *, page: int, limit: int
) -> tuple[list[ReproducedRun], Pagination]:
    """One page of runs, newest first, with the page's place among them all."""
    query = _filtered(where)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(
        query.order_by(ReproducedRun.created_at.desc(), ReproducedRun.id.desc())
        .offset((page - 1) * limit)
        .limit(limit)
    )
    pages = math.ceil(total / limit)
    return list(rows), Pagination(page=page, limit=limit, total=total, total_pages=pages)


def get_run(session: Session, run_id: str) -> ReproducedRun:
    row = session.get(ReproducedRun, run_id)
    if row is None:
        raise HbenchError("not_found", f"no run {run_id}; GET /v1/runs lists them")
    return row


def scored_runs(session: Session, where: RunFilter) -> list[Scored]:
    """The counted runs the aggregates summarise; a run's model is its registry slug, or
    the text pushed when it names none."""
    query = select(
        ReproducedRun.benchmark_slug,
        func.coalesce(ReproducedRun.model_slug, ReproducedRun.model),
        ReproducedRun.harness,
        ReproducedRun.score,
        ReproducedRun.created_at,
    ).where(ReproducedRun.status.in_(COUNTED))
    if where.benchmark:
        query = query.where(ReproducedRun.benchmark_slug == where.benchmark)
    if where.model:
        query = query.where(
            or_(ReproducedRun.model_slug == where.model, ReproducedRun.model == where.model)
        )
    return [Scored(*row) for row in session.execute(query)]


def record(row: ReproducedRun, logins: dict[uuid.UUID, str]) -> RunRecord:
    """A stored run as the API shows it; its account shown by login."""
    rewards = row.task_rewards
    return RunRecord(
        id=row.id,
        benchmark_slug=row.benchmark_slug,
        model=row.model,
        model_slug=row.model_slug,
        harness=row.harness,
        task_count=row.task_count,
        n_attempts=row.n_attempts,
        score=row.score,
        metric=row.metric,
        tokens_used=row.tokens_used,
        cost_usd=row.cost_usd,
        harbor_version=row.harbor_version,
        cli_version=row.cli_version,
        results_hash=row.results_hash,
        task_rewards=[TaskReward.model_validate(r) for r in rewards]
        if rewards is not None
        else None,
        notes=row.notes,
        user_id=logins.get(row.user_id) if row.user_id is not None else None,
        status=row.status.value,
        created_at=timestamp(row.created_at),
        evidence=evidence_of(row),
    )


PUSHED = (
    "A score summary pushed to the runs API: the service checked its form and the names it "
    "uses, and no job backs it, so it proves nothing about the score."
)


def evidence_of(row: ReproducedRun) -> RunEvidence:
    """What the run proves: a published run's levels, or nothing for a pushed summary."""
    if row.job_ref is None:
        return RunEvidence(levels=[], description=PUSHED)
    levels = [level for level in row.evidence or ["self-reported"] if level in LEVELS]
    return RunEvidence(levels=levels, description=describe(levels))


def records(session: Session, rows: list[ReproducedRun]) -> list[RunRecord]:
    ids = {row.user_id for row in rows if row.user_id is not None}
    logins: dict[uuid.UUID, str] = {}
    if ids:
        found = session.execute(select(Account.id, Account.login).where(Account.id.in_(ids)))
        logins = dict(found.all())
    return [record(row, logins) for row in rows]
