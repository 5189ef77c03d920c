"""Which jobs can't be published, decided from the row alone (no database needed)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from app.bench.retention import Policy
from app.db.models import Job, JobStatus
from app.publish.service import refuse_unpublishable
from hbench.errors import HbenchError

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = Policy(publish_window=timedelta(days=30), deleted_files_retention=timedelta(days=7))


def job(status: JobStatus, **fields: object) -> Job:
    values: dict[str, object] = {"uploaded_at": NOW - timedelta(days=1), **fields}
    return Job(id=uuid.uuid4(), status=status, board="hbench-demo", **values)


@pytest.mark.parametrize(
    ("row", "code"),
    [
        (job(JobStatus.PUBLISHED, published_at=NOW), "job-already-published"),
        (job(JobStatus.WITHDRAWN, withdrawn_at=NOW), "job-withdrawn"),
        (job(JobStatus.TAKEN_DOWN, taken_down_at=NOW), "job-taken-down"),
        # Taken down after it was deleted and uploaded again is still off the boards.
        (job(JobStatus.PRIVATE, taken_down_at=NOW), "job-taken-down"),
        (job(JobStatus.PRIVATE, uploaded_at=NOW - timedelta(days=31)), "publish-window-passed"),
    ],
)
def test_a_job_that_cannot_go_on_a_board_is_refused(row: Job, code: str) -> None:
    with pytest.raises(HbenchError) as refused:
        refuse_unpublishable(row, NOW, POLICY)
    assert refused.value.code == code


def test_a_private_job_within_its_window_may_be_published() -> None:
    refuse_unpublishable(job(JobStatus.PRIVATE), NOW, POLICY)
