"""Uploading an issued run with its run token: one accepted upload, of exactly its spec.

Issued runs are stored directly in the database, as the issuing endpoint stores them.
"""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.auth.tokens import new_run_token
from app.db.models import IssuedRunStatus, Job
from app.settings import Settings
from hbench.digest import spec_digest

from ..conftest import REMOTE, TokenFactory, bearer
from .conftest import (
    NOW,
    FakeClock,
    assert_nothing_stored,
    issue_run,
    job_rows,
    run_status,
    run_token,
    stored_blobs,
    upload,
)
from .jobs import SealedJob, edit_json, packed, reseal


@pytest.fixture
def remote(client: TestClient, clock: FakeClock) -> TestClient:
    """A client on another machine, signed in by nothing but the headers it sends."""
    return TestClient(client.app, **REMOTE)


def codes(answer: Response) -> list[str]:
    return [error["code"] for error in answer.json()["errors"]]


def test_an_issued_run_is_accepted_once_with_its_token_alone(
    remote: TestClient, db: Session, settings: Settings, sealed: SealedJob, sealed_archive: bytes
) -> None:
    run = issue_run(db, sealed.spec)

    answer = upload(remote, sealed_archive, **run_token(run.token))

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["issued_run_id"] == str(run.run_id)
    assert body["boards"]["fits"] == ["hbench-demo"]
    statuses = {check["rule"]: check["status"] for check in body["checks"]}
    assert statuses["spec-matches"] == statuses["spec-digest-matches"] == "passed"
    assert statuses["environment-allowed"] == "skipped"
    (row,) = job_rows(db)
    assert (row.issued_run_id, row.board, row.entry) == (run.run_id, "hbench-demo", "oracle-a1b2c3")
    assert row.summary["issued_run"]["id"] == str(run.run_id)
    assert run_status(db, run.run_id) is IssuedRunStatus.UPLOADED

    # The same job again: it counted already, which is what the refusal says (a used token
    # with another job is run-token-used: test_a_run_that_no_longer_waits_takes_no_upload).
    again = upload(remote, sealed_archive, **run_token(run.token))

    assert (again.status_code, again.json()["code"]) == (409, "bench-published-before")
    assert again.json()["errors"][0]["message"] == (
        f"hbench job {row.job_id} was published before, and a job is published once: run "
        "the benchmark again for a new result"
    )
    assert len(job_rows(db)) == 1
    assert len(stored_blobs(settings)) == 1


@pytest.mark.parametrize(
    ("token", "why"),
    [
        (new_run_token(), "never issued"),
        ("hpr_short", "does not hold a run token"),
        ("hpg_" + "a" * 43, "holds an API token"),
    ],
    ids=["never-issued", "short", "api-token"],  # stable: the first token is random
)
def test_a_token_no_run_has_is_invalid(
    remote: TestClient,
    *,
    db: Session,
    settings: Settings,
    sealed_archive: bytes,
    token: str,
    why: str,
) -> None:
    answer = upload(remote, sealed_archive, **run_token(token))

    assert (answer.status_code, answer.json()["code"]) == (401, "run-token-invalid")
    assert why in answer.json()["detail"]
    assert_nothing_stored(db, settings)


@pytest.mark.parametrize(
    ("status", "issued_ago", "http", "code"),
    [
        (IssuedRunStatus.ISSUED, timedelta(hours=49), 401, "run-token-expired"),
        (IssuedRunStatus.UPLOADED, timedelta(hours=1), 409, "run-token-used"),
        (IssuedRunStatus.ABANDONED, timedelta(hours=1), 409, "run-abandoned"),
    ],
)
def test_a_run_that_no_longer_waits_takes_no_upload(
    remote: TestClient,
    *,
    db: Session,
    settings: Settings,
    sealed: SealedJob,
    sealed_archive: bytes,
    status: IssuedRunStatus,
    issued_ago: timedelta,
    http: int,
    code: str,
) -> None:
    run = issue_run(db, sealed.spec, status=status, issued_at=NOW - issued_ago)

    answer = upload(remote, sealed_archive, **run_token(run.token))

    assert (answer.status_code, answer.json()["code"]) == (http, code)
    assert run_status(db, run.run_id) is status
    assert_nothing_stored(db, settings)


def test_an_api_token_of_another_account_beside_the_run_token_is_refused(
    remote: TestClient,
    *,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    sealed: SealedJob,
    sealed_archive: bytes,
) -> None:
    run = issue_run(db, sealed.spec, login="alice")
    headers = {**run_token(run.token), **bearer(make_token("bob"))}

    answer = upload(remote, sealed_archive, **headers)

    assert (answer.status_code, answer.json()["code"]) == (401, "run-token-invalid")
    assert run_status(db, run.run_id) is IssuedRunStatus.ISSUED
    assert_nothing_stored(db, settings)


def test_a_job_run_with_other_settings_is_a_local_spec_mismatch(
    remote: TestClient, db: Session, settings: Settings, sealed: SealedJob, tmp_path: Path
) -> None:
    run = issue_run(db, sealed.spec)
    job = sealed.copy_to(tmp_path)
    edit_json(job / "config.json", lambda data: data.update(timeout_multiplier=2.0))
    reseal(job)  # the manifest still names the issued spec's digest

    answer = upload(remote, packed(job), **run_token(run.token))

    assert (answer.status_code, answer.json()["code"]) == (422, "local-spec-mismatch")
    (error,) = answer.json()["errors"]
    assert error["path"] == "config.json:timeout_multiplier"
    assert "timeout_multiplier is 2.0 in the job, 1.0 in the spec" in error["message"]
    assert run_status(db, run.run_id) is IssuedRunStatus.ISSUED
    assert_nothing_stored(db, settings)


def test_another_spec_names_each_field_and_its_digest(
    remote: TestClient, db: Session, settings: Settings, sealed: SealedJob, sealed_archive: bytes
) -> None:
    other = {**sealed.spec, "n_attempts": 3, "agents": [{"name": "nop"}]}
    run = issue_run(db, other)

    answer = upload(remote, sealed_archive, **run_token(run.token))

    assert answer.status_code == 422
    assert codes(answer) == ["local-spec-mismatch"] * 2 + ["run-spec-digest-mismatch"]
    paths = [error["path"] for error in answer.json()["errors"]]
    assert paths[:2] == ["config.json:agents[0].name", "config.json:n_attempts"]
    assert run_status(db, run.run_id) is IssuedRunStatus.ISSUED
    assert_nothing_stored(db, settings)


def test_jobs_dir_and_max_retries_may_differ_from_the_spec(
    remote: TestClient, db: Session, sealed: SealedJob, tmp_path: Path
) -> None:
    run = issue_run(db, sealed.spec)
    job = sealed.copy_to(tmp_path)
    edit_json(
        job / "config.json", lambda data: data.update(jobs_dir="out", retry={"max_retries": 3})
    )
    reseal(job)

    answer = upload(remote, packed(job), **run_token(run.token))

    assert answer.status_code == 201, answer.text


def test_a_job_sealed_for_another_spec_is_refused(
    remote: TestClient, db: Session, settings: Settings, sealed: SealedJob, tmp_path: Path
) -> None:
    run = issue_run(db, sealed.spec)
    job = sealed.copy_to(tmp_path)
    reseal(job, spec_digest="0" * 64)

    answer = upload(remote, packed(job), **run_token(run.token))

    assert (answer.status_code, codes(answer)) == (422, ["run-spec-digest-mismatch"])
    assert_nothing_stored(db, settings)


def test_an_issued_prompt_template_is_allowed(
    remote: TestClient, db: Session, sealed: SealedJob, tmp_path: Path
) -> None:
    agents: list[dict[str, Any]] = [{"name": "oracle", "kwargs": {"prompt_template_path": "p.j2"}}]
    spec = {**sealed.spec, "agents": agents}
    run = issue_run(db, spec)
    job = sealed.copy_to(tmp_path)
    edit_json(job / "config.json", lambda data: data.update(agents=agents))
    reseal(job, spec_digest=spec_digest(spec))

    answer = upload(remote, packed(job), **run_token(run.token))

    assert answer.status_code == 201, answer.text
    statuses = {check["rule"]: check["status"] for check in answer.json()["checks"]}
    assert statuses["prompt-as-issued"] == "passed"


def test_a_prompt_template_the_run_was_not_issued_with_is_refused(
    remote: TestClient, db: Session, settings: Settings, sealed: SealedJob, tmp_path: Path
) -> None:
    run = issue_run(db, sealed.spec)
    job = sealed.copy_to(tmp_path)
    agents = [{"name": "oracle", "kwargs": {"prompt_template_path": "p.j2"}}]
    edit_json(job / "config.json", lambda data: data.update(agents=agents))
    reseal(job)

    answer = upload(remote, packed(job), **run_token(run.token))

    assert answer.status_code == 422
    assert codes(answer) == ["job-prompt-not-issued", "local-spec-mismatch"]
    assert "was issued without them" in answer.json()["detail"]
    assert_nothing_stored(db, settings)


def test_a_second_job_for_the_run_breaks_the_unique_constraint_and_stores_nothing(
    remote: TestClient, db: Session, settings: Settings, sealed: SealedJob, sealed_archive: bytes
) -> None:
    """The database's last word: even when the run still reads as waiting, a second job row
    for it is refused, and the archive already written for it is deleted."""
    run = issue_run(db, sealed.spec)
    earlier = job_holding(db, run.run_id)

    answer = upload(remote, sealed_archive, **run_token(run.token))

    assert (answer.status_code, answer.json()["code"]) == (409, "run-token-used")
    assert [row.id for row in job_rows(db)] == [earlier.id]
    assert stored_blobs(settings) == []
    assert run_status(db, run.run_id) is IssuedRunStatus.ISSUED


def job_holding(db: Session, run_id: uuid.UUID) -> Job:
    """A job row already holding the run, while the run's own status still says `issued`."""
    row = Job(
        owner_id=ensure_account(db, "alice").id,
        job_id=uuid.uuid4(),
        job_name="earlier",
        summary={},
        checks=[],
        redactions={},
        issued_run_id=run_id,
        uploaded_at=NOW,
    )
    db.add(row)
    db.commit()
    return row


@pytest.mark.postgres
def test_two_uploads_racing_with_one_token_get_one_acceptance(
    remote: TestClient, db: Session, settings: Settings, sealed: SealedJob, sealed_archive: bytes
) -> None:
    run = issue_run(db, sealed.spec)
    start = threading.Barrier(2)
    answers: list[Response] = []
    raised: list[BaseException] = []

    def send() -> None:
        start.wait()
        try:
            answers.append(upload(remote, sealed_archive, **run_token(run.token)))
        except BaseException as exc:  # the test client re-raises what the app didn't answer
            raised.append(exc)

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)

    assert not any(thread.is_alive() for thread in threads), "an upload is still going"
    assert sorted(answer.status_code for answer in answers) == [201, 409], (
        [answer.text for answer in answers],
        raised,
    )
    (refused,) = [answer for answer in answers if answer.status_code == 409]
    # Refused at the database's unique run token, or, when the other upload committed first,
    # by the rule table, which also names the job as already stored.
    refusal = refused.json()
    # or, once the other's job is stored, as a copy of a job that counted.
    said = {refusal["code"], *(error["code"] for error in refusal["errors"])}
    assert said & {"run-token-used", "bench-published-before"}, refusal
    assert len(job_rows(db)) == 1
    assert len(stored_blobs(settings)) == 1
    assert run_status(db, run.run_id) is IssuedRunStatus.UPLOADED
