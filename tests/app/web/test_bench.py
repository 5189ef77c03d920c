"""Your bench without a browser, on SQLite and PostgreSQL: a real sealed job uploaded through
the page's upload route, then published, reported, withdrawn and deleted through the
pages' forms; run tokens pasted on the page."""

from __future__ import annotations

import re
import uuid
from dataclasses import replace

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Job, JobStatus, OutboxEntry, Report, ReportStatus, utcnow
from app.registry import default_registry, get_registry

from ..bench.conftest import issue_run
from ..bench.jobs import SealedJob
from .conftest import ORIGIN, submit

pytestmark = pytest.mark.harbor

UPLOAD_TOKEN = re.compile(r'data-csrf="([0-9a-f]+)"')


def page_upload(client: TestClient, archive: bytes, run_token: str | None = None) -> Response:
    found = UPLOAD_TOKEN.search(client.get("/bench").text)
    assert found is not None
    headers = {"content-type": "application/gzip", "origin": ORIGIN, "x-hbench-csrf": found[1]}
    if run_token is not None:
        headers["hpg-run-token"] = run_token
    return client.post("/bench/upload", content=archive, headers=headers)


def job_row(db: Session, job_id: str) -> Job:
    db.rollback()
    return db.get_one(Job, uuid.UUID(job_id))


def test_a_job_from_upload_to_deletion(
    client: TestClient, db: Session, sealed_archive: bytes
) -> None:
    uploaded = page_upload(client, sealed_archive)
    assert uploaded.status_code == 201, uploaded.text
    job_id = uploaded.json()["id"]
    assert uploaded.json()["location"] == f"/bench/jobs/{job_id}?done=uploaded"
    page = client.get(uploaded.json()["location"]).text
    assert "kept private until you publish it" in page
    assert "manifest-matches-bytes" in page  # the checks, with their rule codes
    # This service regrades nothing: the job says so, and would be self-reported only.
    assert "Not regradable: this service does not regrade jobs" in page
    assert '<span class="level level-self-reported"' in page and "level-regraded" not in page
    assert f'href="/bench/jobs/{job_id}/publish"' in page
    assert job_id in client.get("/bench").text

    job = f"/bench/jobs/{job_id}"
    assert "Make it public?" in client.get(f"{job}/publish").text
    published = submit(client, f"{job}/publish", f"{job}/publish", {})
    assert published.status_code == 303, published.text
    assert published.headers["location"] == f"{job}?done=published"
    assert job_row(db, job_id).status is JobStatus.PUBLISHED
    # The job's page offers no Publish now, and its question says why; a form sent anyway
    # (the form token is the person's, so any page's does) is refused with the code.
    assert client.get(f"{job}/publish").status_code == 409
    again = submit(client, "/settings", f"{job}/publish", {})
    assert again.status_code == 409 and "job-already-published" in again.text

    reported = submit(client, "/report", "/report",
                      {"run": job_id, "message": "this score can't be right"})  # fmt: skip
    assert reported.status_code == 200 and 'id="report-sent"' in reported.text
    [report] = db.scalars(select(Report))
    queue = client.get("/maintainers").text
    assert f'id="report-{report.id}"' in queue and "this score can&#39;t be right" in queue
    dismissed = submit(client, "/maintainers", f"/maintainers/reports/{report.id}/dismiss", {})
    assert dismissed.status_code == 303
    db.refresh(report)
    assert report.status is ReportStatus.DISMISSED

    asked = client.get(f"{job}/delete").text
    assert "as it was published: deleting doesn't take it off" in asked
    assert "Withdraw for good?" in client.get(f"{job}/withdraw").text
    withdrawn = submit(client, f"{job}/withdraw", f"{job}/withdraw", {})
    assert withdrawn.status_code == 303
    assert job_row(db, job_id).status is JobStatus.WITHDRAWN

    wrong = submit(client, f"{job}/delete", f"{job}/delete", {"confirm": "another-name"})
    assert wrong.status_code == 422 and "delete-confirm-mismatch" in wrong.text
    assert job_row(db, job_id).status is JobStatus.WITHDRAWN
    name = job_row(db, job_id).job_name
    deleted = submit(client, f"{job}/delete", f"{job}/delete", {"confirm": name})
    assert deleted.status_code == 303 and deleted.headers["location"] == "/bench?done=deleted"
    assert job_row(db, job_id).status is JobStatus.DELETED
    assert job_id not in client.get("/bench").text


def test_a_published_job_deleted_keeps_its_score_and_loses_its_files(
    client: TestClient, db: Session, sealed_archive: bytes, remote: TestClient
) -> None:
    job_id = page_upload(client, sealed_archive).json()["id"]
    job = f"/bench/jobs/{job_id}"
    assert submit(client, f"{job}/publish", f"{job}/publish", {}).status_code == 303
    name = job_row(db, job_id).job_name

    deleted = submit(client, f"{job}/delete", f"{job}/delete", {"confirm": name})

    assert deleted.status_code == 303, deleted.text
    assert deleted.headers["location"] == "/bench?done=deleted-kept"
    bench = client.get(deleted.headers["location"]).text
    assert "its score stays on its board" in bench and job_id not in bench.split("</h1>")[1]
    row = job_row(db, job_id)
    assert (row.status, row.board) == (JobStatus.DELETED, "hbench-demo")
    assert row.fingerprint is not None
    for reader in (client, remote):
        gone = reader.get(f"/api/bench/jobs/{job_id}/download")
        assert (gone.status_code, gone.json()["code"]) == (410, "job-files-deleted")
    [change] = [e for e in db.scalars(select(OutboxEntry)) if e.kind == "delete_run_files"]
    assert change.payload == {"board": "hbench-demo", "runId": job_id}
    assert client.get(job).status_code == 404


def test_a_pasted_run_token_uploads_as_the_issued_run(
    client: TestClient, db: Session, sealed: SealedJob, sealed_archive: bytes
) -> None:
    theirs = issue_run(db, sealed.spec, login="bob", issued_at=utcnow())
    refused = page_upload(client, sealed_archive, theirs.token)
    assert refused.status_code == 401 and refused.json()["code"] == "run-token-invalid"
    assert db.scalars(select(Job)).all() == []

    mine = issue_run(db, sealed.spec, login="local", issued_at=utcnow())
    uploaded = page_upload(client, sealed_archive, mine.token)
    assert uploaded.status_code == 201, uploaded.text
    assert job_row(db, uploaded.json()["id"]).issued_run_id == mine.run_id
    confirm = client.get(f"/bench/jobs/{uploaded.json()['id']}/publish").text
    assert 'It is an issued run: it goes on <span class="slug">hbench-demo</span>' in confirm

    used = page_upload(client, sealed_archive, mine.token)
    assert used.status_code == 409 and used.json()["code"] == "bench-published-before"


def test_a_refused_upload_lists_its_rule_codes(client: TestClient, db: Session) -> None:
    answer = page_upload(client, b"not a gzip stream at all")
    assert answer.status_code == 415
    assert answer.json()["code"] == "upload-not-gzip"
    assert db.scalars(select(Job)).all() == []


def test_a_maintainer_takes_a_reported_run_down(
    client: TestClient, db: Session, sealed_archive: bytes
) -> None:
    job_id = page_upload(client, sealed_archive).json()["id"]
    job = f"/bench/jobs/{job_id}"
    assert submit(client, f"{job}/publish", f"{job}/publish", {}).status_code == 303
    fields = {"run": job_id, "message": "the trajectories show no work"}
    assert submit(client, "/report", "/report", fields).status_code == 200
    [report] = db.scalars(select(Report))
    action = f"/maintainers/reports/{report.id}/take-down"
    blank = submit(client, "/maintainers", action, {"reason": "breaks-terms", "note": " "})
    assert blank.status_code == 422 and "takedown-note-invalid" in blank.text
    taken = submit(client, "/maintainers", action,
                   {"reason": "breaks-terms", "note": "no work in the trajectories"})  # fmt: skip
    assert taken.status_code == 303, taken.text
    db.refresh(report)
    assert report.status is ReportStatus.TAKEN_DOWN and report.reason == "breaks-terms"
    assert job_row(db, job_id).taken_down_at is not None


def test_publishing_asks_which_board_when_several_fit(
    app: FastAPI, client: TestClient, db: Session, sealed_archive: bytes
) -> None:
    registry = default_registry()
    twin = registry.boards["hbench-demo"].model_copy(update={"slug": "hbench-demo-twin"})
    boards = {**registry.boards, twin.slug: twin}
    app.dependency_overrides[get_registry] = lambda: replace(registry, boards=boards)
    job_id = page_upload(client, sealed_archive).json()["id"]
    job = f"/bench/jobs/{job_id}"
    confirm = client.get(f"{job}/publish").text
    assert 'value="hbench-demo"' in confirm and 'value="hbench-demo-twin"' in confirm
    unnamed = submit(client, f"{job}/publish", f"{job}/publish", {})
    assert unnamed.status_code == 409 and "publish-board-choice" in unnamed.text
    assert 'type="radio"' in unnamed.text
    chosen = submit(client, f"{job}/publish", f"{job}/publish", {"board": "hbench-demo-twin"})
    assert chosen.status_code == 303, chosen.text
    row = job_row(db, job_id)
    assert row.status is JobStatus.PUBLISHED and row.board == "hbench-demo-twin"
