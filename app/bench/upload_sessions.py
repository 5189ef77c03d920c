"""The sessions of uploads in parts (docs/uploads.md): declaring one (the archive's size,
its sha256 and the part size, checked against the caps), opening it, finding the
uploader's own, and claiming its completion, so one request completes it. Its parts are
kept and assembled by `app.bench.parts`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.bench.uploader import Uploader
from app.db.models import UploadSession
from app.db.session import Database
from hbench.errors import HbenchError
from hbench.limits import PART_MIN_BYTES, size_text

OPEN, COMPLETING, COMPLETED = "open", "completing", "completed"
LIVE = (OPEN, COMPLETING)
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Declared:
    """What a session is opened with: the archive's size and sha256, and the part size."""

    total_bytes: int
    sha256: str
    part_bytes: int

    @property
    def count(self) -> int:
        """How many parts: every one `part_bytes` long but the last."""
        return -(-self.total_bytes // self.part_bytes)

    def size_of(self, number: int) -> int:
        """How long part `number` (from 1) must be."""
        if number < self.count:
            return self.part_bytes
        return self.total_bytes - (self.count - 1) * self.part_bytes

    @classmethod
    def of(cls, row: UploadSession) -> Declared:
        return cls(row.total_bytes, row.sha256, row.part_bytes)


def refuse_declared(declared: Declared, *, sent_cap: int, request_max: int) -> None:
    """Refuse sizes no upload in parts can have, or a job over its caps, before a part."""
    if not SHA256_HEX.fullmatch(declared.sha256):
        raise HbenchError(
            "upload-session-invalid",
            "the archive's sha256 must be 64 lowercase hex digits (sha256sum job.tgz)",
            path="sha256",
        )
    if declared.total_bytes > sent_cap:
        raise HbenchError(
            "upload-too-large",
            f"the upload is {size_text(declared.total_bytes)}, over the "
            f"{size_text(sent_cap)} cap on "
            "what this job may send: its board allows no more (a board's `uploadMaxBytes`); "
            "run fewer tasks per job",
            path="total_bytes",
        )
    if declared.part_bytes > request_max:
        raise HbenchError(
            "upload-session-invalid",
            f"a part of {size_text(declared.part_bytes)} is over the {size_text(request_max)} one "
            "request may send; declare smaller parts",
            path="part_bytes",
        )
    if declared.count > 1 and declared.part_bytes < PART_MIN_BYTES:
        raise HbenchError(
            "upload-session-invalid",
            f"parts of {size_text(declared.part_bytes)} are under the {size_text(PART_MIN_BYTES)} "
            "smallest; declare larger parts",
            path="part_bytes",
        )


def open_session(
    session: Session,
    uploader: Uploader,
    declared: Declared,
    *,
    now: datetime,
    lifetime: timedelta,
    per_account: int,
) -> UploadSession:
    """A new session for the uploader, or `upload-sessions-too-many`."""
    live = session.scalar(
        select(func.count())
        .select_from(UploadSession)
        .where(
            UploadSession.owner_id == uploader.account_id,
            UploadSession.status.in_(LIVE),
            UploadSession.expires_at > now,
        )
    )
    if (live or 0) >= per_account:
        raise HbenchError(
            "upload-sessions-too-many",
            f"you have {live} uploads in parts open, the most at once; complete or abort one "
            "(DELETE /api/bench/upload-sessions/{id}), or wait for it to expire",
        )
    row = UploadSession(
        owner_id=uploader.account_id,
        run_id=uploader.run_id,
        total_bytes=declared.total_bytes,
        part_bytes=declared.part_bytes,
        sha256=declared.sha256,
        received=0,
        part_digests=[],
        status=OPEN,
        created_at=now,
        expires_at=now + lifetime,
    )
    session.add(row)
    session.commit()
    return row


def open_of(
    session: Session, uploader: Uploader, declared: Declared, *, now: datetime
) -> UploadSession | None:
    """The newest open session of the uploader (its account and run token) declaring the
    same archive (its sha256, size and part size), if one is open still: a client that
    stopped goes on from the parts the service holds."""
    return session.scalars(
        select(UploadSession)
        .where(
            UploadSession.owner_id == uploader.account_id,
            UploadSession.run_id == uploader.run_id,
            UploadSession.sha256 == declared.sha256,
            UploadSession.total_bytes == declared.total_bytes,
            UploadSession.part_bytes == declared.part_bytes,
            UploadSession.status == OPEN,
            UploadSession.expires_at > now,
        )
        .order_by(UploadSession.created_at.desc())
        .limit(1)
    ).first()


def owned(session: Session, uploader: Uploader, session_id: uuid.UUID) -> UploadSession:
    """The uploader's session; another's (another account's, or another run token's) is
    answered as missing."""
    row = session.get(UploadSession, session_id)
    if row is None or row.owner_id != uploader.account_id or row.run_id != uploader.run_id:
        raise HbenchError(
            "upload-session-not-found",
            f"no upload in parts {session_id} is open for you; start the upload again",
        )
    return row


def find_session(
    session: Session,
    uploader: Uploader,
    session_id: uuid.UUID,
    now: datetime,
    *,
    to_change: bool = True,
) -> UploadSession:
    """The uploader's session, unexpired; and, `to_change`, neither completed nor being
    completed."""
    row = owned(session, uploader, session_id)
    if not to_change and row.expires_at > now:
        return row
    if row.status == COMPLETED:
        raise completed(row)
    if row.expires_at <= now:
        raise HbenchError(
            "upload-session-expired",
            f"the upload in parts {session_id} expired at {row.expires_at.isoformat()} and its "
            "parts are removed; upload the job again",
        )
    if row.status == COMPLETING:
        raise busy(session_id)
    return row


def completed(row: UploadSession) -> HbenchError:
    return HbenchError(
        "upload-session-completed",
        f"the upload in parts {row.id} completed already: it is job {row.job_ref} on Your "
        "bench (GET /api/bench/jobs)",
    )


def busy(session_id: uuid.UUID) -> HbenchError:
    return HbenchError(
        "upload-session-busy",
        f"the upload in parts {session_id} is being completed by another request; wait for "
        "its answer, then look for the job on Your bench (GET /api/bench/jobs)",
    )


def claim_completion(database: Database, session_id: uuid.UUID) -> bool:
    """Mark an open session as being completed; False when another request did first."""
    with database.session() as session:
        claimed = session.execute(
            update(UploadSession)
            .where(UploadSession.id == session_id, UploadSession.status == OPEN)
            .values(status=COMPLETING)
            .returning(UploadSession.id)
        ).scalar_one_or_none()
        session.commit()
    return claimed is not None


def release_completion(database: Database, session_id: uuid.UUID) -> None:
    """Open the session again after a completion that failed without a refusal (the
    service's own failure): its parts stay, and completing may be tried again."""
    with database.session() as session:
        session.execute(
            update(UploadSession)
            .where(UploadSession.id == session_id, UploadSession.status == COMPLETING)
            .values(status=OPEN)
        )
        session.commit()
