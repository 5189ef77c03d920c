"""`bench-published-before`: a job counts once, under its id or with its id changed, at
publish and at a run-token upload, even after the first copy is deleted."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.db.models import JobStatus
from hbench.jobs.reader import read_job

from ..bench.conftest import issue_run, job_rows, run_token, upload
from ..bench.jobs import SealedJob
from ..conftest import TokenFactory, bearer
from .conftest import FakeClock, job_row, kinds, publish, uploaded, variant

AGAIN = "and a job is published once: run the benchmark again for a new result"


def publish_and_delete(client: TestClient, body: bytes, token: str) -> str:
    job_id = uploaded(client, body, token)
    assert publish(client, job_id, token).status_code == 200
    client.post(f"/api/bench/jobs/{job_id}/withdraw", headers=bearer(token))
    deleted = client.delete(
        f"/api/bench/jobs/{job_id}", params={"confirm": "oracle-k2"}, headers=bearer(token)
    )
    assert deleted.status_code == 200
    return job_id


def test_the_same_job_uploaded_again_is_refused_at_publish(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    sealed_archive: bytes, clock: FakeClock,
) -> None:  # fmt: skip
    alice, bob = make_token("alice"), make_token("bob")
    publish_and_delete(client, sealed_archive, alice)
    again = uploaded(client, sealed_archive, bob)  # a copy stays private: that is allowed
    before = kinds(db)

    answer = publish(client, again, bob)

    assert (answer.status_code, answer.json()["code"]) == (409, "bench-published-before")
    harbor_id = read_job(sealed.path).job_id
    assert answer.json()["detail"] == (
        f"hbench job {harbor_id} was published before, {AGAIN} (bench-published-before)"
    )
    assert job_row(db, again).status is JobStatus.PRIVATE and kinds(db) == before


def test_a_copy_with_its_job_id_changed_is_recognised_by_its_trials(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    sealed_archive: bytes, tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    publish_and_delete(client, sealed_archive, token)
    copy = uploaded(client, variant(sealed, tmp_path), token)

    answer = publish(client, copy, token)

    assert answer.json()["code"] == "bench-published-before"
    message = answer.json()["errors"][0]["message"]
    assert message.startswith("a trial of ") and message.endswith(f"was published before, {AGAIN}")


def test_a_run_token_upload_of_a_published_job_is_refused_and_stores_nothing(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    sealed_archive: bytes, tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    first = uploaded(client, sealed_archive, token)
    publish(client, first, token)
    issued = issue_run(db, sealed.spec, login="alice")

    same = upload(client, sealed_archive, **run_token(issued.token))

    assert (same.status_code, same.json()["code"]) == (409, "bench-published-before")
    assert same.json()["errors"][0]["message"].startswith("hbench job ")
    assert [str(row.id) for row in job_rows(db)] == [first]


def test_a_job_that_was_never_published_may_be_uploaded_and_published_again(
    client: TestClient, *, make_token: TokenFactory, sealed_archive: bytes, clock: FakeClock
) -> None:
    token = make_token("alice")
    first = uploaded(client, sealed_archive, token)
    client.delete(f"/api/bench/jobs/{first}", params={"confirm": "oracle-k2"},
                  headers=bearer(token))  # fmt: skip
    again = uploaded(client, sealed_archive, token)

    assert publish(client, again, token).status_code == 200
