"""`POST /api/bench/uploads` accepting a real job, and Your bench reading it back."""

from __future__ import annotations

import tarfile
import uuid
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.bench.storage import id_time
from app.settings import Settings
from hbench.jobs.manifest import load_manifest
from hbench.jobs.reader import read_job

from ..conftest import REMOTE, TokenFactory, bearer
from .conftest import job_rows, scratch_left, stored_blobs, upload
from .jobs import SealedJob


def stored_files(settings: Settings, key: str) -> dict[str, bytes]:
    """The files of a stored archive, by their path below the job folder."""
    with tarfile.open(settings.blob_dir / key, "r:gz") as tar:
        return {
            member.name.split("/", 1)[1]: tar.extractfile(member).read()  # type: ignore[union-attr]
            for member in tar.getmembers()
            if member.isfile()
        }


def test_a_real_job_is_checked_and_kept_privately(
    client: TestClient,
    *,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    sealed: SealedJob,
    sealed_archive: bytes,
) -> None:
    token = make_token("alice")
    job = read_job(sealed.path)

    answer = upload(client, sealed_archive, **bearer(token))

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["harbor_job_id"] == job.job_id
    assert body["name"] == "oracle-k2"
    assert body["status"] == "private"
    assert body["dataset"] == "hbench-demo@1.0"
    assert (body["agent"], body["model"], body["n_attempts"]) == ("oracle", None, 2)
    # The oracle solves four of the five demo tasks, twice each.
    assert body["score"] == 0.8
    assert body["pass_at_k"] == {str(k): v for k, v in job.pass_at_k.items()}
    assert body["boards"] == {"fits": ["hbench-demo"], "opens": None, "notes": []}
    assert body["redactions"] == {"total": 0, "files": {}}
    assert body["issued_run_id"] is None
    statuses = {check["rule"]: check["status"] for check in body["checks"]}
    assert statuses.pop("spec-matches") == statuses.pop("spec-digest-matches") == "skipped"
    assert statuses.pop("prompt-as-issued") == "skipped"  # an issued run's rule
    assert set(statuses.values()) == {"passed"}

    (row,) = job_rows(db)
    assert row.id == uuid.UUID(body["id"])
    assert row.owner_id is not None and row.job_id == uuid.UUID(job.job_id)
    # The id is a UUID version 7: its time is the upload's, which the orphan sweep reads.
    assert id_time(row.id) is not None
    assert row.summary["results"]["prime-factor"] == [0.0, 0.0]
    assert row.summary["manifest_digest"] == load_manifest(sealed.path).digest
    assert row.summary["spec_digest"] == sealed.digest
    assert row.summary["facts"]["dataset"] == "hbench-demo@1.0"
    assert len(row.fingerprint["trials"]) == 10  # type: ignore[index]
    assert row.checks == body["checks"]
    assert row.blob_key == f"jobs/{row.id}/job.tar.gz"
    assert stored_blobs(settings) == [f"{row.id}/job.tar.gz"]
    assert scratch_left(settings) == []
    # Nothing was redacted, so the stored files are the sealed files, byte for byte.
    files = stored_files(settings, row.blob_key)
    assert files == {
        path.relative_to(sealed.path).as_posix(): path.read_bytes()
        for path in sealed.path.rglob("*")
        if path.is_file()
    }


def test_the_local_user_uploads_from_this_machine_without_a_token(
    client: TestClient, db: Session, sealed_archive: bytes
) -> None:
    answer = upload(client, sealed_archive)

    assert answer.status_code == 201, answer.text
    (row,) = job_rows(db)
    assert answer.json()["id"] == str(row.id)


def uploaded(client: TestClient, archive: bytes, token: str) -> dict[str, Any]:
    answer = upload(client, archive, **bearer(token))
    assert answer.status_code == 201, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_your_bench_lists_your_jobs_newest_first(
    client: TestClient, make_token: TokenFactory, sealed_archive: bytes
) -> None:
    alice, bob = make_token("alice"), make_token("bob")
    first = uploaded(client, sealed_archive, alice)
    second = uploaded(client, sealed_archive, alice)  # the same job twice: two uploads
    uploaded(client, sealed_archive, bob)
    remote = TestClient(client.app, **REMOTE)

    listed = remote.get("/api/bench/jobs", headers=bearer(alice))

    assert listed.status_code == 200, listed.text
    jobs = listed.json()["jobs"]
    assert [job["id"] for job in jobs] == [second["id"], first["id"]]
    assert jobs[0]["score"] == 0.8
    assert jobs[0]["status"] == "private"
    assert jobs[0]["boards"]["fits"] == ["hbench-demo"]
    limited = remote.get("/api/bench/jobs?limit=1", headers=bearer(alice)).json()["jobs"]
    assert [job["id"] for job in limited] == [second["id"]]


def test_one_job_shows_its_summary_checks_and_redactions(
    client: TestClient, make_token: TokenFactory, sealed_archive: bytes
) -> None:
    token = make_token("alice")
    accepted = uploaded(client, sealed_archive, token)

    answer = client.get(f"/api/bench/jobs/{accepted['id']}", headers=bearer(token))

    assert answer.status_code == 200, answer.text
    detail = answer.json()
    assert {key: detail[key] for key in accepted} == accepted
    summary = detail["summary"]
    assert summary["job_name"] == "oracle-k2"
    assert summary["task_names"] == [
        "count-lines", "hello-file", "prime-factor", "reverse-words", "sum-numbers"
    ]  # fmt: skip
    assert summary["agent"] == {"name": "oracle", "version": "1.0.0", "kwargs": {}, "options": {}}
    assert summary["harbor_version"].startswith("0.25")
    assert summary["environment"]["import_path"].endswith(":BubblewrapEnvironment")
    assert summary["entry_settings"]["agent"] == "oracle"
    assert summary["usage"] == {
        "input_tokens": None, "cached_tokens": None, "output_tokens": None, "cost_usd": None
    }  # fmt: skip
    assert "fingerprint" not in detail  # kept hidden, for recognising re-uploads


def test_another_accounts_job_is_not_found(
    client: TestClient, make_token: TokenFactory, sealed_archive: bytes
) -> None:
    accepted = uploaded(client, sealed_archive, make_token("alice"))
    remote = TestClient(client.app, **REMOTE)
    bob = bearer(make_token("bob"))

    theirs = remote.get(f"/api/bench/jobs/{accepted['id']}", headers=bob)
    unknown = remote.get(f"/api/bench/jobs/{uuid.uuid4()}", headers=bob)
    mistyped = remote.get("/api/bench/jobs/not-an-id", headers=bob)

    assert (theirs.status_code, theirs.json()["code"]) == (404, "bench-job-not-found")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "bench-job-not-found")
    assert (mistyped.status_code, mistyped.json()["code"]) == (422, "request-invalid")
    assert remote.get("/api/bench/jobs", headers=bob).json() == {"jobs": []}


def test_reading_your_bench_needs_sign_in(client: TestClient) -> None:
    remote = TestClient(client.app, **REMOTE)

    for path in ("/api/bench/jobs", f"/api/bench/jobs/{uuid.uuid4()}"):
        answer = remote.get(path)
        assert (answer.status_code, answer.json()["code"]) == (401, "auth-required")
