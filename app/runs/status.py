"""An issued run's status as people see it: a run waiting past its expiry is expired.

Expiry is computed, not written: a run's stored status stays `issued` until it is
uploaded or abandoned, and the time decides the rest. Every reader (lists, limits,
uploads, the lifecycle's sweeps) asks these functions, so they all agree.
"""

from __future__ import annotations

from datetime import datetime

from app.db.models import IssuedRunStatus


def effective_status(
    stored: IssuedRunStatus, expires_at: datetime, now: datetime
) -> IssuedRunStatus:
    """The run's status at `now`: `issued` turns `expired` once `expires_at` has passed."""
    if stored is IssuedRunStatus.ISSUED and now >= expires_at:
        return IssuedRunStatus.EXPIRED
    return stored


def is_waiting(stored: IssuedRunStatus, expires_at: datetime, now: datetime) -> bool:
    """Whether the run still waits for its upload, holding one of its board's slots."""
    return effective_status(stored, expires_at, now) is IssuedRunStatus.ISSUED
