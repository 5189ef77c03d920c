"""The database keeps its promises on both backends: one upload per run token, even racing;
one account per login; statuses, keys and time zones held by the schema itself."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.orm import Session

from app.auth.tokens import hash_token, new_run_token
from app.db.models import (
    Account,
    ApiToken,
    IssuedRun,
    IssuedRunStatus,
    Job,
    JobStatus,
    OutboxEntry,
    utcnow,
)
from app.db.session import Database

pytestmark = pytest.mark.postgres  # the database's semantics: both backends


def add_account(db: Session, login: str = "alice") -> Account:
    account = Account(login=login)
    db.add(account)
    db.commit()
    return account


def add_issued_run(db: Session, account: Account) -> IssuedRun:
    now = utcnow()
    run = IssuedRun(
        account_id=account.id,
        board="demo-oracle",
        entry="oracle-a3f9c1",
        spec={"agents": [{"name": "oracle"}], "n_attempts": 1},
        spec_digest="sha256:" + "0" * 64,
        token_hash=hash_token(new_run_token()),
        issued_at=now,
        expires_at=now + timedelta(hours=48),
    )
    db.add(run)
    db.commit()
    return run


def job_row(owner: uuid.UUID, issued_run: uuid.UUID | None = None) -> Job:
    return Job(
        owner_id=owner,
        job_id=uuid.uuid4(),
        job_name="demo-oracle-1",
        summary={"score": 1.0},
        checks=[{"code": "manifest-file-changed", "passed": True}],
        redactions={"trial-1/agent/log.txt": 2},
        blob_key=f"jobs/{uuid.uuid4()}.tar.gz",
        issued_run_id=issued_run,
    )


def test_a_run_token_is_used_by_one_upload_only(db: Session) -> None:
    account = add_account(db)
    run = add_issued_run(db, account)
    db.add(job_row(account.id, run.id))
    db.commit()
    db.add(job_row(account.id, run.id))
    with pytest.raises(IntegrityError):
        db.commit()


def test_two_racing_uploads_with_one_run_token_one_wins(db: Session, database_url: str) -> None:
    account = add_account(db)
    run = add_issued_run(db, account)
    database = Database(database_url)
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def upload() -> None:
        with database.session() as session:
            session.add(job_row(account.id, run.id))
            start.wait()
            try:
                session.commit()
                outcomes.append("accepted")
            except IntegrityError:
                outcomes.append("refused")

    threads = [threading.Thread(target=upload) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    database.dispose()
    assert sorted(outcomes) == ["accepted", "refused"]
    assert len(db.scalars(select(Job)).all()) == 1


def test_jobs_without_an_issued_run_are_many(db: Session) -> None:
    account = add_account(db)
    db.add_all([job_row(account.id), job_row(account.id)])
    db.commit()
    assert len(db.scalars(select(Job)).all()) == 2


def test_one_account_per_login_whatever_its_case(db: Session) -> None:
    add_account(db, "Octo-Cat")
    db.add(Account(login="octo-cat"))
    with pytest.raises(IntegrityError):
        db.commit()


def test_a_token_hash_is_stored_once(db: Session) -> None:
    account = add_account(db)
    for name in ("one", "two"):
        db.add(ApiToken(account_id=account.id, name=name, token_hash="f" * 64, prefix="hpg_x"))
    with pytest.raises(IntegrityError):
        db.commit()


def test_foreign_keys_are_enforced(db: Session) -> None:
    db.add(ApiToken(account_id=uuid.uuid4(), name="orphan", token_hash="e" * 64, prefix="hpg_x"))
    with pytest.raises(IntegrityError):
        db.commit()


@pytest.mark.parametrize(
    ("table", "values"),
    [
        ("jobs", {"status": "lost"}),
        ("issued_runs", {"status": "lost"}),
    ],
)
def test_statuses_are_held_to_their_values_by_the_database(
    db: Session, table: str, values: dict[str, Any]
) -> None:
    account = add_account(db)
    run = add_issued_run(db, account)
    db.add(job_row(account.id))
    db.commit()
    with pytest.raises(IntegrityError):
        db.execute(text(f"UPDATE {table} SET status = :status"), values)  # noqa: S608  # fixed
        db.commit()
    db.rollback()
    assert db.get(IssuedRun, run.id) is not None


def test_an_issued_run_expires_after_it_is_issued(db: Session) -> None:
    account = add_account(db)
    run = add_issued_run(db, account)
    run.expires_at = run.issued_at - timedelta(seconds=1)
    with pytest.raises(IntegrityError):
        db.commit()


def test_rows_keep_their_json_statuses_and_utc_times(db: Session, database_url: str) -> None:
    account = add_account(db)
    run = add_issued_run(db, account)
    job = job_row(account.id, run.id)
    db.add(job)
    db.commit()
    job_id, issued_at = job.id, run.issued_at

    with Database(database_url).session() as fresh:
        stored = fresh.get(Job, job_id)
        assert stored is not None
        assert stored.status is JobStatus.PRIVATE
        assert stored.summary == {"score": 1.0}
        assert stored.checks == [{"code": "manifest-file-changed", "passed": True}]
        assert stored.redactions == {"trial-1/agent/log.txt": 2}
        assert stored.uploaded_at.tzinfo is UTC
        stored_run = fresh.get(IssuedRun, run.id)
        assert stored_run is not None
        assert stored_run.status is IssuedRunStatus.ISSUED
        assert stored_run.issued_at == issued_at
        assert stored_run.expires_at - stored_run.issued_at == timedelta(hours=48)


def test_times_in_other_zones_are_stored_as_utc(db: Session) -> None:
    account = add_account(db)
    noon = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    account.created_at = noon.astimezone(ZoneInfo("Asia/Tokyo"))
    db.commit()
    db.expire_all()
    stored = db.get(Account, account.id)
    assert stored is not None
    assert stored.created_at == noon
    assert stored.created_at.tzinfo is UTC


def test_naive_times_are_refused(db: Session) -> None:
    db.add(Account(login="naive", created_at=datetime(2026, 1, 1)))  # naive on purpose
    with pytest.raises(StatementError, match="time zone"):
        db.commit()


def test_the_outbox_keeps_its_order(db: Session) -> None:
    entries = [OutboxEntry(kind="publish", payload={"n": n}) for n in range(3)]
    for entry in entries:
        db.add(entry)
        db.flush()
    db.commit()
    pending = db.scalars(
        select(OutboxEntry).where(OutboxEntry.applied_at.is_(None)).order_by(OutboxEntry.id)
    ).all()
    assert [entry.payload["n"] for entry in pending] == [0, 1, 2]
    assert [entry.attempts for entry in pending] == [0, 0, 0]
