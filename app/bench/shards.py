"""A sharded run's uploads: each shard is stored as a job of its own, and once every shard
has arrived the run's one job is formed (`complete_run`), which is what is published and
counted (docs/runs-api.md, "Sharded runs").

The merged job's archive holds each shard's stored archive, as `<run>/<shard>.tar.gz`. It
is written to the blob store before the one transaction that claims the run and inserts
the merged row, and deleted if that fails, as `app.bench.storage` stores any job. A
replica that loses the race to merge (the run was claimed meanwhile) deletes its archive
and answers nothing; the maintenance task merges a run whose last upload died before it
could (`complete_pending`).
"""

from __future__ import annotations

import logging
import tarfile
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.bench import merge
from app.bench.storage import blob_key, insert, new_job_id
from app.blobs import BlobStore
from app.db.models import IssuedRun, IssuedRunStatus, Job, JobStatus, Regrade
from app.db.session import Database
from app.db.summary import JobSummary, SummaryCi
from app.regrade.service import publish_refusal, regrade_json, run_evidence
from hbench.errors import HbenchError, Problem
from registry.evidence import RunEvidence

log = logging.getLogger(__name__)

PENDING_BATCH = 100
"""Runs the maintenance task merges per round."""


@dataclass(frozen=True)
class Completed:
    """A run just merged: its merged job's row and what merging took."""

    row: Job
    seconds: float


def mixed_problem(session: Session, run: IssuedRun, binding: SummaryCi | None) -> Problem | None:
    """`run-shard-mixed` when the shard's upload comes from another workflow run than the
    run's shards uploaded so far (or is bound where they were not, or the other way)."""
    if run.parent_id is None:
        return None
    arrived = session.scalars(
        select(Job.summary)
        .join(IssuedRun, Job.issued_run_id == IssuedRun.id)
        .where(IssuedRun.parent_id == run.parent_id, IssuedRun.id != run.id)
    ).all()
    others = [JobSummary.model_validate(summary).ci for summary in arrived]
    if not others or not merge.mixed_workflow_runs([*others, binding]):
        return None
    theirs, mine = merge.workflow_run_of(others[0]), merge.workflow_run_of(binding)
    return Problem(
        "run-shard-mixed",
        f"the run {run.parent_id}'s shards uploaded so far came from "
        f"{described(theirs)}, and this shard's upload from {described(mine)}: a sharded "
        "run's shards are run and uploaded by one workflow run (the reusable workflow's "
        "matrix), or each with its run token alone",
        "authorization",
    )


def described(workflow_run: tuple[int | None, int | None] | None) -> str:
    if workflow_run is None:
        return "no workflow run (uploaded with the run token alone)"
    return f"workflow run {workflow_run[0]} (attempt {workflow_run[1]})"


def complete_run(
    database: Database, blobs: BlobStore, shard_run_id: uuid.UUID | None, now: datetime
) -> Completed | None:
    """Form the run's one job if the upload just stored was its last shard; else None."""
    if shard_run_id is None:
        return None
    with database.session() as session:
        shard = session.get(IssuedRun, shard_run_id)
        parent_id = shard.parent_id if shard is not None else None
    return merge_run(database, blobs, parent_id, now) if parent_id is not None else None


def merge_run(
    database: Database, blobs: BlobStore, parent_id: uuid.UUID, now: datetime
) -> Completed | None:
    """Merge the run's shards into its one job, once: None when a shard is missing, the
    shards are of different workflow runs, or the run was merged (or abandoned) already."""
    started = time.perf_counter()
    with database.session() as session:
        parent = session.get(IssuedRun, parent_id)
        if parent is None or parent.status is not IssuedRunStatus.ISSUED:
            return None
        shards = shard_jobs(session, parent)
        if shards is None:
            return None
        parts = [as_shard(index, row) for index, row in shards]
        if merge.mixed_workflow_runs([part.summary.ci for part in parts]):
            log.warning("run %s: its shards came from different workflow runs", parent_id)
            return None
        keys = [row.blob_key for _, row in shards]
        row = merged_row(parent, parts, now)
    if any(key is None for key in keys):
        return None
    write_archive(blobs, str(row.blob_key), row.job_name, shards_named(shards, keys))
    try:
        with database.session() as session:
            claimed = session.execute(
                update(IssuedRun)
                .where(IssuedRun.id == parent_id, IssuedRun.status == IssuedRunStatus.ISSUED)
                .values(status=IssuedRunStatus.UPLOADED)
                .returning(IssuedRun.id)
            ).scalar_one_or_none()
            if claimed is None:
                session.rollback()
                blobs.delete(str(row.blob_key))
                return None
            session.add(row)
            insert(session, row)
            session.commit()
    except BaseException:
        blobs.delete(str(row.blob_key))
        raise
    return Completed(row, time.perf_counter() - started)


def shard_jobs(session: Session, parent: IssuedRun) -> list[tuple[int, Job]] | None:
    """Each shard's stored job with its place, when every shard of the run has one."""
    rows = session.execute(
        select(IssuedRun.shard_index, Job)
        .join(Job, Job.issued_run_id == IssuedRun.id)
        .where(IssuedRun.parent_id == parent.id)
        .order_by(IssuedRun.shard_index)
    ).all()
    if parent.shard_count is None or len(rows) != parent.shard_count:
        return None
    return [(index or 0, job) for index, job in rows]


def as_shard(index: int, row: Job) -> merge.Shard:
    return merge.Shard(
        index=index,
        row_id=str(row.id),
        summary=JobSummary.of(row),
        fingerprint=row.fingerprint,
        checks=row.checks,
        redactions=row.redactions,
    )


def merged_row(parent: IssuedRun, parts: Sequence[merge.Shard], now: datetime) -> Job:
    """The merged job's row, not yet stored: private, its owner's, bound to the run."""
    run = merge.RunOf(
        run_id=str(parent.id),
        job_name=str(parent.spec.get("job_name", parent.id)),
        board=parent.board,
        entry=parent.entry,
        spec_digest=parent.spec_digest,
    )
    job_id = new_job_id(now)
    return Job(
        id=job_id,
        owner_id=parent.account_id,
        job_id=parent.id,
        job_name=run.job_name[:255],
        status=JobStatus.PRIVATE,
        summary=merge.merged_summary(run, parts).stored(),
        checks=merge.merged_checks(parts),
        redactions=merge.merged_redactions(parts),
        fingerprint=merge.merged_fingerprint(run.run_id, parts),
        blob_key=blob_key(job_id),
        issued_run_id=parent.id,
        board=parent.board,
        entry=parent.entry,
        uploaded_at=now,
    )


def shards_named(
    shards: Sequence[tuple[int, Job]], keys: Sequence[str | None]
) -> list[tuple[str, str]]:
    return [
        (f"{row.job_name}.tar.gz", str(key)) for (_, row), key in zip(shards, keys, strict=True)
    ]


def write_archive(
    blobs: BlobStore, key: str, folder: str, members: Sequence[tuple[str, str]]
) -> None:
    """Put the merged archive under `key`: a tar.gz holding each shard's stored archive as
    `<folder>/<name>`, copied through a temporary file (a member's size comes first)."""
    with tempfile.TemporaryDirectory(prefix="hbench-merge-") as scratch:
        out = Path(scratch) / "merged.tar.gz"
        with tarfile.open(out, "w:gz", compresslevel=1) as archive:
            for name, member_key in members:
                copy = Path(scratch) / "member"
                with blobs.open(member_key) as stream, copy.open("wb") as sink:
                    while piece := stream.read(1 << 20):
                        sink.write(piece)
                info = tarfile.TarInfo(f"{folder}/{name}")
                info.size, info.mode, info.mtime = copy.stat().st_size, 0o644, 0
                with copy.open("rb") as source:
                    archive.addfile(info, source)
        with out.open("rb") as stream:
            blobs.put(key, stream)


def complete_pending(database: Database, blobs: BlobStore, now: datetime) -> int:
    """Merge the sharded runs every shard of which is stored but that were never merged
    (the last upload's process died between storing and merging); how many were."""
    with database.session() as session:
        shard = IssuedRun.__table__.alias("shard")
        uploaded = (
            select(func.count())
            .select_from(shard)
            .where(shard.c.parent_id == IssuedRun.id, shard.c.status == IssuedRunStatus.UPLOADED)
            .scalar_subquery()
        )
        ready = session.scalars(
            select(IssuedRun.id)
            .where(
                IssuedRun.shard_count.is_not(None),
                IssuedRun.parent_id.is_(None),
                IssuedRun.status == IssuedRunStatus.ISSUED,
                uploaded == IssuedRun.shard_count,
            )
            .limit(PENDING_BATCH)
        ).all()
    return sum(merge_run(database, blobs, run_id, now) is not None for run_id in ready)


def merged_shards(session: Session, row: Job) -> list[Job]:
    """For a sharded run's merged job, its shards' jobs in order; none for any other job."""
    if row.issued_run_id is None or not JobSummary.of(row).shards:
        return []
    return list(
        session.scalars(
            select(Job)
            .join(IssuedRun, Job.issued_run_id == IssuedRun.id)
            .where(IssuedRun.parent_id == row.issued_run_id)
            .order_by(IssuedRun.shard_index)
        )
    )


def shard_of_run(session: Session, row: Job) -> IssuedRun | None:
    """The shard a job was uploaded as, when it was; None for any other job."""
    if row.issued_run_id is None:
        return None
    run = session.get(IssuedRun, row.issued_run_id)
    return run if run is not None and run.parent_id is not None else None


def publish_problem(session: Session, row: Job) -> Problem | None:
    """Why a job of a sharded run can't be published (yet): a shard's job is published as
    the run's merged job; a merged job waits for every shard's regrade, and fails with any."""
    shard = shard_of_run(session, row)
    if shard is not None:
        return Problem(
            "run-shard-part",
            f"the job {row.id} is shard {(shard.shard_index or 0) + 1} of {shard.shard_count} "
            f"of the run {shard.parent_id}, and counts only with the others: publish the "
            "run's merged job (Your bench lists it once every shard is uploaded)",
        )
    for shard_row in merged_shards(session, row):
        refused = publish_refusal(session.get(Regrade, shard_row.id))
        if refused is not None:
            return refused
    return None


def evidence_of(session: Session, row: Job) -> RunEvidence | None:
    """A merged job's evidence, from its shards' (None for any other job)."""
    view = merged_view(session, row)
    return None if view is None else view[1]


def merged_view(session: Session, row: Job) -> tuple[dict[str, Any], RunEvidence] | None:
    """A merged job's regrade as Your bench shows it, and its evidence, both from its
    shards' (None for any other job, whose own regrade row says them)."""
    shards = merged_shards(session, row)
    if not shards:
        return None
    regrades = [session.get(Regrade, shard.id) for shard in shards]
    summary = JobSummary.of(row)
    evidence = merge.merged_evidence(
        [run_evidence(shard, r) for shard, r in zip(shards, regrades, strict=True)],
        ci=summary.ci is not None and summary.ci.run_on_ci,
    )
    return merge.merged_regrade([regrade_json(r) for r in regrades]), evidence


def refuse_if_part(session: Session, row: Job) -> None:
    problem = publish_problem(session, row)
    if problem is not None:
        raise HbenchError.from_problems([problem])
