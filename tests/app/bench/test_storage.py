"""Storing a job all or nothing, and sweeping what a killed process left behind."""

from __future__ import annotations

import io
import os
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.bench.storage import (
    SCRATCH_PREFIX,
    blob_key,
    id_time,
    key_time,
    new_job_id,
    store_job,
    sweep_orphan_blobs,
    sweep_scratch,
)
from app.blobs import LocalBlobStore
from app.db.models import IssuedRunStatus, Job
from app.db.session import Database
from app.settings import Settings
from app.uploads.archive import scratch_folder
from hbench.errors import HbenchError

from ..conftest import LOCAL
from .conftest import NOW, issue_run, job_rows, run_status


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    database = Database(database_url)
    yield database
    database.dispose()


@pytest.fixture
def blobs(tmp_path: Path) -> LocalBlobStore:
    return LocalBlobStore(tmp_path / "blobs")


def new_row(db: Session, run_id: uuid.UUID | None = None, *, at: timedelta = timedelta()) -> Job:
    job_id = new_job_id(NOW - at)
    return Job(
        id=job_id,
        owner_id=ensure_account(db, "alice").id,
        job_id=uuid.uuid4(),
        job_name="a-job",
        summary={},
        checks=[],
        redactions={},
        blob_key=blob_key(job_id),
        issued_run_id=run_id,
        uploaded_at=NOW - at,
    )


def archive(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(os.urandom(64))
    return path


def test_a_job_id_is_a_uuid7_that_tells_when_it_was_made() -> None:
    job_id = new_job_id(NOW)

    assert job_id.version == 7
    assert id_time(job_id) == NOW
    assert key_time(blob_key(job_id)) == NOW
    assert new_job_id(NOW) != job_id
    assert id_time(uuid.uuid4()) is None
    assert key_time(f"jobs/{uuid.uuid4()}/job.tar.gz") is None
    assert key_time("jobs/not-an-id/job.tar.gz") is None
    assert key_time(f"elsewhere/{job_id}/job.tar.gz") is None


@pytest.mark.postgres
def test_two_stores_racing_for_one_run_store_one_job_and_one_archive(
    db: Session, database: Database, blobs: LocalBlobStore, tmp_path: Path
) -> None:
    run = issue_run(db, {"job_name": "raced"})
    rows = [new_row(db, run.run_id), new_row(db, run.run_id)]
    start = threading.Barrier(2)
    outcomes: dict[uuid.UUID, str] = {}

    def store(row: Job) -> None:
        start.wait()
        try:
            store_job(database, blobs, row, archive(tmp_path, f"{row.id}.tgz"), now=NOW)
            outcomes[row.id] = "stored"
        except HbenchError as error:
            outcomes[row.id] = error.code

    threads = [threading.Thread(target=store, args=(row,)) for row in rows]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(outcomes.values()) == ["run-token-used", "stored"]
    (winner,) = [job_id for job_id, outcome in outcomes.items() if outcome == "stored"]
    assert [row.id for row in job_rows(db)] == [winner]
    assert list(blobs.list("jobs/")) == [blob_key(winner)]
    assert run_status(db, run.run_id) is IssuedRunStatus.UPLOADED


def test_a_run_that_expired_meanwhile_is_not_claimed(
    db: Session, database: Database, blobs: LocalBlobStore, tmp_path: Path
) -> None:
    run = issue_run(db, {"job_name": "late"}, issued_at=NOW - timedelta(hours=47, minutes=59))
    row = new_row(db, run.run_id)

    with pytest.raises(HbenchError) as refused:
        store_job(database, blobs, row, archive(tmp_path, "a.tgz"), now=NOW + timedelta(minutes=2))

    assert refused.value.code == "run-token-expired"
    assert job_rows(db) == []
    assert list(blobs.list()) == []
    assert run_status(db, run.run_id) is IssuedRunStatus.ISSUED


def test_the_sweep_deletes_only_old_archives_no_row_names(
    db: Session, database: Database, blobs: LocalBlobStore, tmp_path: Path
) -> None:
    kept = new_row(db, at=timedelta(hours=3))
    store_job(database, blobs, kept, archive(tmp_path, "kept.tgz"), now=NOW)
    orphan = blob_key(new_job_id(NOW - timedelta(hours=2)))  # its process died before commit
    young = blob_key(new_job_id(NOW - timedelta(minutes=5)))  # perhaps committing right now
    foreign = "elsewhere/some-file.bin"
    for key in (orphan, young, foreign):
        blobs.put(key, io.BytesIO(b"x"))

    swept = sweep_orphan_blobs(database, blobs, now=NOW)

    assert swept == [orphan]
    assert sorted(blobs.list()) == sorted([kept.blob_key, young, foreign])
    assert sweep_orphan_blobs(database, blobs, now=NOW + timedelta(hours=1)) == [young]


def age(folder: Path, hours: float) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    then = time.time() - hours * 3600
    os.utime(folder, (then, then))
    return folder


def test_the_scratch_sweep_removes_old_upload_folders_only(tmp_path: Path) -> None:
    uploads = tmp_path / "uploads"
    (uploads / "hbench-upload-old" / "job").mkdir(parents=True)
    old = age(uploads / "hbench-upload-old", hours=7)
    recent = age(uploads / "hbench-upload-recent", hours=1)
    other = age(uploads / "not-an-upload", hours=7)

    assert sweep_scratch(uploads) == 1

    assert not old.exists()
    assert recent.exists() and other.exists()
    assert sweep_scratch(tmp_path / "missing") == 0


def test_the_service_sweeps_old_upload_folders_when_it_starts(
    app: FastAPI, settings: Settings
) -> None:
    left = age(settings.upload_dir / "hbench-upload-killed", hours=7)

    with TestClient(app, **LOCAL):
        assert not left.exists()
        assert settings.upload_dir.is_dir()


def test_the_sweep_knows_the_names_of_the_archive_readers_folders(tmp_path: Path) -> None:
    with scratch_folder(tmp_path) as folder:
        assert folder.name.startswith(SCRATCH_PREFIX)
