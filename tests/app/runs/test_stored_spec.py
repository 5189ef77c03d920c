"""An issued run's spec is stored with its key-like values redacted: an agent option that
holds an API key reaches the client whole, in the spec its digest is of, and no row of the
database and no log line."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.checks.summarize import redacted
from app.db.models import Base
from app.uploads.redact import REDACTED
from hbench.digest import spec_digest

from .conftest import FakeClock, issue, stored_runs

KEY = "sk-ant-api03-" + "Zx9Qw7Er5Ty3Ui1Op2As4Df6Gh8Jk0LmNbVcXzQwErTyUiOp" * 2 + "-AbCdEfAA"
"""An Anthropic API key, as far as its shape goes."""


def everything_stored(db: Session) -> str:
    """Every row of every table, as text."""
    db.rollback()
    rows = [
        repr(row)
        for table in Base.metadata.sorted_tables
        for row in db.execute(select(table)).all()
    ]
    # And the issued run's JSON as the database holds it, not as the driver parses it.
    rows += [str(value) for value in db.scalars(text("SELECT CAST(spec AS TEXT) FROM issued_runs"))]
    return "\n".join(rows)


def test_a_key_in_the_agents_options_is_stored_redacted_and_answered_whole(
    client: TestClient, db: Session, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    kwargs: dict[str, Any] = {"api_key": KEY, "temperature": 0.2}
    body = {"arena": "hbench-demo", "declarative": {"agent": "oracle", "kwargs": kwargs}}
    with caplog.at_level(logging.DEBUG):
        answer = issue(client, body)
        listed = client.get("/api/local-runs")

    assert answer.status_code == 201, answer.text
    spec = answer.json()["spec"]
    # The client gets the spec as issued, and the digest is of that spec.
    assert spec["agents"][0]["kwargs"] == kwargs
    assert answer.json()["spec_digest"] == spec_digest(spec)

    (run,) = stored_runs(db)
    assert run.spec == redacted(spec)
    assert run.spec["agents"][0]["kwargs"] == {"api_key": REDACTED, "temperature": 0.2}
    assert run.spec_digest == spec_digest(spec)
    assert KEY not in everything_stored(db)
    assert KEY[20:40] not in everything_stored(db)
    assert KEY not in caplog.text
    assert KEY not in listed.text
    assert json.dumps(run.spec).count(REDACTED) == 1
