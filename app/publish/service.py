"""Publishing, withdrawing and deleting a job: each one database transaction that changes
the job's row and enqueues its public changes (`app.datarepo.outbox`) together.

A job is published once: the request locks the job's row (and, on PostgreSQL, takes a
transaction lock shared by every publish, so two jobs opening the same new board can't
both open it), reads its status again under the lock, then writes. Every refusal rolls
back, so a refused request changes nothing and enqueues nothing.
"""

from __future__ import annotations

import hashlib
import unicodedata
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO

from sqlalchemy import select, text, update
from sqlalchemy.orm import Session

from app.auth.service import refuse_denied
from app.bench import shards
from app.bench.actions import (
    download_problem,
    files_deleted,
    not_published,
    publish_problem,
    withdraw_problem,
)
from app.bench.retention import Policy
from app.bench.service import get_job
from app.blobs import BlobNotFoundError, BlobStore
from app.checks.fingerprints import published_before, record_prints
from app.datarepo.changes import (
    CountIssuedRunChange,
    DeleteRunFilesChange,
    OpenBoardChange,
    PublishRunChange,
    WithdrawRunChange,
)
from app.datarepo.outbox import enqueue
from app.db.models import Account, IssuedRun, Job, JobStatus, OutboxEntry
from app.db.summary import JobSummary, KeptSummary
from app.http.headers import attachment
from app.publish.choice import Target, issued_target, placed_target, unplaceable
from app.publish.record import provenance_of, published_run, run_id_of
from app.publish.task_files import board_task_files_problem
from app.regrade.service import publish_refusal, regrade_of, run_evidence
from app.v1.service import record_published_run, reject_published_run
from hbench.errors import HbenchError
from registry.datarepo.models import PublishedRun, RunEntry
from registry.loader import Registry
from registry.placement import OpenBoard, entry_name, place

PUBLISH_LOCK = int.from_bytes(hashlib.sha256(b"hbench-publish").digest()[:8], signed=True)
ARCHIVE_TYPE = "application/gzip"
"""A download's media type: a job's archive is a .tar.gz."""


@dataclass(frozen=True)
class Published:
    """A job just published: its row, the run record enqueued, and the board it opened."""

    row: Job
    run: PublishedRun
    opened: OpenBoard | None


def publish(
    session: Session,
    account: Account,
    job_id: uuid.UUID,
    *,
    board: str | None,
    registry: Registry,
    policy: Policy,
    now: datetime,
) -> Published:
    """Publish one of the account's private jobs to its board, or refuse, changing nothing."""
    refuse_denied(account)
    row = locked_job(session, account, job_id)
    try:
        refuse_unpublishable(row, now, policy)
        seen = published_before(session, row.fingerprint, exclude=row.id)
        if seen is not None:
            raise HbenchError.from_problems([seen])
        shards.refuse_if_part(session, row)  # a shard's job; a merged job's shards' regrades
        regrade = regrade_of(session, row.id)
        refused = publish_refusal(regrade)
        if refused is not None:
            raise HbenchError.from_problems([refused])
        run = session.get(IssuedRun, row.issued_run_id) if row.issued_run_id else None
        target, entry = choose(session, row, run, account, board=board, registry=registry)
        mixed = board_task_files_problem(session, target.board, row)
        if mixed is not None:
            raise HbenchError.from_problems([mixed])
    except HbenchError:
        session.rollback()
        raise
    summary = JobSummary.of(row)
    record = published_run(
        summary,
        run_id=run_id_of(row.id),
        board=target.board,
        entry=entry,
        issued=run is not None,
        provenance=provenance_of(run.provenance if run is not None else None),
        published_at=now,
        fingerprint=row.fingerprint,
        redactions=row.redactions,
        evidence=shards.evidence_of(session, row) or run_evidence(row, regrade),
    )
    if target.opens is not None:
        enqueue(session, OpenBoardChange(board=target.opens), at=now)
    if run is not None and run.counted_at is None:
        count_run(session, run, account.login, now)
    bundle = summary.signature.bundle_json if summary.signature is not None else None
    enqueue(session, PublishRunChange(run=record, bundle=bundle), at=now)
    row.status, row.published_at = JobStatus.PUBLISHED, now
    row.board, row.entry = target.board, entry.name
    record_prints(session, row)
    record_published_run(
        session, row, target.board, registry=registry, now=now, evidence=record.levels()
    )
    session.commit()
    return Published(row, record, target.opens)


def choose(
    session: Session,
    row: Job,
    run: IssuedRun | None,
    account: Account,
    *,
    board: str | None,
    registry: Registry,
) -> tuple[Target, RunEntry]:
    """The board and entry the job goes under: an issued run's own, or placement's."""
    summary = JobSummary.of(row)
    settings, boards = summary.settings(), summary.boards
    if run is not None:
        if boards.notes and run.board not in boards.fits:
            # The upload found it can't keep its board (other task files than the board's).
            raise unplaceable(boards)
        target = issued_target(run.board, board)
        return target, RunEntry(owner=account.login, name=run.entry, settings=settings)
    facts = summary.job_facts()
    if facts is None or (boards.notes and not boards.fits and not boards.opens):
        # The upload's board rules found it fits no board: say why, with their codes.
        raise unplaceable(boards)
    placement = place(facts, registry, opened_boards(session))
    target = placed_target(placement, board)
    name = entry_name(account.login, settings)
    return target, RunEntry(owner=account.login, name=name, settings=settings)


def opened_boards(session: Session) -> list[OpenBoard]:
    """The boards jobs have opened, as their outbox changes record them: the database's
    own record, current even before the data-repo writer has pushed them."""
    payloads = session.scalars(
        select(OutboxEntry.payload).where(OutboxEntry.kind == "open_board").order_by(OutboxEntry.id)
    )
    boards: dict[str, OpenBoard] = {}
    for payload in payloads:
        opened = OpenBoardChange.model_validate({**payload, "kind": "open_board"}).board
        boards.setdefault(opened.slug, opened)
    return list(boards.values())


def refuse_unpublishable(row: Job, now: datetime, policy: Policy) -> None:
    """Refuse a job that is not private, or whose publish window has passed."""
    problem = publish_problem(row, now, policy)
    if problem is not None:
        raise HbenchError.from_problems([problem])


def count_run(session: Session, run: IssuedRun, login: str, now: datetime) -> None:
    """Enqueue an issued run's count on its board, for its entry, and mark it counted."""
    change = CountIssuedRunChange(
        board=run.board, entry_key=f"{login.lower()}/{run.entry}", issue_id=str(run.id)
    )
    enqueue(session, change, at=now)
    run.counted_at = now


def withdraw(session: Session, account: Account, job_id: uuid.UUID, *, now: datetime) -> Job:
    """Take a published job's score off its board for good."""
    row = locked_job(session, account, job_id)
    problem, board = withdraw_problem(row), row.board
    if problem is not None or board is None:  # only a job on its board has no problem
        session.rollback()
        raise HbenchError.from_problems([problem or not_published(row)])
    enqueue(session, WithdrawRunChange(board=board, run_id=run_id_of(row.id)), at=now)
    row.status, row.withdrawn_at = JobStatus.WITHDRAWN, now
    reject_published_run(session, row.id)
    session.commit()
    return row


def delete(
    session: Session,
    account: Account,
    job_id: uuid.UUID,
    *,
    confirm: str | None,
    blobs: BlobStore,
    policy: Policy,
    now: datetime,
) -> Job:
    """Delete a job: its files go (unreachable at once, purged after the retention period),
    a hidden fingerprint stays, and a score it has on a board stays there."""
    row = get_job(session, account.id, job_id)
    # The name as typed: a keyboard may send `é` as `e` and a combining accent (NFD).
    if confirm is None or unicodedata.normalize("NFC", confirm) != unicodedata.normalize(
        "NFC", row.job_name
    ):
        given = "no name" if not confirm else f"{confirm!r}"
        raise HbenchError(
            "delete-confirm-mismatch",
            f"deleting can't be undone, so it needs the job's name as confirmation: "
            f"{given} was given, and the job is named {row.job_name!r}. Send "
            '?confirm=<job name> or the body {"confirm": "<job name>"}',
        )
    row = locked_job(session, account, job_id)
    if row.published_at is not None and row.board is not None:
        # Its score stays as it is (on its board, or withdrawn or taken down); its run's
        # record says its files were deleted, and the audit log has a line for it.
        enqueue(session, DeleteRunFilesChange(board=row.board, run_id=run_id_of(row.id)), at=now)
    row.status, row.deleted_at = JobStatus.DELETED, now
    row.summary = KeptSummary.of(row).stored()
    row.checks, row.redactions = [], {}
    session.commit()
    if policy.deleted_files_retention.total_seconds() == 0:
        purge_files(session, blobs, row)
    return row


def score_board(row: Job) -> str | None:
    """The board the job's score is on: published, neither withdrawn nor taken down
    (deleted or not; deleting leaves it)."""
    on_board = row.withdrawn_at is None and row.taken_down_at is None
    return row.board if row.published_at is not None and on_board else None


def purge_files(session: Session, blobs: BlobStore, row: Job) -> None:
    """Remove a deleted job's archive from the blob store, and forget its key."""
    if row.blob_key is not None:
        blobs.delete(row.blob_key)
        row.blob_key = None
        session.commit()


def open_download(
    session: Session,
    blobs: BlobStore,
    account: Account | None,
    job_id: uuid.UUID,
    *,
    policy: Policy,
    now: datetime,
) -> tuple[Job, str | BinaryIO]:
    """The redacted job's archive: for its owner while its files are shown, and for
    anyone while it is published. A presigned address of it where the store gives one
    (served under the job's name), else the archive itself, open."""
    row = downloadable_job(session, account, job_id, policy=policy, now=now)
    key = str(row.blob_key)
    try:
        address = blobs.download_url(
            key, content_disposition=download_disposition(row), content_type=ARCHIVE_TYPE
        )
        return row, address if address is not None else blobs.open(key)
    except BlobNotFoundError:
        raise HbenchError(
            "job-files-hidden", f"the files of the job {row.id} are no longer stored"
        ) from None


def download_disposition(row: Job) -> str:
    """A download's `Content-Disposition`, named in any script: `filename*` holds the job's
    name, `filename` an ASCII stand-in."""
    return attachment(f"{row.job_name}.tar.gz", default_stem="job")


def downloadable_job(
    session: Session, account: Account | None, job_id: uuid.UUID, *, policy: Policy, now: datetime
) -> Job:
    """The job, if this account may download its files now; else the refusal why not."""
    row = session.get(Job, job_id)
    owner = row is not None and account is not None and row.owner_id == account.id
    if row is not None and row.status is JobStatus.DELETED and (owner or row.published_at):
        # Its run's page says its files were deleted; an owner is told the same.
        raise HbenchError.from_problems([files_deleted(row)])
    visible = row is not None and row.status is not JobStatus.DELETED and row.blob_key
    if row is None or not visible or not (owner or row.status is JobStatus.PUBLISHED):
        raise HbenchError(
            "bench-job-not-found",
            f"no job {job_id} to download: only a published job's files are public, and "
            "only its owner can download a private one",
        )
    problem = download_problem(row, now, policy)
    if problem is not None:
        raise HbenchError.from_problems([problem])
    return row


def chunks(stream: BinaryIO, size: int = 1 << 20) -> Iterator[bytes]:
    """Read a stream in pieces, closing it at the end."""
    with stream:
        while piece := stream.read(size):
            yield piece


def locked_job(session: Session, account: Account, job_id: uuid.UUID) -> Job:
    """One of the account's jobs, locked until the transaction ends, read again.

    A write to the row takes PostgreSQL's row lock and SQLite's write lock, so a second
    request for this job waits, then sees what the first did. On PostgreSQL a
    transaction-level advisory lock also serialises publishing itself: two jobs of one
    new cell must not both open its board.
    """
    row = get_job(session, account.id, job_id)
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PUBLISH_LOCK})
    session.execute(update(Job).where(Job.id == row.id).values(status=Job.status))
    session.refresh(row)
    if row.status is JobStatus.DELETED:  # deleted by a request that held the lock first
        session.rollback()
        return get_job(session, account.id, job_id)  # answers bench-job-not-found
    return row
