"""The periodic task with a moved clock: issued runs counted once when they stop waiting,
files hidden after the publish window, deleted files purged, orphan archives swept."""

from __future__ import annotations

import io
from datetime import datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from app.bench.retention import Policy
from app.bench.storage import blob_key, new_job_id
from app.blobs import LocalBlobStore
from app.cli import app as cli
from app.db.models import IssuedRun, IssuedRunStatus
from app.db.session import Database
from app.publish.maintenance import MaintenanceReport, run_maintenance
from app.settings import Settings

from ..bench.conftest import issue_run, run_token, stored_blobs, upload
from ..bench.jobs import SealedJob
from ..conftest import TokenFactory, bearer
from .conftest import NOW, FakeClock, job_row, kinds, outbox, publish, uploaded

POLICY = Policy(publish_window=timedelta(days=30), deleted_files_retention=timedelta(days=7))


def maintain(settings: Settings, now: datetime) -> MaintenanceReport:
    database = Database(settings.effective_database_url)
    try:
        return run_maintenance(database, LocalBlobStore(settings.blob_dir), now=now, policy=POLICY)
    finally:
        database.dispose()


def test_issued_runs_count_once_when_uploaded_expired_or_abandoned(
    client: TestClient, *, db: Session, settings: Settings, sealed: SealedJob,
    sealed_archive: bytes, clock: FakeClock,
) -> None:  # fmt: skip
    waiting = issue_run(db, sealed.spec, login="alice")
    abandoned = issue_run(db, sealed.spec, login="alice", status=IssuedRunStatus.ABANDONED)
    uploaded_run = issue_run(db, sealed.spec, login="bob")
    assert upload(client, sealed_archive, **run_token(uploaded_run.token)).status_code == 201

    first = maintain(settings, NOW)
    assert first.counted == 2  # the upload and the abandoned run; the other still waits
    expired = maintain(settings, NOW + timedelta(hours=48))
    assert expired.counted == 1
    assert maintain(settings, NOW + timedelta(days=3)).counted == 0

    counts = [e.payload for e in outbox(db) if e.kind == "count_issued_run"]
    assert sorted(c["issueId"] for c in counts) == sorted(
        str(r.run_id) for r in (waiting, abandoned, uploaded_run)
    )
    assert {c["entryKey"] for c in counts} == {"alice/oracle-a1b2c3", "bob/oracle-a1b2c3"}
    db.rollback()
    run = db.get(IssuedRun, waiting.run_id)
    assert run is not None and run.counted_at == NOW + timedelta(hours=48)


def test_an_issued_run_counted_by_the_task_is_not_counted_again_when_published(
    client: TestClient, *, db: Session, settings: Settings, sealed: SealedJob,
    sealed_archive: bytes, make_token: TokenFactory, clock: FakeClock,
) -> None:  # fmt: skip
    issued = issue_run(db, sealed.spec, login="alice")
    job_id = upload(client, sealed_archive, **run_token(issued.token)).json()["id"]
    maintain(settings, NOW)

    publish(client, job_id, make_token("alice"))

    assert kinds(db) == ["count_issued_run", "publish_run"]


def test_retention_hides_then_purges_with_a_moved_clock(
    client: TestClient, *, db: Session, settings: Settings, make_token: TokenFactory,
    sealed_archive: bytes, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    kept = uploaded(client, sealed_archive, token)
    deleted = uploaded(client, sealed_archive, token)
    client.delete(f"/api/bench/jobs/{deleted}", params={"confirm": "oracle-k2"},
                  headers=bearer(token))  # fmt: skip
    orphan = blob_key(new_job_id(NOW))
    LocalBlobStore(settings.blob_dir).put(orphan, io.BytesIO(b"left by a killed upload"))

    early = maintain(settings, NOW + timedelta(days=6))
    assert (early.hidden, early.purged, early.orphans) == (0, 0, 1)
    assert stored_blobs(settings) == sorted([f"{kept}/job.tar.gz", f"{deleted}/job.tar.gz"])

    later = maintain(settings, NOW + timedelta(days=7))
    assert (later.hidden, later.purged) == (0, 1)
    assert stored_blobs(settings) == [f"{kept}/job.tar.gz"]
    assert job_row(db, deleted).blob_key is None

    month = maintain(settings, NOW + timedelta(days=30))
    assert month.hidden == 1
    assert job_row(db, kept).files_hidden_at == NOW + timedelta(days=30)
    assert maintain(settings, NOW + timedelta(days=31)).hidden == 0
    # Hidden, not gone: it no longer downloads or publishes, whatever the clock says.
    clock.now = NOW
    assert client.get(f"/api/bench/jobs/{kept}/download", headers=bearer(token)).status_code == 410
    assert publish(client, kept, token).json()["code"] == "publish-window-passed"


def test_the_task_runs_from_the_command_line(settings: Settings) -> None:
    result = CliRunner().invoke(
        cli, ["maintenance", "run", "--once", "--state-dir", str(settings.state_dir)],
        env={"HBENCH_DATABASE_URL": settings.effective_database_url},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Counted 0 issued runs" in result.output
