"""What the Your-bench endpoints answer: an accepted upload, a list of jobs, one job.

Each is built from the stored row alone (`from_row`), so the upload's answer and a later
read of the same job agree.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal, Self

from pydantic import BaseModel, Field
from sqlalchemy.orm import object_session

from app.bench import shards
from app.bench.actions import NOT_PLACEABLE, JobActions, job_actions
from app.bench.retention import Policy
from app.db.models import Job
from app.db.summary import JobSummary, SummaryBoards
from app.regrade.service import regrade_json, run_evidence
from hbench.errors import Problem
from registry.evidence import Level, run_levels

CheckStatus = Literal["passed", "failed", "skipped"]
JobStatusName = Literal["private", "published", "withdrawn", "deleted"]


class CheckResult(BaseModel):
    """One rule of the upload checks, and what it found."""

    rule: str = Field(examples=["manifest-matches-bytes"])
    title: str = Field(examples=["Every file matches the manifest"])
    status: CheckStatus = Field(
        description="`skipped` when the rule does not apply (an API-token upload has no "
        "issued spec to match), never for a failure."
    )
    note: str = Field(examples=["all 44 files match their size and sha256"])


class BoardNote(BaseModel):
    """Why the job fits no board; not a refusal of the upload, but publishing the job is
    refused with this code."""

    code: str = Field(examples=["board-local-tasks"])
    message: str


class JobBoards(BaseModel):
    """Where the job may be published."""

    fits: list[str] = Field(
        description="Boards whose cell the job fits; an issued run's is the board it was "
        "issued for. Publishing asks which when there are several.",
        examples=[["hbench-demo"]],
    )
    opens: str | None = Field(
        description="The slug of the new board publishing would open, when the job fits "
        "no existing one.",
    )
    notes: list[BoardNote] = Field(
        description="Why the job fits no board, when it fits none: each board rule it failed "
        "(a prompt without an issued run, tasks from a folder, an environment no board "
        "allows, …), or `bench-published-before` for a copy of a job that counted already."
    )


def job_boards(placed: SummaryBoards, counted: Problem | None) -> JobBoards:
    """The boards as the upload found them; none, for a copy of a job that counted."""
    notes = [BoardNote(code=note.code, message=note.message) for note in placed.notes]
    if counted is not None:
        note = BoardNote(code=counted.code, message=counted.message)
        return JobBoards(fits=[], opens=None, notes=[note, *notes])
    return JobBoards(fits=list(placed.fits), opens=placed.opens_slug, notes=notes)


def unplaced(row: Job, boards: JobBoards) -> Problem | None:
    """Why publishing the job would be refused for its boards: it fits none and opens none
    (its first note says why); None when it fits one."""
    if boards.fits or boards.opens:
        return None
    for note in boards.notes:
        return Problem(note.code, note.message)
    return Problem(NOT_PLACEABLE, f"the job {row.id} fits no board; it stays on Your bench")


class RegradeDifference(BaseModel):
    """A graded trial whose regrade gave other rewards than the job records."""

    task: str
    trial: str
    recorded: dict[str, float]
    regraded: dict[str, float] | None = Field(description="Null when the verifier gave none.")
    why: str | None = None


class RegradeInfo(BaseModel):
    """Whether the service graded the job's recorded outputs again, and what it found."""

    status: Literal["queued", "running", "agreed", "disagreed", "not_regradable", "failed"] = Field(
        description="`agreed`: every graded trial got the same rewards again; `disagreed`: "
        "some did not (`differences`), and the job can't be published (regrade-mismatch); "
        "`not_regradable` or `failed`: why is in `note`, and the job stays self-reported."
    )
    note: str | None
    differences: list[RegradeDifference]


class Redactions(BaseModel):
    """Key-like values replaced with `[REDACTED]` in the stored copy, counted per file."""

    total: int = Field(ge=0)
    files: dict[str, int] = Field(examples=[{"hello-file__s3QFxsJ/agent/oracle.txt": 1}])


class JobInfo(BaseModel):
    """A job on Your bench, as the list shows it."""

    id: uuid.UUID = Field(description="The job's id on hbench: `GET /api/bench/jobs/{id}`.")
    harbor_job_id: uuid.UUID = Field(description="Harbor's job id, from its result.json.")
    name: str
    status: JobStatusName
    dataset: str | None = Field(description="`name@version`; null for tasks from a folder.")
    agent: str
    model: str | None
    n_attempts: int
    score: float = Field(description="Mean primary reward over trials; errored ones count 0.")
    pass_at_k: dict[str, float] = Field(description="Harbor's pass@k, by k.")
    boards: JobBoards
    counted_before: bool = Field(
        default=False,
        description="A copy of a job that counted already (published, or uploaded with its "
        "run token), recognised by its fingerprint: it stays private, fits no board, and "
        "publishing it is refused with `bench-published-before`.",
    )
    issued_run_id: uuid.UUID | None = Field(description="The issued run it was uploaded as.")
    uploaded_at: datetime
    regrade: RegradeInfo
    evidence: list[Level] = Field(
        description="What the job proves, as its board row would show it (docs/trust.md): "
        "`self-reported`, and `regraded` and `issued` where they hold."
    )
    actions: JobActions = Field(
        description="What you can do with the job now (publish, withdraw, delete, download), "
        "each with the rule code and reason doing it would be refused with when it can't."
    )

    @classmethod
    def from_row(
        cls, row: Job, counted: Problem | None = None, *, policy: Policy, now: datetime
    ) -> Self:
        """The job as stored; `counted` is why a copy of a job that counted can't count
        again (`app.bench.service.counted_before`), read at the time of the answer."""
        summary = JobSummary.of(row)
        # A sharded run's merged job has no regrade of its own: its shards' say it.
        session = object_session(row)
        merged = None if session is None else shards.merged_view(session, row)
        regrade, evidence = merged or (regrade_json(row.regrade), run_evidence(row, row.regrade))
        boards = job_boards(summary.boards, counted)
        return cls(
            id=row.id,
            harbor_job_id=row.job_id,
            name=row.job_name,
            status=row.status.value,
            dataset=summary.dataset,
            agent=summary.agent.name,
            model=summary.model,
            n_attempts=summary.n_attempts,
            score=summary.score,
            pass_at_k=summary.pass_at_k,
            boards=boards,
            counted_before=counted is not None,
            issued_run_id=row.issued_run_id,
            uploaded_at=row.uploaded_at,
            regrade=RegradeInfo.model_validate(regrade),
            evidence=run_levels(evidence, issued=row.issued_run_id is not None),
            actions=job_actions(row, policy, now, unplaced=unplaced(row, boards)),
        )


class UploadAccepted(JobInfo):
    """An accepted upload: the job, stored privately, with its checks and redactions."""

    checks: list[CheckResult]
    redactions: Redactions

    @classmethod
    def from_row(
        cls, row: Job, counted: Problem | None = None, *, policy: Policy, now: datetime
    ) -> Self:
        info = JobInfo.from_row(row, counted, policy=policy, now=now)
        return cls(
            **info.model_dump(),
            checks=[CheckResult(**check) for check in row.checks],
            redactions=Redactions(total=sum(row.redactions.values()), files=row.redactions),
        )


class JobDetail(UploadAccepted):
    """One job on Your bench, with everything its upload recorded."""

    redaction_rules: dict[str, int] = Field(
        description="Values replaced with `[REDACTED]` over the whole job, by the id of the "
        "rule that found them (docs/redaction.md); empty for a job uploaded before the "
        "service counted them.",
        examples=[{"anthropic-api-key": 1, "generic-credential": 2}],
    )
    summary: JobSummary = Field(
        description="What was run and how it scored: the job's identity, dataset and tasks, "
        "agent and model, per-task rewards (`results`), usage, versions and digests, "
        "settings, the boards it fits, and placement's own facts, as the service stores "
        "them (`format` is the version of their meaning)."
    )

    @classmethod
    def from_row(
        cls, row: Job, counted: Problem | None = None, *, policy: Policy, now: datetime
    ) -> Self:
        accepted = UploadAccepted.from_row(row, counted, policy=policy, now=now)
        summary = JobSummary.of(row)
        return cls(
            **accepted.model_dump(), redaction_rules=summary.redaction_rules, summary=summary
        )


class JobList(BaseModel):
    """Your jobs, newest first."""

    jobs: list[JobInfo]
