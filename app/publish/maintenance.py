"""The periodic task: count issued runs that stopped waiting, hide and purge job files,
sweep orphan archives. The service runs it every `HBENCH_MAINTENANCE_INTERVAL`; cron can
run `hbench-app maintenance run --once` instead.

Each step is idempotent and claims its rows with conditional updates, so two replicas
running it at once do each thing once, and a crash midway leaves the rest for next time.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from app.bench.parts import sweep_sessions
from app.bench.retention import Policy, hide_before, purge_before
from app.bench.shards import complete_pending
from app.bench.storage import sweep_orphan_blobs
from app.blobs import BlobStore
from app.checks.fingerprints import record_prints
from app.clock import Clock
from app.db.models import Account, IssuedRun, IssuedRunStatus, Job, JobStatus
from app.db.session import Database
from app.publish.service import count_run, purge_files
from app.runs.status import effective_status

log = logging.getLogger(__name__)

BATCH = 500
"""Rows one step handles per round; the next round takes the rest."""
STOP_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class MaintenanceReport:
    """What one round did."""

    counted: int
    hidden: int
    purged: int
    orphans: int
    abandoned_writes: int = 0
    """Blob writes that died part-way (temporary files, incomplete multipart uploads)."""
    upload_sessions: int = 0
    """Uploads in parts removed with their parts: expired, or parts left by a removal cut
    short (app/bench/parts.py)."""


def run_maintenance(
    database: Database, blobs: BlobStore, *, now: datetime, policy: Policy
) -> MaintenanceReport:
    """One round of every step, at `now`."""
    complete_pending(database, blobs, now)  # before counting: a merged run counts uploaded
    with database.session() as session:
        counted = count_finished_runs(session, now)
        hidden = hide_files(session, now, policy)
        purged = purge_deleted(session, blobs, now, policy)
    orphans = sweep_orphan_blobs(database, blobs, now=now)
    abandoned = blobs.sweep_temporary()
    sessions = sweep_sessions(database, blobs, now=now)
    return MaintenanceReport(counted, hidden, purged, len(orphans), abandoned, sessions)


def count_finished_runs(session: Session, now: datetime) -> int:
    """Count on their boards the issued runs that no longer wait: uploaded, abandoned, or
    expired unuploaded (../shared/spec/hbench-issue-a-run.txt, "Know what it counts")."""
    done = or_(IssuedRun.status != IssuedRunStatus.ISSUED, IssuedRun.expires_at <= now)
    rows = session.execute(
        select(IssuedRun, Account.login)
        .join(Account, IssuedRun.account_id == Account.id)
        # A sharded run counts once, as itself; its shards never count on their own.
        .where(IssuedRun.counted_at.is_(None), IssuedRun.parent_id.is_(None), done)
        .order_by(IssuedRun.issued_at)
        .limit(BATCH)
    ).all()
    counted = 0
    for run, login in rows:
        if effective_status(run.status, run.expires_at, now) is IssuedRunStatus.ISSUED:
            continue
        if not claim_count(session, run, now):
            continue
        count_run(session, run, login, now)
        if run.status is IssuedRunStatus.UPLOADED:
            job = session.scalars(select(Job).where(Job.issued_run_id == run.id)).first()
            if job is not None:  # its trials count now: a copy of it is recognised
                record_prints(session, job)
        session.commit()
        counted += 1
    return counted


def claim_count(session: Session, run: IssuedRun, now: datetime) -> bool:
    """Mark the run counted unless someone did meanwhile (publishing it, another replica)."""
    claimed = session.execute(
        update(IssuedRun)
        .where(IssuedRun.id == run.id, IssuedRun.counted_at.is_(None))
        .values(counted_at=now)
        .returning(IssuedRun.id)
    ).scalar_one_or_none()
    if claimed is None:
        session.rollback()
        return False
    return True


def hide_files(session: Session, now: datetime, policy: Policy) -> int:
    """Mark hidden the files of private jobs past their publish window."""
    result = session.execute(
        update(Job)
        .where(
            Job.status == JobStatus.PRIVATE,
            Job.files_hidden_at.is_(None),
            Job.uploaded_at <= hide_before(now, policy),
        )
        .values(files_hidden_at=now)
        .returning(Job.id)
    )
    hidden = len(result.all())
    session.commit()
    return hidden


def purge_deleted(session: Session, blobs: BlobStore, now: datetime, policy: Policy) -> int:
    """Remove from the blob store the files of jobs deleted longer ago than retention."""
    rows = session.scalars(
        select(Job)
        .where(
            Job.status == JobStatus.DELETED,
            Job.blob_key.is_not(None),
            Job.deleted_at <= purge_before(now, policy),
        )
        .limit(BATCH)
    ).all()
    for row in rows:
        purge_files(session, blobs, row)
    return len(rows)


class MaintenanceLoop:
    """Runs the task in a thread every `interval` seconds, first after one interval (a
    service that starts and stops at once, as in tests, runs it never)."""

    def __init__(
        self, database: Database, blobs: BlobStore, clock: Clock, policy: Policy, interval: float
    ) -> None:
        self.database, self.blobs, self.clock = database, blobs, clock
        self.policy, self.interval = policy, interval
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hbench-maintenance", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(STOP_TIMEOUT_SECONDS)

    def _run(self) -> None:
        while not self._stopping.wait(self.interval):
            try:
                report = run_maintenance(
                    self.database, self.blobs, now=self.clock(), policy=self.policy
                )
            except Exception:
                log.exception("maintenance failed; it runs again in %.0f s", self.interval)
            else:
                log.info("maintenance: %s", report)
