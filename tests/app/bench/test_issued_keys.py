"""An issued run whose spec holds a key is stored redacted, and an upload is still matched
against the spec as issued: the job's value fills in what redaction hid, and the whole
must hash to the digest issued. Neither key is ever quoted."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.checks.summarize import redacted
from app.db.models import IssuedRun, IssuedRunStatus
from app.settings import Settings
from hbench.digest import spec_digest

from ..conftest import REMOTE
from .conftest import (
    FakeClock,
    assert_nothing_stored,
    issue_run,
    job_rows,
    run_status,
    run_token,
    upload,
)
from .jobs import SealedJob, edit_json, packed, reseal

KEY = "sk-ant-api03-" + "Zx9Qw7Er5Ty3Ui1Op2As4Df6Gh8Jk0LmNbVcXzQwErTyUiOp" * 2 + "-AbCdEfAA"
OTHER_KEY = KEY.replace("Zx9", "Yw8")


@pytest.fixture
def remote(client: TestClient, clock: FakeClock) -> TestClient:
    return TestClient(client.app, **REMOTE)


def with_key(spec: dict[str, Any], key: str) -> dict[str, Any]:
    keyed = copy.deepcopy(spec)
    keyed["agents"] = [{"name": "oracle", "kwargs": {"api_key": key, "temperature": 0.2}}]
    return keyed


def issued_with_a_key(db: Session, sealed: SealedJob) -> tuple[Any, dict[str, Any]]:
    """A run issued for the sealed job's spec with a key among the agent's options,
    stored as `POST /api/local-runs` stores it: redacted, with the digest of the whole."""
    spec = with_key(sealed.spec, KEY)
    run = issue_run(db, spec)
    row = db.get_one(IssuedRun, run.run_id)
    row.spec = redacted(spec)
    db.commit()
    assert KEY not in str(row.spec) and row.spec_digest == spec_digest(spec)
    return run, spec


def job_run_with(sealed: SealedJob, folder: Path, key: str, issued: dict[str, Any]) -> bytes:
    """The sealed job as `hbench run` would have written it for a spec with `key`, its
    manifest naming the digest of the spec issued."""
    job = sealed.copy_to(folder)
    agents = with_key(sealed.spec, key)["agents"]
    edit_json(job / "config.json", lambda data: data.update(agents=agents))
    reseal(job, spec_digest=spec_digest(issued))
    return packed(job)


def test_a_job_run_with_the_issued_key_matches_its_redacted_spec(
    remote: TestClient, db: Session, sealed: SealedJob, tmp_path: Path
) -> None:
    run, spec = issued_with_a_key(db, sealed)

    answer = upload(remote, job_run_with(sealed, tmp_path, KEY, spec), **run_token(run.token))

    assert answer.status_code == 201, answer.text
    statuses = {check["rule"]: check["status"] for check in answer.json()["checks"]}
    assert statuses["spec-matches"] == statuses["spec-digest-matches"] == "passed"
    assert run_status(db, run.run_id) is IssuedRunStatus.UPLOADED
    assert KEY not in answer.text
    (row,) = job_rows(db)
    assert KEY not in str(row.summary)


def test_a_job_run_with_another_key_is_a_mismatch_that_shows_neither(
    remote: TestClient, db: Session, settings: Settings, sealed: SealedJob, tmp_path: Path
) -> None:
    run, spec = issued_with_a_key(db, sealed)

    answer = upload(remote, job_run_with(sealed, tmp_path, OTHER_KEY, spec), **run_token(run.token))

    assert (answer.status_code, answer.json()["code"]) == (422, "local-spec-mismatch")
    (error,) = answer.json()["errors"]
    assert error["path"] == "config.json:agents[0].kwargs.api_key"
    assert "not the key-like value the run was issued with" in error["message"]
    for key in (KEY, OTHER_KEY):
        assert key not in answer.text
        assert key[13:30] not in answer.text
    assert run_status(db, run.run_id) is IssuedRunStatus.ISSUED
    assert_nothing_stored(db, settings)


def test_a_job_that_changes_another_field_too_is_told_that_field(
    remote: TestClient, db: Session, sealed: SealedJob, tmp_path: Path
) -> None:
    run, spec = issued_with_a_key(db, sealed)
    job = sealed.copy_to(tmp_path)
    agents = with_key(sealed.spec, KEY)["agents"]
    edit_json(job / "config.json", lambda data: data.update(agents=agents, n_attempts=3))
    reseal(job, spec_digest=spec_digest(spec))

    answer = upload(remote, packed(job), **run_token(run.token))

    assert answer.status_code == 422
    paths = [error["path"] for error in answer.json()["errors"]]
    assert "config.json:n_attempts" in paths
    assert KEY not in answer.text
