"""The outbox: public changes recorded in the database, in the transaction of their cause.

`enqueue` adds a change to the caller's session, so publishing a job and its outbox row
commit together or not at all. The writer reads pending rows in id order and marks them
applied once their commit is pushed; a row's id and creation time are its change's
identity (`changes.change_id`), so every retry applies the same change.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import event, func, select, update
from sqlalchemy.orm import Session

from app.datarepo.changes import PublicChange, change_id, entry_id_of, to_outbox
from app.db.models import OutboxEntry, utcnow

MAX_ERROR_LENGTH = 2000


def enqueue(session: Session, change: PublicChange, *, at: datetime | None = None) -> OutboxEntry:
    """Add a public change to the outbox, inside the caller's transaction.

    The caller commits. The row is flushed so its id is known; once the transaction
    commits, this process's writers are woken (others find it by polling).
    """
    kind, payload = to_outbox(change)
    entry = OutboxEntry(kind=kind, payload=payload, created_at=at or utcnow())
    session.add(entry)
    session.flush()
    _ring_after_commit(session)
    return entry


def entry_change_id(entry: OutboxEntry) -> str:
    return change_id(entry.id, entry.created_at)


@dataclass(frozen=True)
class OutboxCounts:
    """How many entries wait, and how many the writer gave up on."""

    pending: int
    given_up: int


def pending_entries(session: Session, *, limit: int, max_attempts: int) -> list[OutboxEntry]:
    """The oldest entries not applied yet and not given up on, in id order."""
    query = (
        select(OutboxEntry)
        .where(OutboxEntry.applied_at.is_(None), OutboxEntry.attempts < max_attempts)
        .order_by(OutboxEntry.id)
        .limit(limit)
    )
    return list(session.scalars(query))


def oldest_pending_time(session: Session, *, max_attempts: int) -> datetime | None:
    query = select(func.min(OutboxEntry.created_at)).where(
        OutboxEntry.applied_at.is_(None), OutboxEntry.attempts < max_attempts
    )
    oldest: datetime | None = session.scalar(query)
    return oldest


def counts(session: Session, *, max_attempts: int) -> OutboxCounts:
    waiting = OutboxEntry.applied_at.is_(None)
    pending = select(func.count()).where(waiting, OutboxEntry.attempts < max_attempts)
    given_up = select(func.count()).where(waiting, OutboxEntry.attempts >= max_attempts)
    return OutboxCounts(session.scalar(pending) or 0, session.scalar(given_up) or 0)


def mark_landed(session: Session, change_ids: Iterable[str], *, at: datetime) -> list[int]:
    """Mark applied the pending entries whose changes are in the repository already.

    Only an exact change id counts: an id of another database's outbox that happens to
    share a row number (`change_id` carries the creation time too) is not ours.
    """
    wanted = {i: c for c in change_ids if (i := entry_id_of(c)) is not None}
    if not wanted:
        return []
    rows = session.scalars(
        select(OutboxEntry).where(OutboxEntry.id.in_(wanted), OutboxEntry.applied_at.is_(None))
    )
    ids = [row.id for row in rows if entry_change_id(row) == wanted[row.id]]
    if ids:
        mark_applied(session, ids, at=at)
    return ids


def mark_applied(session: Session, ids: Sequence[int], *, at: datetime) -> None:
    """Record entries as applied; an entry applied already keeps its first time."""
    for chunk in _chunks(ids):
        session.execute(
            update(OutboxEntry)
            .where(OutboxEntry.id.in_(chunk), OutboxEntry.applied_at.is_(None))
            .values(applied_at=at, attempts=OutboxEntry.attempts + 1)
        )


def record_failures(session: Session, errors: dict[int, str]) -> None:
    """Count a failed attempt for each entry, with its error (the rule code ends it)."""
    for entry_id, error in errors.items():
        session.execute(
            update(OutboxEntry)
            .where(OutboxEntry.id == entry_id, OutboxEntry.applied_at.is_(None))
            .values(attempts=OutboxEntry.attempts + 1, last_error=error[-MAX_ERROR_LENGTH:])
        )


def _chunks(ids: Sequence[int], size: int = 500) -> Iterable[Sequence[int]]:
    # Bound the IN list: SQLite caps bound parameters per statement.
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


class Doorbell:
    """Wakes this process's writers when a transaction that enqueued a change commits.

    Writers in other processes (other replicas, `hbench-app data-repo write`) can't hear
    it; they poll, which is the fallback for every writer anyway.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: list[threading.Event] = []

    def subscribe(self, listener: threading.Event) -> None:
        with self._lock:
            self._listeners.append(listener)

    def unsubscribe(self, listener: threading.Event) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def ring(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener.set()


DOORBELL = Doorbell()
_RING_PENDING = "hbench.outbox.ring"


def _ring_after_commit(session: Session) -> None:
    # One listener per session and transaction: it rings once, after the commit that made
    # the rows visible, so a woken writer finds them. A rollback leaves it armed, and the
    # session's next commit rings for nothing, which costs one empty look at the outbox.
    if session.info.get(_RING_PENDING):
        return
    session.info[_RING_PENDING] = True

    def ring(committed: Session) -> None:
        committed.info.pop(_RING_PENDING, None)
        DOORBELL.ring()

    event.listen(session, "after_commit", ring, once=True)
