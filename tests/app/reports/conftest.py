"""Fixtures for reports: public runs in the database, a reporter signed in by token, and the
app's clock set by the test."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.clock import get_clock
from app.db.models import Job, JobStatus
from tests.app.conftest import REMOTE, TokenFactory, bearer

NOW = datetime(2026, 10, 30, 12, 0, tzinfo=UTC)
MESSAGE = "The score is 100 but the logs show every task timing out."


class FakeClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock(app: FastAPI) -> FakeClock:
    fake = FakeClock(NOW)
    app.dependency_overrides[get_clock] = lambda: fake
    return fake


def public_job(
    db: Session, owner: str = "owen", entry: str = "oracle-a3f9c1", **changes: object
) -> Job:
    """A job whose run is on the demo board."""
    job = Job(
        owner_id=ensure_account(db, owner).id, job_id=uuid.uuid4(), job_name="demo",
        status=JobStatus.PUBLISHED, summary={}, checks=[], redactions={},
        board="hbench-demo", entry=entry, published_at=NOW,
    )  # fmt: skip
    for name, value in changes.items():
        setattr(job, name, value)
    db.add(job)
    db.commit()
    return job


@pytest.fixture
def reporter(client: TestClient, make_token: TokenFactory) -> TestClient:
    """Rita, signed in by API token from another machine: not a maintainer."""
    remote = TestClient(client.app, **REMOTE)
    remote.headers.update(bearer(make_token("rita")))
    return remote


def report(client: TestClient, **body: object) -> Response:
    return client.post("/api/reports", json={"message": MESSAGE, **body})
