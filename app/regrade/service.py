"""What the rest of the service asks of a job's regrade: its row, whether it lets the job be
published, the evidence it gives the published run, and how pages and the API show it."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from app.db.models import Job, Regrade, RegradeStatus
from app.db.summary import JobSummary
from app.regrade.plan import RegradePlan
from hbench.errors import Problem
from registry.evidence import RegradeOutcome, RunEvidence

PENDING = (RegradeStatus.QUEUED, RegradeStatus.RUNNING)
OUTCOMES: dict[RegradeStatus, RegradeOutcome] = {
    RegradeStatus.AGREED: "agreed",
    RegradeStatus.NOT_REGRADABLE: "not-regradable",
    RegradeStatus.FAILED: "failed",
}
BEFORE_REGRADES = "it was uploaded before the service regraded jobs"
PENDING_SECONDS = 30
"""What a refusal of a pending regrade tells a client to wait before it asks again."""
MAX_LISTED = 10


def new_regrade(job_id: uuid.UUID, plan: RegradePlan, now: Any) -> Regrade:
    """The regrade row stored with a new job's row, in the same transaction."""
    finished = None if plan.status == RegradeStatus.QUEUED else now
    return Regrade(
        job_id=job_id,
        status=plan.status,
        note=plan.note,
        differences=[],
        queued_at=now,
        finished_at=finished,
    )


def regrade_of(session: Session, job_id: uuid.UUID) -> Regrade | None:
    return session.get(Regrade, job_id)


def publish_refusal(regrade: Regrade | None) -> Problem | None:
    """Why the job can't be published yet, or at all, because of its regrade; else None."""
    if regrade is None:
        return None
    if regrade.status in PENDING:
        return Problem(
            "regrade-pending",
            "the service is still grading this job's recorded outputs again; publish it once "
            "Your bench shows the regrade's result, usually within minutes "
            f"(try again in {PENDING_SECONDS} seconds)",
        )
    if regrade.status == RegradeStatus.DISAGREED:
        return Problem("regrade-mismatch", mismatch_message(regrade))
    return None


def mismatch_message(regrade: Regrade) -> str:
    listed = [describe(d) for d in regrade.differences[:MAX_LISTED]]
    more = len(regrade.differences) - len(listed)
    tail = f"; and {more} more" if more > 0 else ""
    return (
        "the tasks' verifiers, run again on the outputs the job recorded, gave other rewards "
        f"than the job claims: {'; '.join(listed)}{tail}. The job stays off every board; "
        "run the benchmark again for a new result"
    )


def describe(difference: dict[str, Any]) -> str:
    recorded = _rewards(difference.get("recorded"))
    regraded = difference.get("regraded")
    again = _rewards(regraded) if regraded is not None else "no reward"
    why = f" ({difference['why']})" if difference.get("why") else ""
    return (
        f"{difference.get('task')} ({difference.get('trial')}): recorded {recorded}, "
        f"regraded {again}{why}"
    )


def _rewards(value: object) -> str:
    if not isinstance(value, dict):
        return "?"
    return ", ".join(f"{key} {number:g}" for key, number in sorted(value.items()))


def run_evidence(row: Job, regrade: Regrade | None) -> RunEvidence:
    """What the service established about a job, as its published run records it."""
    if regrade is None:
        outcome: RegradeOutcome = "not-regradable"
        note: str | None = BEFORE_REGRADES
    else:
        outcome = OUTCOMES.get(regrade.status, "not-regradable")
        note = regrade.note if outcome != "agreed" else None
    summary = JobSummary.of(row)
    return RunEvidence(
        consistent=True,  # the upload refuses a job whose files disagree
        tasks_pinned=summary.tasks_pinned,
        regrade=outcome,
        regrade_note=note[:500] if note else None,
        ci=summary.ci is not None and summary.ci.run_on_ci,
    )


def regrade_json(regrade: Regrade | None) -> dict[str, Any]:
    """A job's regrade as Your bench and the API show it."""
    if regrade is None:
        return {"status": "not_regradable", "note": BEFORE_REGRADES, "differences": []}
    return {
        "status": regrade.status.value,
        "note": regrade.note,
        "differences": list(regrade.differences),
        "attempts": regrade.attempts,
        "queued_at": regrade.queued_at.isoformat(),
        "finished_at": regrade.finished_at.isoformat() if regrade.finished_at else None,
    }
