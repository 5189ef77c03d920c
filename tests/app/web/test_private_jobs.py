"""Your bench's pages for jobs kept private on no board: a job with a prompt template but no
issued run, and a copy of a job that counted already. Each page says why it fits no board,
with the code, offers no Publish, and the publish form, sent anyway, is refused with that
code. Spec: ../shared/spec/hbench-upload-a-job.txt ("Check the job") and
hbench-withdraw-delete-report.txt ("A job that had a score")."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.db.models import JobStatus
from hbench.jobs.reader import read_job

from ..bench.jobs import SealedJob
from ..publish.conftest import variant
from .conftest import submit
from .test_bench import job_row, page_upload

pytestmark = pytest.mark.harbor

PROMPT = {"agents": [{"name": "oracle", "kwargs": {"prompt_template_path": "prompt.j2"}}]}
AGAIN = "and a job is published once: run the benchmark again for a new result"


def publish_anyway(client: TestClient, job: str) -> tuple[int, str]:
    """Send the publish form as a page left open from before would, with a form token read
    off the job's delete page."""
    answer = submit(client, f"{job}/delete", f"{job}/publish", {})
    return answer.status_code, answer.text


def test_a_prompted_job_is_kept_and_its_page_says_why_it_fits_no_board(
    client: TestClient, db: Session, sealed: SealedJob, tmp_path: Path
) -> None:
    uploaded = page_upload(client, variant(sealed, tmp_path, config=PROMPT))
    assert uploaded.status_code == 201, uploaded.text
    job_id = uploaded.json()["id"]
    job = f"/bench/jobs/{job_id}"

    page = client.get(job).text

    assert "job-prompt-not-issued" in page and "only an issued run may use them" in page
    assert f'href="{job}/publish"' not in page
    assert 'id="publish-hold"' in page
    listed = client.get("/bench").text
    assert job_id in listed and "job-prompt-not-issued" in listed
    assert "job-prompt-not-issued" in client.get(f"{job}/publish").text
    status, text = publish_anyway(client, job)
    assert status >= 400 and "job-prompt-not-issued" in text
    assert job_row(db, job_id).status is JobStatus.PRIVATE


def test_a_counted_copy_is_marked_on_its_pages_and_can_not_be_published(
    client: TestClient, db: Session, sealed: SealedJob, sealed_archive: bytes
) -> None:
    first = page_upload(client, sealed_archive).json()["id"]
    assert submit(client, f"/bench/jobs/{first}/publish", f"/bench/jobs/{first}/publish",
                  {}).status_code == 303  # fmt: skip
    copy = page_upload(client, sealed_archive)
    assert copy.status_code == 201, copy.text  # kept, privately
    job_id = copy.json()["id"]
    job = f"/bench/jobs/{job_id}"

    page = client.get(job).text

    message = f"hbench job {read_job(sealed.path).job_id} was published before, {AGAIN}"
    assert 'id="counted-before"' in page and "bench-published-before" in page
    assert message in page
    assert f'href="{job}/publish"' not in page
    assert "counted before" in client.get("/bench").text
    assert "bench-published-before" in client.get(f"{job}/publish").text
    status, text = publish_anyway(client, job)
    assert (status, "bench-published-before" in text) == (409, True)
    assert job_row(db, job_id).status is JobStatus.PRIVATE
