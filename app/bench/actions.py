"""What a job's owner can still do with it, and why not otherwise: publish, withdraw,
delete, download. One place decides it from the job's row, the retention settings and the
clock, so the job's page, the API's answer (`JobInfo.actions`), `hbench bench show` and
the refusals of publishing, withdrawing and downloading say the same thing with the same
code. Spec: ../shared/spec/hbench-upload-a-job.txt ("Publish it to its board") and
../shared/spec/hbench-withdraw-delete-report.txt.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from app.bench.retention import Policy, files_hidden, publish_deadline
from app.db.models import Job, JobStatus
from app.regrade.service import publish_refusal
from hbench.errors import Problem

NOT_PLACEABLE = "job-not-placeable"
"""The code of a job that fits no board, when its upload recorded no note why."""


class JobAction(BaseModel):
    """One thing the owner may do with the job now, or the refusal doing it would get."""

    possible: bool
    code: str | None = Field(
        default=None,
        description="When not possible: the rule code doing it would be refused with.",
        examples=["publish-window-passed"],
    )
    reason: str | None = Field(default=None, description="When not possible: why, for people.")

    @classmethod
    def of(cls, problem: Problem | None) -> JobAction:
        if problem is None:
            return cls(possible=True)
        return cls(possible=False, code=problem.code, reason=problem.message)

    def refusal(self) -> Problem | None:
        """What doing it would be refused with; None when it is possible."""
        if self.possible or self.code is None:
            return None
        return Problem(self.code, self.reason or self.code)


class JobActions(BaseModel):
    """What the owner can do with the job at the time of the answer, each with why not."""

    publish: JobAction
    withdraw: JobAction
    delete: JobAction
    download: JobAction = Field(description="Downloading the redacted files, as their owner.")


def job_actions(row: Job, policy: Policy, now: datetime, *, unplaced: Problem | None) -> JobActions:
    """The job's actions at `now`; `unplaced` is why it fits no board, from the boards its
    answer shows (`app.bench.schemas.unplaced`), or None when it fits one."""
    return JobActions(
        publish=JobAction.of(
            publish_problem(row, now, policy) or publish_refusal(row.regrade) or unplaced
        ),
        withdraw=JobAction.of(withdraw_problem(row)),
        delete=JobAction.of(delete_problem(row)),
        download=JobAction.of(download_problem(row, now, policy)),
    )


def publish_problem(row: Job, now: datetime, policy: Policy) -> Problem | None:
    """Why the job can't be published, from its status and its publish window; None when
    it can, as far as they tell (its regrade and the boards it fits say the rest)."""
    if row.status is JobStatus.DELETED:
        return gone(row)
    if row.status is JobStatus.PUBLISHED:
        return Problem(
            "job-already-published",
            f"the job {row.id} was published on {row.board} at {when(row.published_at)}, and "
            "a job is published once; withdraw it with POST /api/bench/jobs/{id}/withdraw "
            "if the score should come off its board",
        )
    if row.status is JobStatus.WITHDRAWN:
        return Problem(
            "job-withdrawn",
            f"the job {row.id} was withdrawn at {when(row.withdrawn_at)}, which is for good: "
            "it can't be published again. Run the benchmark again for a new result",
        )
    if row.status is JobStatus.TAKEN_DOWN or row.taken_down_at is not None:
        return Problem(
            "job-taken-down",
            f"the job {row.id} was taken down by the maintainers, with the reason the audit "
            "log gives; it can't go back on a board. Run the benchmark again for a new result",
        )
    if files_hidden(row.status, row.uploaded_at, row.files_hidden_at, now, policy):
        deadline = publish_deadline(row.uploaded_at, policy)
        return Problem(
            "publish-window-passed",
            f"the job {row.id} was uploaded at {when(row.uploaded_at)}, and a job can be "
            f"published until {when(deadline)}; its files are hidden now. Run the benchmark "
            "again and publish the new job within the window",
        )
    return None


def withdraw_problem(row: Job) -> Problem | None:
    """Why the job's score can't be withdrawn; None when it is on its board."""
    if row.status is JobStatus.PUBLISHED and row.board is not None:
        return None
    if row.status is JobStatus.DELETED:
        return gone(row)
    if row.status is JobStatus.WITHDRAWN:
        return Problem(
            "job-withdrawn", f"the job {row.id} was withdrawn already, at {when(row.withdrawn_at)}"
        )
    if row.status is JobStatus.TAKEN_DOWN:
        return Problem(
            "job-taken-down",
            f"the job {row.id} was taken down by the maintainers: its score is off its board "
            "already, with the reason the audit log gives",
        )
    return not_published(row)


def not_published(row: Job) -> Problem:
    return Problem(
        "job-not-published",
        f"the job {row.id} is private: it has no score on a board to withdraw. Delete it "
        "with DELETE /api/bench/jobs/{id}?confirm=<job name> if you want it gone",
    )


def delete_problem(row: Job) -> Problem | None:
    """Why the job can't be deleted: only because it is deleted already."""
    return gone(row) if row.status is JobStatus.DELETED else None


def download_problem(row: Job, now: datetime, policy: Policy) -> Problem | None:
    """Why the job's owner can't download its files; None when they can."""
    if row.status is JobStatus.DELETED:
        return files_deleted(row)
    if files_hidden(row.status, row.uploaded_at, row.files_hidden_at, now, policy):
        return Problem(
            "job-files-hidden",
            f"the job {row.id} was not published within {policy.publish_window.days} days of "
            "its upload, so its files are hidden (docs/retention.md)",
        )
    if row.blob_key is None:
        return Problem("job-files-hidden", f"the files of the job {row.id} are no longer stored")
    return None


def files_deleted(row: Job) -> Problem:
    """A deleted job's download: its files are gone, a score it had stays."""
    kept = (
        f"; its score stays on {row.board} as published"
        if row.published_at is not None and row.board is not None
        else ""
    )
    return Problem(
        "job-files-deleted",
        f"the owner of the job {row.id} deleted it at {when(row.deleted_at)}, and its files "
        f"with it{kept}. Deleting can't be undone",
    )


def gone(row: Job) -> Problem:
    return Problem("bench-job-not-found", f"the job {row.id} was deleted at {when(row.deleted_at)}")


def when(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment is not None else "an unknown time"
