"""Withdrawing (for good), deleting with the job's name as confirmation, and downloading."""

from __future__ import annotations

import json
from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.datarepo.service import rebuild_site
from app.db.models import JobStatus
from app.settings import Settings
from registry.datarepo import layout
from registry.datarepo.models import PublishedRun
from sitebuild import page

from ..bench.conftest import stored_blobs
from ..conftest import REMOTE, TokenFactory, bearer
from .conftest import (
    NOW,
    FakeClock,
    board_rows,
    job_row,
    kinds,
    outbox,
    publish,
    uploaded,
    write_data_repository,
)


def withdraw(client: TestClient, job_id: str, token: str):  # type: ignore[no-untyped-def]
    return client.post(f"/api/bench/jobs/{job_id}/withdraw", headers=bearer(token))


def delete(client: TestClient, job_id: str, token: str, **params: str):  # type: ignore[no-untyped-def]
    return client.delete(f"/api/bench/jobs/{job_id}", params=params, headers=bearer(token))


def test_a_withdrawn_job_leaves_its_board_for_good(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed_archive: bytes,
    clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    assert withdraw(client, job_id, token).json()["code"] == "job-not-published"
    publish(client, job_id, token)
    clock.now = NOW + timedelta(hours=1)

    answer = withdraw(client, job_id, token)

    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "withdrawn"
    row = job_row(db, job_id)
    assert row.status is JobStatus.WITHDRAWN and row.withdrawn_at == clock.now
    assert outbox(db)[-1].kind == "withdraw_run"
    assert outbox(db)[-1].payload == {"board": "hbench-demo", "runId": job_id}
    again = publish(client, job_id, token)
    assert (again.status_code, again.json()["code"]) == (409, "job-withdrawn")
    assert withdraw(client, job_id, token).json()["code"] == "job-withdrawn"
    assert kinds(db) == ["publish_run", "withdraw_run"]


def test_delete_needs_the_jobs_name_and_keeps_a_hidden_fingerprint(
    client: TestClient, *, db: Session, settings: Settings, make_token: TokenFactory,
    sealed_archive: bytes, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)

    wrong = delete(client, job_id, token, confirm="not-its-name")
    missing = delete(client, job_id, token)
    assert (wrong.status_code, wrong.json()["code"]) == (422, "delete-confirm-mismatch")
    assert missing.json()["code"] == "delete-confirm-mismatch"
    assert job_row(db, job_id).status is JobStatus.PRIVATE

    answer = client.request(
        "DELETE", f"/api/bench/jobs/{job_id}", json={"confirm": "oracle-k2"}, headers=bearer(token)
    )

    assert answer.status_code == 200, answer.text
    assert answer.json()["files_purged_by"] == (NOW + timedelta(days=7)).isoformat().replace(
        "+00:00", "Z"
    )
    row = job_row(db, job_id)
    assert row.status is JobStatus.DELETED and row.deleted_at == NOW
    assert row.fingerprint is not None and len(row.fingerprint["trials"]) == 10
    assert "results" not in row.summary and row.checks == []
    assert kinds(db) == []  # never published: nothing public to say
    assert client.get(f"/api/bench/jobs/{job_id}", headers=bearer(token)).status_code == 404
    assert all(j["id"] != job_id for j in client.get(
        "/api/bench/jobs", headers=bearer(token)).json()["jobs"])  # fmt: skip
    assert delete(client, job_id, token, confirm="oracle-k2").status_code == 404
    # Its files stay in storage, out of reach, until the retention period ends.
    assert stored_blobs(settings) == [f"{job_id}/job.tar.gz"]
    # Its owner is told the files were deleted; anyone else finds no job.
    path = f"/api/bench/jobs/{job_id}/download"
    mine = client.get(path, headers=bearer(token))
    assert (mine.status_code, mine.json()["code"]) == (410, "job-files-deleted")
    assert answer.json()["score_stays_on"] is None
    assert TestClient(client.app, **REMOTE).get(path).json()["code"] == "bench-job-not-found"


def test_a_published_job_is_deleted_and_its_score_stays_on_its_board(
    client: TestClient, *, db: Session, settings: Settings, make_token: TokenFactory,
    sealed_archive: bytes, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    publish(client, job_id, token)
    checkout = write_data_repository(settings)
    [before] = board_rows(checkout, "hbench-demo").rows
    clock.now = NOW + timedelta(hours=2)

    answer = delete(client, job_id, token, confirm="oracle-k2")

    assert answer.status_code == 200, answer.text
    assert answer.json()["score_stays_on"] == "hbench-demo"
    row = job_row(db, job_id)
    assert row.status is JobStatus.DELETED and row.fingerprint is not None
    assert row.published_at == NOW and row.board == "hbench-demo"
    assert outbox(db)[-1].kind == "delete_run_files"
    assert outbox(db)[-1].payload == {"board": "hbench-demo", "runId": job_id}
    # Its files are out of reach at once, for anyone: the code says why.
    anyone = TestClient(client.app, **REMOTE)
    for reader in (anyone, client):
        gone = reader.get(f"/api/bench/jobs/{job_id}/download", headers=bearer(token))
        assert (gone.status_code, gone.json()["code"]) == (410, "job-files-deleted")
        assert "its score stays on hbench-demo" in gone.json()["detail"]

    write_data_repository(settings)
    rows = board_rows(checkout, "hbench-demo")
    assert rows.rows == [before]  # the score stays, as it was
    record = PublishedRun.model_validate_json(
        (checkout / layout.run_file("hbench-demo", job_id)).read_text()
    )
    assert (record.status, record.files_deleted_at, record.download) == ("public", clock.now, None)
    lines = (checkout / layout.audit_file(clock.now)).read_text().splitlines()
    audit = [json.loads(line) for line in lines]
    assert [(a["action"], a.get("run")) for a in audit][-1] == ("delete_files", job_id)

    rebuild_site(settings)
    run_page = (settings.site_dir / page.run("hbench-demo", job_id)).read_text()
    notice = run_page[run_page.index('id="files-deleted"') :]
    assert "Its owner deleted the job, and its files with it" in notice
    assert "Its score stays on the board as published" in notice
    assert "/download" not in run_page and "the redacted job</a>" not in run_page
    assert "none: its owner deleted the files" in run_page


def test_a_withdrawn_job_deleted_says_so_on_its_run_page(
    client: TestClient, *, db: Session, settings: Settings, make_token: TokenFactory,
    sealed_archive: bytes, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    publish(client, job_id, token)
    withdraw(client, job_id, token)

    answer = delete(client, job_id, token, confirm="oracle-k2")

    assert answer.status_code == 200 and answer.json()["score_stays_on"] is None
    assert kinds(db) == ["publish_run", "withdraw_run", "delete_run_files"]
    checkout = write_data_repository(settings)
    record = PublishedRun.model_validate_json(
        (checkout / layout.run_file("hbench-demo", job_id)).read_text()
    )
    assert (record.status, record.files_deleted_at) == ("withdrawn", NOW)
    rebuild_site(settings)
    run_page = (settings.site_dir / page.run("hbench-demo", job_id)).read_text()
    assert "Withdrawn by its owner" in run_page and 'id="files-deleted"' in run_page
    assert "Its score stays" not in run_page


def test_the_owner_downloads_a_private_job_and_anyone_a_published_one(
    client: TestClient, *, make_token: TokenFactory, sealed_archive: bytes, clock: FakeClock
) -> None:
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    anyone = TestClient(client.app, **REMOTE)
    path = f"/api/bench/jobs/{job_id}/download"

    mine = client.get(path, headers=bearer(token))
    assert mine.status_code == 200
    assert mine.headers["content-type"] == "application/gzip"
    assert mine.content[:2] == b"\x1f\x8b"
    assert anyone.get(path).json()["code"] == "bench-job-not-found"
    assert client.get(path, headers=bearer(make_token("bob"))).status_code == 404

    publish(client, job_id, token)
    assert anyone.get(path).content == mine.content


def test_an_unpublished_jobs_files_are_hidden_after_its_window(
    client: TestClient, *, make_token: TokenFactory, sealed_archive: bytes, clock: FakeClock
) -> None:
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    clock.now = NOW + timedelta(days=30)

    answer = client.get(f"/api/bench/jobs/{job_id}/download", headers=bearer(token))

    assert (answer.status_code, answer.json()["code"]) == (410, "job-files-hidden")
