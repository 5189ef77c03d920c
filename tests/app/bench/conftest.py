"""Fixtures for the Your-bench endpoints: a sealed real job, uploads, issued runs, and a look
at everything an upload may have stored (rows, blobs, scratch folders, consumed tokens)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.auth.tokens import hash_token, new_run_token
from app.clock import get_clock
from app.db.models import IssuedRun, IssuedRunStatus, Job
from app.settings import Settings
from hbench.digest import spec_digest
from tests.conftest import HarborJobFactory

from .jobs import SealedJob, packed, sealed_job

NOW = datetime(2026, 10, 30, 12, 0, tzinfo=UTC)
GZIP = {"content-type": "application/gzip"}


@pytest.fixture(scope="session")
def sealed(
    harbor_job: HarborJobFactory, demo_registry: Path, tmp_path_factory: pytest.TempPathFactory
) -> SealedJob:
    """The real oracle job, sealed; copy it (`sealed.copy_to`) before changing it."""
    return sealed_job(harbor_job, demo_registry, tmp_path_factory.mktemp("sealed"))


@pytest.fixture(scope="session")
def sealed_archive(sealed: SealedJob) -> bytes:
    return packed(sealed.path)


class FakeClock:
    """The service's clock, set by the test: it moves only when told to."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock(app: FastAPI) -> FakeClock:
    """The app's clock, at `NOW`, moved by the test."""
    fake = FakeClock(NOW)
    app.dependency_overrides[get_clock] = lambda: fake
    return fake


def upload(client: TestClient, body: bytes, **headers: str) -> Response:
    return client.post("/api/bench/uploads", content=body, headers={**GZIP, **headers})


def run_token(token: str) -> dict[str, str]:
    return {"hpg-run-token": token}


@dataclass(frozen=True)
class Issued:
    run_id: uuid.UUID
    token: str


def issue_run(
    db: Session,
    spec: dict[str, Any],
    *,
    login: str = "alice",
    status: IssuedRunStatus = IssuedRunStatus.ISSUED,
    issued_at: datetime = NOW - timedelta(hours=1),
    lifetime: timedelta = timedelta(hours=48),
) -> Issued:
    """An issued run stored directly, as `POST /api/local-runs` would store it."""
    account = ensure_account(db, login)
    token = new_run_token()
    run = IssuedRun(
        account_id=account.id,
        board="hbench-demo",
        entry="oracle-a1b2c3",
        spec=spec,
        spec_digest=spec_digest(spec),
        token_hash=hash_token(token),
        status=status,
        issued_at=issued_at,
        expires_at=issued_at + lifetime,
    )
    db.add(run)
    db.commit()
    return Issued(run.id, token)


def run_status(db: Session, run_id: uuid.UUID) -> IssuedRunStatus:
    db.rollback()  # end any transaction, so the app's commits show
    status = db.scalar(select(IssuedRun.status).where(IssuedRun.id == run_id))
    assert status is not None
    return status


def job_rows(db: Session) -> list[Job]:
    db.rollback()
    return list(db.scalars(select(Job).order_by(Job.uploaded_at)))


def stored_blobs(settings: Settings) -> list[str]:
    jobs = settings.blob_dir / "jobs"
    return sorted(p.relative_to(jobs).as_posix() for p in jobs.rglob("*") if p.is_file())


def scratch_left(settings: Settings) -> list[str]:
    folder = settings.upload_dir
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def assert_nothing_stored(db: Session, settings: Settings) -> None:
    """No job row, no archive, no scratch folder left behind."""
    db.rollback()
    assert db.scalar(select(func.count()).select_from(Job)) == 0
    assert stored_blobs(settings) == []
    assert scratch_left(settings) == []
