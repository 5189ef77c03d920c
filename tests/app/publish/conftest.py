"""Fixtures for publishing: the uploads' real sealed job and its variants, uploads by
several owners, the outbox, and the data-repo writer run on demand.

The service's own background writer is off here, so a test decides when the data
repository is written (`write_data_repository`) and can look at the outbox before.
"""

from __future__ import annotations

import json
import shutil
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.datarepo.lock import writer_lock
from app.datarepo.service import writer_for
from app.db.models import Job, OutboxEntry
from app.db.session import Database
from app.settings import Settings
from hbench.jobs.manifest import load_manifest
from hbench.jobs.sealing import seal
from registry.datarepo.models import BoardRows

from ..bench.conftest import NOW, FakeClock, clock, sealed, sealed_archive, upload
from ..bench.jobs import SealedJob, packed
from ..conftest import NO_REGRADES, bearer

__all__ = ["NOW", "FakeClock", "clock", "sealed", "sealed_archive"]


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """The tests' settings, with the background writer off (tests run it themselves)."""
    return Settings(
        state_dir=tmp_path / "state", database_url=database_url, writer_enabled=False,
        **NO_REGRADES,
    )  # fmt: skip


def variant(
    sealed: SealedJob,
    folder: Path,
    *,
    new_id: bool = True,
    shift: timedelta = timedelta(0),
    config: dict[str, Any] | None = None,
) -> bytes:
    """A copy of the sealed job, sealed again: under a new Harbor job id, with its trials'
    times moved by `shift`, and with `config` merged into its config.json."""
    dest = folder / f"variant-{uuid.uuid4().hex[:8]}" / sealed.path.name
    shutil.copytree(sealed.path, dest)
    old_id = json.loads((dest / "result.json").read_text())["id"]
    new = str(uuid.uuid4()) if new_id else old_id
    for path in dest.rglob("*.json"):
        if path.name == "manifest.json":
            continue
        data = _shifted(json.loads(path.read_text().replace(old_id, new)), shift)
        if path == dest / "config.json" and config:
            data.update(config)
        path.write_text(json.dumps(data, indent=4))
    seal(dest, spec_digest=load_manifest(sealed.path).spec_digest)
    return packed(dest)


def _shifted(value: Any, shift: timedelta) -> Any:
    if not shift:
        return value
    if isinstance(value, dict):
        return {
            k: (
                _move(v, shift)
                if k in {"started_at", "finished_at", "updated_at", "created_at"}
                else _shifted(v, shift)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_shifted(v, shift) for v in value]
    return value


def _move(value: Any, shift: timedelta) -> Any:
    if not isinstance(value, str):
        return value
    moved = datetime.fromisoformat(value.replace("Z", "+00:00")) + shift
    return moved.isoformat().replace("+00:00", "Z")


def uploaded(client: TestClient, body: bytes, token: str, **headers: str) -> str:
    """Upload a job with an API token; its id on Your bench."""
    answer = upload(client, body, **bearer(token), **headers)
    assert answer.status_code == 201, answer.text
    job_id: str = answer.json()["id"]
    return job_id


def publish(client: TestClient, job_id: str, token: str, board: str | None = None) -> Response:
    body = {"board": board} if board is not None else None
    return client.post(f"/api/bench/jobs/{job_id}/publish", json=body, headers=bearer(token))


def outbox(db: Session) -> list[OutboxEntry]:
    db.rollback()
    return list(db.scalars(select(OutboxEntry).order_by(OutboxEntry.id)))


def kinds(db: Session) -> list[str]:
    return [entry.kind for entry in outbox(db)]


def job_row(db: Session, job_id: str) -> Job:
    db.rollback()
    row = db.get(Job, uuid.UUID(job_id))
    assert row is not None
    return row


def write_data_repository(settings: Settings) -> Path:
    """Run the data-repo writer once, as `hbench-app data-repo write --once`; returns the
    checkout it wrote."""
    database = Database(settings.effective_database_url)
    try:
        writer = writer_for(settings, database)
        with writer_lock(database, wait=60):
            report = writer.drain()
        assert report.failed == 0, report
    finally:
        database.dispose()
    return settings.data_repository_dir


def board_rows(checkout: Path, board: str) -> BoardRows:
    return BoardRows.model_validate_json((checkout / "boards" / board / "rows.json").read_text())
