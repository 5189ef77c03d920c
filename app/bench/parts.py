"""Uploads in parts: a job over one request's cap, sent as numbered parts, each checked on
arrival, then assembled and checked as one upload (docs/uploads.md).

A session declares the archive's size, its sha256 and the part size; that fixes how many
parts there are and how large each is. Parts arrive in order, from 1: a part is taken only
as the session's next one, by a conditional update, so two senders can't interleave, and a
part already in may be sent again with the same bytes (the answer to it was lost). Each
part is checked for its size and its sha256 before it is kept in the blob store, under
`upload-parts/<session>/`; a refused part leaves the session as it was. Completing
unpacks the parts read back in order, in an upload worker, hashing them as they are read:
the whole must have the declared sha256 before the job goes to the one upload pipeline
(`app.bench.service.accept`), and a wrong whole is refused as such. The
parts are removed when the session completes, is refused at completion, is aborted, or
expires; nothing of a session is ever a stored job but a completed one.

This module keeps, checks and assembles the parts; the sessions themselves (declared,
opened, found, their completion claimed) are `app.bench.upload_sessions`.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import select, update

from app.bench.upload_sessions import COMPLETED, OPEN, Declared
from app.blobs import BlobStore, Readable
from app.db.models import UploadSession
from app.db.session import Database
from app.uploads.archive import ExtractedJob, extract
from app.uploads.models import ArchiveLimits
from hbench.errors import HbenchError
from hbench.limits import MIB, size_text

PARTS_PREFIX = "upload-parts/"
READ_CHUNK = MIB
SHOWN_MISSING = 10
"""Missing parts a refusal names one by one; past it, it says how many more."""


def part_key(session_id: uuid.UUID, number: int, digest: str) -> str:
    """Where a received part is kept. The digest is in the key, so a part sent twice at once
    with other bytes never overwrites the one the session recorded."""
    return f"{PARTS_PREFIX}{session_id}/{number:06d}-{digest}"


@dataclass(frozen=True)
class PartPlace:
    """Where a part stands before its bytes are read: its size, and whether the session
    has it already (so a re-send is taken as a no-op once its bytes match)."""

    expected_bytes: int
    received_digest: str | None


def place_part(row: UploadSession, number: int) -> PartPlace:
    """How long part `number` must be, or why the session can't take it now."""
    declared = Declared.of(row)
    if number < 1 or number > declared.count:
        raise HbenchError(
            "upload-part-out-of-order",
            f"part {number} is past the upload's parts: it has {declared.count}, numbered "
            f"from 1 ({size_text(declared.total_bytes)} in parts of "
            f"{size_text(declared.part_bytes)})",
            path=f"parts/{number}",
        )
    if number > row.received + 1:
        raise HbenchError(
            "upload-part-out-of-order",
            f"part {number} came before part {row.received + 1}, which the upload waits for; "
            "parts are taken in order: send from part "
            f"{row.received + 1} (GET the session for its next_part)",
            path=f"parts/{number}",
        )
    received = row.part_digests[number - 1] if number <= row.received else None
    return PartPlace(declared.size_of(number), received)


def digest_refusal(number: int, sent: str, actual: str) -> HbenchError:
    return HbenchError(
        "upload-part-digest-mismatch",
        f"part {number}'s bytes have sha256 {actual}, not the {sent} its "
        "hbench-part-sha256 header names: they changed on the way; send the part again",
        path=f"parts/{number}",
    )


def resent_refusal(number: int, received: str, sent: str) -> HbenchError:
    return HbenchError(
        "upload-part-digest-mismatch",
        f"part {number} was received already with sha256 {received}, and these bytes have "
        f"{sent}: the archive changed since the upload began; abort it and upload the "
        "archive as it is now",
        path=f"parts/{number}",
    )


def size_refusal(number: int, expected: int, got: int | None) -> HbenchError:
    what = "runs past it" if got is None else f"is {got:,} bytes"
    return HbenchError(
        "upload-part-size-mismatch",
        f"part {number} must be {expected:,} bytes (the declared part size, or for the last "
        f"part the rest of the declared total), and it {what}; nothing of it is kept",
        path=f"parts/{number}",
    )


def record_part(
    database: Database,
    blobs: BlobStore,
    row: UploadSession,
    number: int,
    *,
    digest: str,
    body: Readable,
) -> None:
    """Keep a checked part and advance the session to it, or, if another request took part
    `number` meanwhile, remove what was written and say so."""
    key = part_key(row.id, number, digest)
    blobs.put(key, body)
    with database.session() as session:
        advanced = session.execute(
            update(UploadSession)
            .where(
                UploadSession.id == row.id,
                UploadSession.received == number - 1,
                UploadSession.status == OPEN,
            )
            .values(received=number, part_digests=[*row.part_digests[: number - 1], digest])
            .returning(UploadSession.id)
        ).scalar_one_or_none()
        session.commit()
    if advanced is None:
        blobs.delete(key)
        raise HbenchError(
            "upload-part-out-of-order",
            f"another request sent part {number} meanwhile, or the session was completed; "
            "GET the session for its next_part",
            path=f"parts/{number}",
        )


def missing_refusal(row: UploadSession) -> HbenchError | None:
    """`upload-parts-missing` when the session lacks parts, naming them."""
    count = Declared.of(row).count
    if row.received >= count:
        return None
    missing = list(range(row.received + 1, count + 1))
    shown = ", ".join(map(str, missing[:SHOWN_MISSING]))
    more = f" and {len(missing) - SHOWN_MISSING} more" if len(missing) > SHOWN_MISSING else ""
    parts = "part" if len(missing) == 1 else "parts"
    return HbenchError(
        "upload-parts-missing",
        f"the upload has {row.received} of its {count} parts; send {parts} {shown}{more}, "
        "then complete it again",
    )


def mark_completed(
    database: Database, blobs: BlobStore, session_id: uuid.UUID, job_id: uuid.UUID
) -> None:
    """The session's job is stored: keep the session as completed (a second completion is
    told so), and remove its parts."""
    with database.session() as session:
        session.execute(
            update(UploadSession)
            .where(UploadSession.id == session_id)
            .values(status=COMPLETED, job_ref=job_id, part_digests=[])
        )
        session.commit()
    remove_parts(blobs, session_id)


def drop_session(database: Database, blobs: BlobStore, session_id: uuid.UUID) -> None:
    """Remove a session and its parts: aborted, refused at completion, or expired."""
    remove_parts(blobs, session_id)
    with database.session() as session:
        row = session.get(UploadSession, session_id)
        if row is not None:
            session.delete(row)
            session.commit()


def remove_parts(blobs: BlobStore, session_id: uuid.UUID) -> int:
    keys = list(blobs.list(f"{PARTS_PREFIX}{session_id}/"))
    for key in keys:
        blobs.delete(key)
    return len(keys)


@dataclass(frozen=True)
class PartsToAssemble:
    """What assembling a session's parts needs of its row, small enough to hand an upload
    worker: the parts' keys in order, and the sha256 declared for the whole."""

    keys: tuple[str, ...]
    sha256: str

    @classmethod
    def of(cls, row: UploadSession) -> PartsToAssemble:
        numbered = enumerate(row.part_digests[: row.received], start=1)
        return cls(tuple(part_key(row.id, n, digest) for n, digest in numbered), row.sha256)


class Assembled:
    """The session's parts read back in order as one stream of chunks, hashed as read."""

    def __init__(self, blobs: BlobStore, keys: tuple[str, ...]) -> None:
        self.blobs = blobs
        self.keys = keys
        self.hash = hashlib.sha256()

    def chunks(self) -> Iterator[bytes]:
        for key in self.keys:
            with self.blobs.open(key) as stream:
                while chunk := stream.read(READ_CHUNK):
                    self.hash.update(chunk)
                    yield chunk

    def rest(self, chunks: Iterator[bytes]) -> str:
        """The sha256 of every part, once what `chunks` (of `chunks()`) had left is read."""
        for _ in chunks:
            pass
        return self.hash.hexdigest()


def assemble(
    blobs: BlobStore, plan: PartsToAssemble, scratch: Path, limits: ArchiveLimits
) -> ExtractedJob:
    """The parts unpacked into `scratch`, hashed as they are read: parts that together lack
    the declared sha256 are refused as such (`upload-digest-mismatch`) before anything is
    checked, and also when unpacking them failed, which a wrong archive does by the first
    rule it happens to break."""
    assembled = Assembled(blobs, plan.keys)
    chunks = assembled.chunks()
    try:
        extracted = extract(chunks, scratch, limits)
    except HbenchError:
        refuse_assembled(plan.sha256, assembled.rest(chunks))
        raise
    refuse_assembled(plan.sha256, assembled.rest(chunks))
    return extracted


def refuse_assembled(declared: str, digest: str) -> None:
    if digest != declared:
        raise HbenchError(
            "upload-digest-mismatch",
            f"the parts together have sha256 {digest}, not the {declared} the upload was "
            "opened with: they come from another archive; nothing is stored and the parts "
            "are removed: upload the archive again",
        )


def sweep_sessions(database: Database, blobs: BlobStore, *, now: datetime) -> int:
    """Remove the sessions past their lifetime (a completed one's row too, once its
    lifetime is over) and their parts, and parts no session names (a session's row is
    committed before its first part, so parts without one are a removal cut short);
    return how many."""
    with database.session() as session:
        expired = list(
            session.scalars(select(UploadSession.id).where(UploadSession.expires_at <= now))
        )
    for session_id in expired:
        drop_session(database, blobs, session_id)
    swept = 0
    for name in sorted({key.split("/")[1] for key in blobs.list(PARTS_PREFIX)}):
        try:
            session_id = uuid.UUID(name)
        except ValueError:
            continue
        with database.session() as session:
            known = session.get(UploadSession, session_id) is not None
        if not known and remove_parts(blobs, session_id):
            swept += 1
    return len(expired) + swept
