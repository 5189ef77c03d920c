"""Jobs kept on Your bench but fitting no board, through the API: a prompt without an issued
run, an environment no board allows, and a copy of a job that counted already. Each is
stored privately, its answer says why it fits no board, and publishing it is refused with
that code, changing nothing. Spec: ../shared/spec/hbench-upload-a-job.txt ("Check the
job", "A job you don't publish stays private") and hbench-withdraw-delete-report.txt ("A
job that had a score")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.db.models import JobStatus
from hbench.jobs.reader import read_job

from ..bench.conftest import upload
from ..bench.jobs import SealedJob
from ..conftest import TokenFactory, bearer
from .conftest import FakeClock, job_row, kinds, publish, uploaded, variant

AGAIN = "and a job is published once: run the benchmark again for a new result"
PROMPTED: dict[str, dict[str, Any]] = {
    "a prompt template": {
        "agents": [{"name": "oracle", "kwargs": {"prompt_template_path": "prompt.j2"}}]
    },
    "extra instructions": {"extra_instructions": ["Answer tersely."]},
}


def note_codes(answer: dict[str, Any]) -> list[str]:
    return [note["code"] for note in answer["boards"]["notes"]]


def statuses(answer: dict[str, Any]) -> dict[str, str]:
    return {check["rule"]: check["status"] for check in answer["checks"]}


@pytest.mark.parametrize("name", list(PROMPTED))
def test_a_self_run_job_with_a_prompt_is_kept_private_and_publishing_it_is_refused(
    name: str, client: TestClient, *, db: Session, make_token: TokenFactory,
    sealed: SealedJob, tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    answer = upload(client, variant(sealed, tmp_path, config=PROMPTED[name]), **bearer(token))

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["status"] == "private" and body["counted_before"] is False
    assert body["boards"]["fits"] == [] and body["boards"]["opens"] is None
    assert note_codes(body) == ["job-prompt-not-issued"]
    assert "only an issued run may use them" in body["boards"]["notes"][0]["message"]
    assert statuses(body)["prompt-needs-issued-run"] == "failed"
    assert body["actions"]["publish"]["code"] == "job-prompt-not-issued"
    before = kinds(db)

    refused = publish(client, body["id"], token)

    assert refused.json()["code"] == "job-prompt-not-issued", refused.text
    assert refused.status_code >= 400
    assert job_row(db, body["id"]).status is JobStatus.PRIVATE and kinds(db) == before


def test_a_non_docker_job_of_a_dataset_no_board_covers_is_kept(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    config = read_job(sealed.path).config.model_dump(mode="json")
    datasets = [{**config["datasets"][0], "name": "my-bench"}]
    assert ":" in config["environment"]["import_path"]  # the demo's own sandbox, not docker

    answer = upload(client, variant(sealed, tmp_path, config={"datasets": datasets}),
                    **bearer(token))  # fmt: skip

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["status"] == "private" and body["boards"]["fits"] == []
    assert note_codes(body) == ["board-environment-refused"]
    message = body["boards"]["notes"][0]["message"]
    assert "no board covers my-bench@" in message and "another benchmark" not in message
    refused = publish(client, body["id"], token)
    assert refused.json()["code"] == "board-environment-refused", refused.text
    assert job_row(db, body["id"]).status is JobStatus.PRIVATE


def test_a_counted_copy_fits_no_board_and_every_publish_is_refused(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    sealed_archive: bytes, clock: FakeClock,
) -> None:  # fmt: skip
    alice, bob = make_token("alice"), make_token("bob")
    first = uploaded(client, sealed_archive, alice)
    assert publish(client, first, alice).status_code == 200

    answer = upload(client, sealed_archive, **bearer(bob))

    assert answer.status_code == 201, answer.text  # a copy stays private: that is allowed
    body = answer.json()
    message = f"hbench job {read_job(sealed.path).job_id} was published before, {AGAIN}"
    assert body["counted_before"] is True
    assert body["boards"]["fits"] == [] and body["boards"]["opens"] is None
    assert body["boards"]["notes"][0] == {"code": "bench-published-before", "message": message}
    assert body["actions"]["publish"]["code"] == "bench-published-before"
    copy = body["id"]
    detail = client.get(f"/api/bench/jobs/{copy}", headers=bearer(bob)).json()
    listed = client.get("/api/bench/jobs", headers=bearer(bob)).json()["jobs"]
    assert detail["counted_before"] is True and detail["boards"] == body["boards"]
    assert [(job["id"], job["counted_before"]) for job in listed] == [(copy, True)]
    before = kinds(db)

    refused = publish(client, copy, bob)

    assert (refused.status_code, refused.json()["code"]) == (409, "bench-published-before")
    assert refused.json()["errors"][0]["message"] == message
    assert job_row(db, copy).status is JobStatus.PRIVATE and kinds(db) == before
    # The original itself is published, not a copy of anything.
    original = client.get(f"/api/bench/jobs/{first}", headers=bearer(alice)).json()
    assert original["counted_before"] is False


def test_a_copy_uploaded_before_its_original_counted_is_marked_once_it_does(
    client: TestClient, *, make_token: TokenFactory, sealed_archive: bytes, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    first = uploaded(client, sealed_archive, token)
    second = uploaded(client, sealed_archive, token)

    def counted(job_id: str) -> bool:
        read = client.get(f"/api/bench/jobs/{job_id}", headers=bearer(token))
        flag: bool = read.json()["counted_before"]
        return flag

    assert (counted(first), counted(second)) == (False, False)
    assert publish(client, first, token).status_code == 200
    assert (counted(first), counted(second)) == (False, True)
    notes = client.get(f"/api/bench/jobs/{second}", headers=bearer(token)).json()["boards"]
    assert notes["fits"] == [] and notes["notes"][0]["code"] == "bench-published-before"
