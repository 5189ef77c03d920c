"""Recognising a job that counted already (`bench-published-before`).

A job counts once: published, or uploaded with its run token. Its row keeps Harbor's job
id and a fingerprint of each trial (task, start, finish, token counts) even after it is
deleted (`app.checks.summarize.fingerprint`), and each counted trial's digest goes into
`trial_prints`, so a copy is found by its job id or, when the id was changed, by any one
of its trials. Spec: ../shared/spec/hbench-withdraw-delete-report.txt, "A job that had a
score".
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.db.models import Job, TrialPrint
from hbench.errors import Problem
from registry.jsonfile import canonical

PUBLISHED_BEFORE = "bench-published-before"
AGAIN = "and a job is published once: run the benchmark again for a new result"
TASK_LENGTH = 255
IN_CHUNK = 500
"""Digests per `IN (…)` query: well under every database's limit on bound parameters."""


def trial_digests(fingerprint: Mapping[str, Any] | None) -> dict[str, str]:
    """Each trial's digest, to its task. A trial without a start time is left out: with
    nothing but its task and token counts, unrelated trials would look alike."""
    digests: dict[str, str] = {}
    for trial in (fingerprint or {}).get("trials") or []:
        if not isinstance(trial, dict) or trial.get("started_at") is None:
            continue
        text = canonical({key: trial.get(key) for key in sorted(trial)})
        digests[hashlib.sha256(text.encode()).hexdigest()] = str(trial.get("task") or "?")
    return digests


def job_message(job_id: str) -> str:
    return f"hbench job {job_id} was published before, {AGAIN}"


def trial_message(task: str) -> str:
    return f"a trial of {task} was published before, {AGAIN}"


def published_before(
    session: Session, fingerprint: Mapping[str, Any] | None, *, exclude: uuid.UUID | None = None
) -> Problem | None:
    """Why a job with this fingerprint can't count again, or None when it can.

    `exclude` is the job's own row, when it is stored already (publishing it).
    """
    return published_before_each(session, [(fingerprint, exclude)])[0]


Seen = tuple[Mapping[str, Any] | None, uuid.UUID | None]
"""A job to look for: its fingerprint, and its own row when it is stored (left out)."""


def published_before_each(session: Session, jobs: Sequence[Seen]) -> list[Problem | None]:
    """`published_before` of each job, in order: one query for all their Harbor job ids and
    one per `IN_CHUNK` of all their trials' digests, however many jobs (a page of Your
    bench asks for all of its jobs at once)."""
    harbor_ids = [_harbor_id(fingerprint) for fingerprint, _ in jobs]
    counted = _counted_rows(session, {h for h in harbor_ids if h is not None})
    digests = [trial_digests(fingerprint) for fingerprint, _ in jobs]
    prints = _printed_rows(session, {key for found in digests for key in found})
    answers: list[Problem | None] = []
    for (_, exclude), harbor_id, found in zip(jobs, harbor_ids, digests, strict=True):
        if harbor_id is not None and counted.get(harbor_id, set()) - {exclude}:
            answers.append(Problem(PUBLISHED_BEFORE, job_message(str(harbor_id))))
            continue
        seen = next((key for key in sorted(found) if prints.get(key, set()) - {exclude}), None)
        answers.append(
            None if seen is None else Problem(PUBLISHED_BEFORE, trial_message(found[seen]))
        )
    return answers


def _harbor_id(fingerprint: Mapping[str, Any] | None) -> uuid.UUID | None:
    try:
        return uuid.UUID(str((fingerprint or {}).get("job_id") or ""))
    except ValueError:
        return None


def _counted_rows(session: Session, harbor_ids: set[uuid.UUID]) -> dict[uuid.UUID, set[uuid.UUID]]:
    """The rows that counted of each Harbor job id: published at some time (withdrawn and
    deleted ones too), or uploaded as an issued run."""
    rows: dict[uuid.UUID, set[uuid.UUID]] = {}
    counted = or_(Job.published_at.is_not(None), Job.issued_run_id.is_not(None))
    keys = sorted(harbor_ids)
    for start in range(0, len(keys), IN_CHUNK):
        query = select(Job.job_id, Job.id).where(Job.job_id.in_(keys[start : start + IN_CHUNK]))
        for harbor_id, row_id in session.execute(query.where(counted)):
            rows.setdefault(harbor_id, set()).add(row_id)
    return rows


def _printed_rows(session: Session, digests: set[str]) -> dict[str, set[uuid.UUID]]:
    """The rows whose counted trials have each of these digests."""
    rows: dict[str, set[uuid.UUID]] = {}
    keys = sorted(digests)
    for start in range(0, len(keys), IN_CHUNK):
        query = select(TrialPrint.digest, TrialPrint.job_id)
        query = query.where(TrialPrint.digest.in_(keys[start : start + IN_CHUNK]))
        for digest, row_id in session.execute(query):
            rows.setdefault(digest, set()).add(row_id)
    return rows


def record_prints(session: Session, job: Job) -> int:
    """Keep the digests of a counted job's trials; idempotent. Returns how many were new."""
    known = set(session.scalars(select(TrialPrint.digest).where(TrialPrint.job_id == job.id)))
    new = [
        TrialPrint(job_id=job.id, digest=digest, task=task[:TASK_LENGTH])
        for digest, task in trial_digests(job.fingerprint).items()
        if digest not in known
    ]
    session.add_all(new)
    return len(new)
