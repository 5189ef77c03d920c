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
from collections.abc import Mapping
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
    if not fingerprint:
        return None
    job_id = str(fingerprint.get("job_id") or "")
    if _job_counted(session, job_id, exclude):
        return Problem(PUBLISHED_BEFORE, job_message(job_id))
    digests = trial_digests(fingerprint)
    if not digests:
        return None
    keys = sorted(digests)
    for start in range(0, len(keys), IN_CHUNK):
        query = select(TrialPrint.digest).where(
            TrialPrint.digest.in_(keys[start : start + IN_CHUNK])
        )
        if exclude is not None:
            query = query.where(TrialPrint.job_id != exclude)
        found = session.scalars(query.limit(1)).first()
        if found is not None:
            return Problem(PUBLISHED_BEFORE, trial_message(digests[found]))
    return None


def _job_counted(session: Session, job_id: str, exclude: uuid.UUID | None) -> bool:
    try:
        harbor_id = uuid.UUID(job_id)
    except ValueError:
        return False
    # Published at some time (withdrawn and deleted ones too), or uploaded as an issued run.
    counted = or_(Job.published_at.is_not(None), Job.issued_run_id.is_not(None))
    query = select(Job.id).where(Job.job_id == harbor_id, counted)
    if exclude is not None:
        query = query.where(Job.id != exclude)
    return session.scalars(query.limit(1)).first() is not None


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
