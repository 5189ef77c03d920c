"""Storing an accepted job: its redacted archive in the blob store, then its row, or neither.

The order is what makes an upload all or nothing, even when the process is killed:

1. The archive is written to the blob store under `jobs/<id>/job.tar.gz`, atomically
   (`app.blobs`: a temporary file renamed into place). Killed before the rename, only a
   temporary file is left, which the local store sweeps at its next start.
2. One database transaction claims the issued run, if any, and inserts the job's row.
   Nothing is written to the database before the blob is complete, so no row ever names a
   missing archive. If the transaction fails, the blob is deleted.
3. Killed between 1 and 2, the blob has no row: `sweep_orphan_blobs` deletes such blobs
   once they are older than any upload could take to commit. Its age is read from the
   key: the job's id is a UUID version 7, whose first 48 bits are its creation time.

The scratch folder an upload is unpacked into is removed when the request ends; a killed
process leaves it behind, and `sweep_scratch` removes it at the next start.
"""

from __future__ import annotations

import secrets
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.blobs import BlobStore
from app.db.models import IssuedRun, IssuedRunStatus, Job, Regrade
from app.db.session import Database
from app.runs.run_token import run_token_problems
from hbench.errors import HbenchError, Problem

JOBS_PREFIX = "jobs/"
ARCHIVE_NAME = "job.tar.gz"
SCRATCH_PREFIX = "hbench-upload-"
"""The name `app.uploads.archive.scratch_folder` gives each upload's folder."""

ORPHAN_GRACE = timedelta(hours=1)
"""An archive younger than this may belong to an upload that is committing right now."""
SCRATCH_GRACE = timedelta(hours=6)
"""A scratch folder younger than this may belong to an upload still being sent (95 MiB
over a slow line), perhaps by another replica sharing the state directory."""
IN_CHUNK = 500
"""Keys per `IN (…)` query: well under every database's limit on bound parameters."""


def new_job_id(now: datetime) -> uuid.UUID:
    """A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits."""
    millis = int(now.timestamp() * 1000) & ((1 << 48) - 1)
    value = (millis << 80) | secrets.randbits(80)
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # the RFC 4122 variant
    return uuid.UUID(int=value)


def id_time(job_id: uuid.UUID) -> datetime | None:
    """When a version-7 id was made; None for any other id."""
    if job_id.version != 7:
        return None
    return datetime.fromtimestamp((job_id.int >> 80) / 1000, UTC)


def blob_key(job_id: uuid.UUID) -> str:
    """Where a job's redacted archive is kept in the blob store."""
    return f"{JOBS_PREFIX}{job_id}/{ARCHIVE_NAME}"


def key_time(key: str) -> datetime | None:
    """When the job of an archive key was made; None for a key this module did not make."""
    parts = key.split("/")
    if len(parts) != 3 or f"{parts[0]}/" != JOBS_PREFIX or parts[2] != ARCHIVE_NAME:
        return None
    try:
        return id_time(uuid.UUID(parts[1]))
    except ValueError:
        return None


def store_job(
    database: Database,
    blobs: BlobStore,
    row: Job,
    archive: Path,
    *,
    now: datetime,
    regrade: Regrade | None = None,
    also: Callable[[Session], None] | None = None,
) -> Job:
    """Put the archive under the row's blob key, then claim the run and insert the row,
    with its regrade's row in the same transaction.

    Raises `run-token-used` (or why else the run can't take it) when the row's issued run
    was taken meanwhile; the blob is deleted whenever the row is not stored.
    """
    if row.blob_key is None:
        raise ValueError("a stored job names its archive's blob key")
    with archive.open("rb") as stream:
        blobs.put(row.blob_key, stream)
    try:
        with database.session() as session:
            if row.issued_run_id is not None:
                claim_run(session, row.issued_run_id, now)
            session.add(row)
            insert(session, row)
            if regrade is not None:
                row.regrade = regrade
            if also is not None:
                also(session)  # in the same transaction: a binding token's jti, say
            session.commit()
    except BaseException:
        blobs.delete(row.blob_key)
        raise
    return row


def claim_run(session: Session, run_id: uuid.UUID, now: datetime) -> None:
    """Mark the run uploaded if it still waits for its upload; else refuse, saying why.

    One conditional update: PostgreSQL makes a racing claim wait for this one's row lock
    and then finds the status changed; SQLite lets one writer in at a time.
    """
    claimed = session.execute(
        update(IssuedRun)
        .where(
            IssuedRun.id == run_id,
            IssuedRun.status == IssuedRunStatus.ISSUED,
            IssuedRun.expires_at > now,
        )
        .values(status=IssuedRunStatus.UPLOADED)
        .returning(IssuedRun.id)
    ).scalar_one_or_none()
    if claimed is not None:
        return
    session.rollback()
    run = session.get(IssuedRun, run_id)
    problems = run_token_problems(run_id, run.status, run.expires_at, now) if run else []
    raise HbenchError.from_problems(problems or [run_taken(run_id)])


def insert(session: Session, row: Job) -> None:
    """Insert the row; a second job for one issued run breaks `jobs.issued_run_id`'s
    uniqueness, which is the last word on "one accepted upload per run token"."""
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        if row.issued_run_id is None:
            raise
        raise HbenchError.from_problems([run_taken(row.issued_run_id)]) from None


def run_taken(run_id: uuid.UUID) -> Problem:
    return Problem(
        "run-token-used",
        f"another upload with this run token was accepted first, so the run {run_id} has its "
        "job; a run token is good for one accepted upload. Find the job on Your bench "
        "(GET /api/bench/jobs)",
    )


def sweep_orphan_blobs(
    database: Database,
    blobs: BlobStore,
    *,
    now: datetime,
    older_than: timedelta = ORPHAN_GRACE,
) -> list[str]:
    """Delete job archives that no job row names and that are older than `older_than`.

    They are left by a process killed between writing an archive and committing its row.
    Returns the keys deleted. Keys this module did not make are never touched.
    """
    aged = [
        key
        for key in blobs.list(JOBS_PREFIX)
        if (made := key_time(key)) is not None and now - made >= older_than
    ]
    named: set[str] = set()
    with database.session() as session:
        for chunk in _chunks(aged, IN_CHUNK):
            named.update(
                key
                for key in session.scalars(select(Job.blob_key).where(Job.blob_key.in_(chunk)))
                if key is not None
            )
    orphans = [key for key in aged if key not in named]
    for key in orphans:
        blobs.delete(key)
    return orphans


def sweep_scratch(upload_dir: Path, *, older_than: timedelta = SCRATCH_GRACE) -> int:
    """Remove upload folders a killed process left in `upload_dir`; return how many."""
    if not upload_dir.is_dir():
        return 0
    cutoff = time.time() - older_than.total_seconds()
    removed = 0
    for folder in upload_dir.iterdir():
        if folder.name.startswith(SCRATCH_PREFIX) and folder.lstat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
