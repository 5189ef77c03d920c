"""`GET /metrics`: the service's metrics in Prometheus' text format (`app.observe.metrics`),
with what the database knows read as it is scraped."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from fastapi import APIRouter, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)
from sqlalchemy import func, select

from app.datarepo import outbox
from app.db.models import Job
from app.dependencies import DatabaseDep, SettingsDep
from app.observe.metrics import (
    JOBS,
    MULTIPROCESS_VARIABLE,
    OUTBOX_GIVEN_UP,
    OUTBOX_OLDEST,
    OUTBOX_PENDING,
)

router = APIRouter(tags=["service"])


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    description="The service's metrics in Prometheus' text format (docs/deployment.md).",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}},
)
def scrape(database: DatabaseDep, settings: SettingsDep) -> Response:
    with database.session() as session:
        counts = outbox.counts(session, max_attempts=settings.writer_max_attempts)
        oldest = outbox.oldest_pending_time(session, max_attempts=settings.writer_max_attempts)
        by_status = session.execute(select(Job.status, func.count()).group_by(Job.status))
        jobs = {str(getattr(s, "value", s)): n for s, n in by_status}
    OUTBOX_PENDING.set(counts.pending)
    OUTBOX_GIVEN_UP.set(counts.given_up)
    OUTBOX_OLDEST.set(_age(oldest))
    for status, count in jobs.items():
        JOBS.labels(status).set(count)
    return Response(generate_latest(_registry()), media_type=CONTENT_TYPE_LATEST)


def _registry() -> CollectorRegistry:
    """This process's figures, or with several workers every worker's, from their files."""
    if MULTIPROCESS_VARIABLE not in os.environ:
        return REGISTRY
    combined = CollectorRegistry()
    multiprocess.MultiProcessCollector(combined)  # type: ignore[no-untyped-call]  # untyped upstream
    return combined


def _age(oldest: datetime | None) -> float:
    if oldest is None:
        return 0.0
    at = oldest if oldest.tzinfo else oldest.replace(tzinfo=UTC)
    return max(0.0, (datetime.now(UTC) - at).total_seconds())
