"""Whether an issued run's token may still upload: once, within its lifetime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.db.models import IssuedRunStatus
from app.runs.run_token import run_token_problems

NOW = datetime(2026, 10, 30, 12, 0, tzinfo=UTC)


def codes(status: IssuedRunStatus, expires_in: timedelta) -> list[str]:
    return [p.code for p in run_token_problems("run-1", status, NOW + expires_in, NOW)]


def test_a_waiting_run_may_upload() -> None:
    assert codes(IssuedRunStatus.ISSUED, timedelta(seconds=1)) == []


@pytest.mark.parametrize(
    ("status", "expires_in", "code"),
    [
        (IssuedRunStatus.ISSUED, timedelta(0), "run-token-expired"),
        (IssuedRunStatus.ISSUED, -timedelta(hours=1), "run-token-expired"),
        (IssuedRunStatus.UPLOADED, timedelta(hours=1), "run-token-used"),
        # Uploaded before it expired: used, however late the second try comes.
        (IssuedRunStatus.UPLOADED, -timedelta(hours=1), "run-token-used"),
        (IssuedRunStatus.ABANDONED, timedelta(hours=1), "run-abandoned"),
        (IssuedRunStatus.EXPIRED, timedelta(hours=1), "run-token-expired"),
    ],
)
def test_a_run_that_does_not_wait_refuses_with_why(
    status: IssuedRunStatus, expires_in: timedelta, code: str
) -> None:
    assert codes(status, expires_in) == [code]
