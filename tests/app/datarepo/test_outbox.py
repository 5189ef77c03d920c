"""The outbox: a change commits with its cause or not at all, and wakes the writer."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy.orm import Session

from app.datarepo.changes import change_id, from_outbox
from app.datarepo.outbox import DOORBELL, enqueue, entry_change_id, mark_landed, pending_entries
from app.db.models import Account, utcnow
from app.db.session import Database

from .conftest import T0, outbox_rows, publish

pytestmark = pytest.mark.postgres  # the database's semantics: both backends


def test_a_change_commits_with_the_transaction_that_caused_it(database: Database) -> None:
    with database.session() as session:
        session.add(Account(login="octocat"))
        enqueue(session, publish(1))
        session.rollback()  # the private change failed: no public change either
    assert outbox_rows(database) == []

    with database.session() as session:
        session.add(Account(login="octocat"))
        entry = enqueue(session, publish(1), at=T0)
        assert entry.id is not None  # flushed: the caller may refer to it
        session.commit()
    [row] = outbox_rows(database)
    assert (row.kind, row.created_at, row.applied_at, row.attempts) == ("publish_run", T0, None, 0)
    assert from_outbox(row.kind, row.payload) == publish(1)
    assert entry_change_id(row) == change_id(row.id, T0)


def test_a_committed_enqueue_rings_the_doorbell_and_a_rollback_does_not(
    database: Database,
) -> None:
    rung = threading.Event()
    DOORBELL.subscribe(rung)
    try:
        with database.session() as session:
            enqueue(session, publish(1))
            session.flush()
            assert not rung.is_set()  # not before the rows are visible to the writer
            session.rollback()
        assert not rung.is_set()
        with database.session() as session:
            enqueue(session, publish(2))
            enqueue(session, publish(3))
            session.commit()
        assert rung.is_set()
    finally:
        DOORBELL.unsubscribe(rung)


def test_pending_entries_come_oldest_first_and_skip_given_up_ones(db: Session) -> None:
    for n in range(5):
        enqueue(db, publish(n))
    db.commit()
    rows = pending_entries(db, limit=10, max_attempts=3)
    assert [r.kind for r in rows] == ["publish_run"] * 5
    assert [r.id for r in rows] == sorted(r.id for r in rows)
    rows[1].attempts = 3
    rows[2].applied_at = utcnow()
    db.commit()
    left = pending_entries(db, limit=2, max_attempts=3)
    assert [r.id for r in left] == [rows[0].id, rows[3].id]


def test_only_an_exact_change_id_marks_an_entry_landed(db: Session) -> None:
    entry = enqueue(db, publish(1))
    db.commit()
    other_database = change_id(entry.id, T0)  # the same row number, another outbox's time
    assert mark_landed(db, {other_database, "not-ours"}, at=utcnow()) == []
    assert mark_landed(db, {entry_change_id(entry)}, at=utcnow()) == [entry.id]
    db.commit()
    db.refresh(entry)
    assert entry.applied_at is not None
