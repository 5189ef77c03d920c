"""Fixtures for the issued-run endpoints: a clock the test moves, and request helpers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.clock import get_clock
from app.db.models import IssuedRun

START = datetime(2026, 10, 30, 12, 0, tzinfo=UTC)
DEMO: dict[str, Any] = {"arena": "hbench-demo", "declarative": {"agent": "oracle"}}


class FakeClock:
    """The service's clock, set by the test: it moves only when told to."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock(app: FastAPI) -> FakeClock:
    """The app's clock, from `START` on."""
    fake = FakeClock(START)
    app.dependency_overrides[get_clock] = lambda: fake
    return fake


def issue(client: TestClient, body: dict[str, Any] | None = None, **headers: str) -> Response:
    return client.post("/api/local-runs", json=DEMO if body is None else body, headers=headers)


def stored_runs(db: Session) -> list[IssuedRun]:
    """Every issued run in the database, as it is now (not as this session last saw it)."""
    db.rollback()  # end any transaction, so the app's commits show
    return list(db.scalars(select(IssuedRun).order_by(IssuedRun.issued_at)))


def count_runs(db: Session) -> int:
    db.rollback()  # end any transaction, so the app's commits show
    return db.scalar(select(func.count()).select_from(IssuedRun)) or 0
