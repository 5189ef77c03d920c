"""`POST /api/reports` (../shared/spec/hbench-withdraw-delete-report.txt, "Report a run")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Report, ReportStatus

from .conftest import FakeClock, public_job, report


def test_a_report_is_answered_with_its_number(reporter: TestClient, db: Session) -> None:
    job = public_job(db)

    answer = report(reporter, entry="oracle-a3f9c1", run=str(job.id))

    assert answer.status_code == 201, answer.text
    stored = db.scalars(select(Report)).one()
    assert answer.json() == {"number": stored.id, "status": "open"}
    assert (stored.job_ref, stored.board, stored.status) == (
        job.id,
        "hbench-demo",
        ReportStatus.OPEN,
    )


def test_an_entry_or_a_run_alone_is_enough(reporter: TestClient, db: Session) -> None:
    job = public_job(db)
    assert report(reporter, entry="oracle-a3f9c1").status_code == 201
    assert report(reporter, run=str(job.id)).status_code == 201


@pytest.mark.parametrize(("length", "status"), [(9, 422), (10, 201), (2000, 201), (2001, 422)])
def test_what_is_wrong_takes_10_to_2000_characters(
    reporter: TestClient, db: Session, length: int, status: int
) -> None:
    public_job(db)
    answer = report(reporter, entry="oracle-a3f9c1", message="x" * length)
    assert answer.status_code == status, answer.text
    if status == 422:
        assert answer.json()["code"] == "report-message-length"


def test_a_report_naming_nothing_lists_every_problem(reporter: TestClient) -> None:
    answer = report(reporter, message="short")
    assert answer.status_code == 422
    assert [e["code"] for e in answer.json()["errors"]] == [
        "report-target-missing",
        "report-message-length",
    ]


@pytest.mark.parametrize(
    "target",
    [
        {"entry": "nobody-000000"},
        {"run": "not-a-run"},
        {"run": "00000000-0000-0000-0000-000000000000"},
    ],
)
def test_an_unknown_entry_or_run_is_refused(
    reporter: TestClient, db: Session, target: dict[str, str]
) -> None:
    public_job(db)
    answer = report(reporter, **target)
    assert answer.status_code == 404
    assert answer.json()["code"] == "report-target-unknown"


def test_a_withdrawn_run_can_not_be_reported(
    reporter: TestClient, db: Session, clock: FakeClock
) -> None:
    public_job(db, withdrawn_at=clock.now)
    assert report(reporter, entry="oracle-a3f9c1").json()["code"] == "report-target-unknown"


def test_five_reports_an_hour(reporter: TestClient, db: Session, clock: FakeClock) -> None:
    public_job(db)
    for _ in range(5):
        clock.now += timedelta(minutes=1)
        assert report(reporter, entry="oracle-a3f9c1").status_code == 201

    refused = report(reporter, entry="oracle-a3f9c1")

    assert refused.status_code == 429
    assert refused.json()["code"] == "report-limit"
    assert "try again in 56 minutes" in refused.json()["detail"]
    clock.now += timedelta(minutes=56)
    assert report(reporter, entry="oracle-a3f9c1").status_code == 201


def test_reporting_needs_a_sign_in(remote: TestClient, db: Session) -> None:
    public_job(db)
    answer = report(remote, entry="oracle-a3f9c1")
    assert answer.status_code == 401
    assert answer.json()["code"] == "auth-required"
