"""Fixtures for regrading: the service with regrades on, and its worker run on demand.

The worker runs real `harbor job regrade` in the bubblewrap sandbox, so each test that
drains the queue pays for a Harbor start (a few seconds).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.blobs import LocalBlobStore
from app.db.session import Database
from app.regrade.worker import RegradeWorker
from app.settings import Settings

from ..bench.conftest import NOW, FakeClock, clock, sealed, sealed_archive

__all__ = ["NOW", "FakeClock", "clock", "sealed", "sealed_archive"]


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Regrades on, the background writer off (tests run the writer themselves)."""
    return Settings(
        state_dir=tmp_path / "state",
        database_url=database_url,
        writer_enabled=False,
        regrade_enabled=True,
    )


def regrade_queue(settings: Settings) -> int:
    """Run the regrade worker until nothing is queued, as `hbench-app regrade work --once`
    does; returns how many regrades ran."""
    database = Database(settings.effective_database_url)
    try:
        return RegradeWorker(settings, database, LocalBlobStore(settings.blob_dir)).drain()
    finally:
        database.dispose()
