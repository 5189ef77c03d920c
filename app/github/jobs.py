"""The jobs a comment may name, read from the database, and `JobActions`, the interface
publishing implements for `/hbench publish`, `withdraw` and `delete`.

A comment names a job by its name or id. The candidates are the commenter's own jobs
(matched by GitHub account id) and the jobs run by the workflow of the repository the
comment is in (matched by repository id, as the OIDC claims recorded it on the issued
run, so a renamed repository keeps its jobs and a re-created one gets none).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Protocol

from fastapi import Depends
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.clock import ClockDep
from app.db.models import Account, IssuedRun, Job, JobStatus
from app.dependencies import BlobStoreDep, DatabaseDep, SettingsDep
from app.github.commands import JobRef
from app.github.models import GitHubUser, Repo
from app.github.publishing import PublishingActions
from app.registry import RegistryDep
from hbench.errors import HbenchError

STATUS_LIST_LIMIT = 10


@dataclass(frozen=True)
class JobFacts:
    """What the bot knows and says about a job."""

    id: uuid.UUID
    name: str
    status: str
    board: str | None
    entry: str | None
    uploaded_at: datetime
    owner_github_id: int | None
    workflow_repository_id: int | None
    workflow_repository: str | None
    checks_passed: int
    checks_total: int


@dataclass(frozen=True)
class ActionRequest:
    """A job action asked for in a comment, by someone allowed to ask for it."""

    job: JobFacts
    actor: GitHubUser
    repository: Repo
    delivery_id: str  # GitHub's id of the comment's delivery: acting twice on it is a no-op
    board: str | None = None


class JobActions(Protocol):
    """Publishing, withdrawing and deleting jobs, for comment commands. Each returns the
    sentence the bot replies with, or raises an `HbenchError` whose code it shows."""

    async def publish(self, request: ActionRequest) -> str: ...

    async def withdraw(self, request: ActionRequest) -> str: ...

    async def delete(self, request: ActionRequest) -> str: ...


def get_job_actions(
    database: DatabaseDep,
    registry: RegistryDep,
    blobs: BlobStoreDep,
    settings: SettingsDep,
    clock: ClockDep,
) -> JobActions | None:
    """The job actions comment commands dispatch to: publishing's
    (`app.github.publishing`). A FastAPI dependency, so tests can supply others; with
    None, `publish`, `withdraw` and `delete` are answered `command-unavailable`."""
    return PublishingActions(
        database=database, registry=registry, blobs=blobs, settings=settings, clock=clock
    )


def workflow_claims(provenance: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The verified OIDC claims an issued run kept (`ActionsClaims.provenance()`), at the
    top of its provenance or under `oidc`; empty for a run issued otherwise."""
    stored = provenance or {}
    for candidate in (stored, stored.get("oidc")):
        if isinstance(candidate, Mapping) and candidate.get("repository_id") is not None:
            return candidate
    return {}


def facts(job: Job, owner: Account, run: IssuedRun | None) -> JobFacts:
    provenance = workflow_claims(run.provenance if run is not None else None)
    repository_id = provenance.get("repository_id")
    checks = job.checks or []
    return JobFacts(
        id=job.id,
        name=job.job_name,
        status=str(job.status),
        board=job.board,
        entry=job.entry,
        uploaded_at=job.uploaded_at,
        owner_github_id=owner.github_id,
        workflow_repository_id=int(repository_id) if repository_id is not None else None,
        workflow_repository=provenance.get("repository"),
        checks_passed=sum(1 for check in checks if check.get("status") == "passed"),
        checks_total=len(checks),
    )


def own_jobs(session: Session, github_id: int, limit: int = STATUS_LIST_LIMIT) -> list[JobFacts]:
    """The newest jobs of the account signed in with this GitHub id, deleted ones left out."""
    rows = session.execute(
        select(Job, Account, IssuedRun)
        .join(Account, Job.owner_id == Account.id)
        .outerjoin(IssuedRun, Job.issued_run_id == IssuedRun.id)
        .where(Account.github_id == github_id, Job.status != JobStatus.DELETED)
        .order_by(Job.uploaded_at.desc(), Job.id)
        .limit(limit)
    )
    return [facts(job, owner, run) for job, owner, run in rows]


def find_jobs(session: Session, ref: JobRef, github_id: int, repository_id: int) -> list[JobFacts]:
    """The jobs `ref` may mean for this commenter in this repository."""
    named = or_(Job.id == ref.id, Job.job_name == ref.text) if ref.id else Job.job_name == ref.text
    rows = session.execute(
        select(Job, Account, IssuedRun)
        .join(Account, Job.owner_id == Account.id)
        .outerjoin(IssuedRun, Job.issued_run_id == IssuedRun.id)
        .where(named, Job.status != JobStatus.DELETED)
        .order_by(Job.uploaded_at.desc(), Job.id)
    )
    found = [facts(job, owner, run) for job, owner, run in rows]
    return [
        job
        for job in found
        if job.owner_github_id == github_id or job.workflow_repository_id == repository_id
    ]


def resolve_job(session: Session, ref: JobRef, github_id: int, repository_id: int) -> JobFacts:
    """The one job `ref` means, or the refusal saying why there is not exactly one."""
    found = find_jobs(session, ref, github_id, repository_id)
    if not found:
        raise HbenchError(
            "command-job-not-found",
            f"no job `{ref.text}` of yours, or run by this repository's workflow; "
            "`/hbench status` lists your jobs",
        )
    if len(found) > 1:
        ids = ", ".join(f"`{job.id}`" for job in found[:5])
        raise HbenchError(
            "command-job-ambiguous",
            f"{len(found)} jobs are named `{ref.text}`; name one by its id: {ids}",
        )
    return found[0]


JobActionsDep = Annotated[JobActions | None, Depends(get_job_actions)]
