"""May this issued run's token still upload? One accepted upload, within its lifetime.

Asked twice per upload: before the body is read (a dead token should not cost anyone a
95 MiB transfer) and, for the message, when storing finds the run taken meanwhile.
Expiry is computed from the time, as `app.runs.status` computes it for every reader.
"""

from __future__ import annotations

from datetime import datetime

from app.db.models import IssuedRunStatus
from app.runs.status import effective_status
from hbench.errors import Problem

RUN_TOKEN_HEADER = "hpg-run-token"  # noqa: S105  # a header's name, not a secret


def unknown_token(why: str) -> Problem:
    """`run-token-invalid`: no run has this token, or it is not a run token at all."""
    return Problem(
        "run-token-invalid",
        f"the {RUN_TOKEN_HEADER} header {why}; send the run token (hpr_…) the service "
        "answered with when it issued the run, or upload with an API token instead",
    )


def run_token_problems(
    run_id: object, stored: IssuedRunStatus, expires_at: datetime, now: datetime
) -> list[Problem]:
    """Why the run's token can't upload at `now`: used, abandoned or expired; else nothing."""
    status = effective_status(stored, expires_at, now)
    if status is IssuedRunStatus.UPLOADED:
        return [
            Problem(
                "run-token-used",
                f"the run {run_id} has its job uploaded already, and a run token is good for "
                "one accepted upload; find the job on Your bench (GET /api/bench/jobs), or "
                "issue a new run to upload another job",
            )
        ]
    if status is IssuedRunStatus.ABANDONED:
        return [
            Problem(
                "run-abandoned",
                f"the run {run_id} was abandoned, so its token uploads nothing; issue a new "
                "run, or upload the job with an API token as a self-reported run",
            )
        ]
    if status is IssuedRunStatus.EXPIRED:
        return [
            Problem(
                "run-token-expired",
                f"the run token of run {run_id} expired at {expires_at:%Y-%m-%d %H:%M} UTC; "
                "issue a new run, or upload the job with an API token as a self-reported run",
            )
        ]
    return []
