"""A job's page offers only what its state, the publish window and the clock still allow,
and says why not otherwise, with the rule code; the API's answer carries the same actions
(`app/bench/actions.py`). The delete question says what stays and what goes.

The jobs are rows as an upload stores them; the app's clock is moved by the test."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from html import unescape
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.clock import get_clock
from app.db.models import Job, JobStatus

from ..bench.conftest import NOW, FakeClock, issue_run
from .test_regrade import CHECK, SUMMARY, section

NO_BOARD = {
    "fits": [],
    "opens": None,
    "notes": [{"code": "board-local-tasks", "message": "the job ran tasks from a folder"}],
}

TAG = re.compile(r"<[^>]+>")


@pytest.fixture
def clock(app: FastAPI) -> FakeClock:
    fake = FakeClock(NOW)
    app.dependency_overrides[get_clock] = lambda: fake
    return fake


def add_job(db: Session, *, issued: bool = False, **values: Any) -> str:
    """A job of the local user, uploaded at NOW, with its files stored."""
    run = issue_run(db, {"job_name": "demo-job"}, login="local").run_id if issued else None
    fields: dict[str, Any] = {
        "status": JobStatus.PRIVATE, "summary": SUMMARY, "uploaded_at": NOW,
        "issued_run_id": run, **values,
    }  # fmt: skip
    job = Job(
        owner_id=ensure_account(db, "local").id, job_id=uuid.uuid4(), job_name="demo-job",
        checks=[CHECK], redactions={}, blob_key=f"{uuid.uuid4()}/job.tar.gz", **fields,
    )  # fmt: skip
    db.add(job)
    db.commit()
    return str(job.id)


def published(**values: Any) -> dict[str, Any]:
    return {"status": JobStatus.PUBLISHED, "board": "hbench-demo", "published_at": NOW,
            "entry": "oracle-a1b2c3", **values}  # fmt: skip


def offered(html: str, job_id: str) -> set[str]:
    """The buttons and links the page offers for the job."""
    links = {
        "publish": f'href="/bench/jobs/{job_id}/publish"',
        "withdraw": f'href="/bench/jobs/{job_id}/withdraw"',
        "delete": f'href="/bench/jobs/{job_id}/delete"',
        "download": f'href="/api/bench/jobs/{job_id}/download"',
    }
    return {name for name, link in links.items() if link in html}


def why_not(html: str, action: str) -> str:
    """The page's line saying why an action is not offered."""
    start = html.index(f'id="no-{action}"')
    return unescape(html[start : html.index("</li>", start)])


def stays_of(html: str) -> str:
    """The delete question's list of what stays, as text."""
    start = html.index('id="delete-stays"')
    return unescape(TAG.sub("", html[start : html.index("</ul>", start)]))


def test_a_fresh_private_job_offers_all_but_withdraw(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    job_id = add_job(db)
    page = client.get(f"/bench/jobs/{job_id}").text
    assert offered(page, job_id) == {"publish", "delete", "download"}
    assert "it has no score on a board to withdraw" in why_not(page, "withdraw")
    assert "job-not-published" in why_not(page, "withdraw")
    actions = client.get(f"/api/bench/jobs/{job_id}").json()["actions"]
    assert actions["publish"] == {"possible": True, "code": None, "reason": None}
    assert actions["withdraw"]["code"] == "job-not-published"
    # Asked directly, the withdraw question says why at once and has no button.
    asked = client.get(f"/bench/jobs/{job_id}/withdraw")
    assert asked.status_code == 409 and "job-not-published" in asked.text
    assert 'type="submit"' not in asked.text


def test_past_its_window_a_job_offers_no_publish_and_no_download(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    job_id = add_job(db)
    clock.now = NOW + timedelta(days=30)

    page = client.get(f"/bench/jobs/{job_id}").text

    assert offered(page, job_id) == {"delete"}
    hold = unescape(page[page.index('id="publish-hold"') :])
    assert "a job can be published until 2026" in hold and "publish-window-passed" in hold
    assert "job-files-hidden" in why_not(page, "download")
    answer = client.get(f"/api/bench/jobs/{job_id}").json()
    assert answer["actions"]["publish"]["code"] == "publish-window-passed"
    assert answer["actions"]["download"]["code"] == "job-files-hidden"
    listed = client.get("/api/bench/jobs").json()["jobs"]
    assert [j["actions"]["publish"]["code"] for j in listed] == ["publish-window-passed"]
    asked = client.get(f"/bench/jobs/{job_id}/publish")
    assert asked.status_code == 409 and "publish-window-passed" in asked.text
    assert 'type="submit"' not in asked.text
    # A minute before the window ends, both were still offered.
    clock.now = NOW + timedelta(days=30) - timedelta(minutes=1)
    page = client.get(f"/bench/jobs/{job_id}").text
    assert offered(page, job_id) == {"publish", "delete", "download"}


def test_files_marked_hidden_offer_no_download(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    job_id = add_job(db, files_hidden_at=NOW + timedelta(hours=1))
    page = client.get(f"/bench/jobs/{job_id}").text
    assert "download" not in offered(page, job_id)
    assert "its files are hidden" in why_not(page, "download")


def test_a_job_that_fits_no_board_says_why_it_cant_be_published(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    job_id = add_job(db, summary={**SUMMARY, "boards": NO_BOARD})
    page = client.get(f"/bench/jobs/{job_id}").text
    assert "publish" not in offered(page, job_id)
    hold = unescape(page[page.index('id="publish-hold"') :])
    assert "the job ran tasks from a folder" in hold and "board-local-tasks" in hold
    action = client.get(f"/api/bench/jobs/{job_id}").json()["actions"]["publish"]
    assert (action["possible"], action["code"]) == (False, "board-local-tasks")


def test_a_published_job_offers_withdraw_and_a_withdrawn_one_does_not(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    job_id = add_job(db, **published())
    page = client.get(f"/bench/jobs/{job_id}").text
    assert offered(page, job_id) == {"withdraw", "delete", "download"}
    assert "job-already-published" in why_not(page, "publish")

    withdrawn = add_job(db, **published(status=JobStatus.WITHDRAWN, withdrawn_at=NOW))
    page = client.get(f"/bench/jobs/{withdrawn}").text
    assert offered(page, withdrawn) == {"delete", "download"}
    assert "which is for good" in why_not(page, "publish")
    assert "job-withdrawn" in why_not(page, "withdraw")
    # Past the window too: the window is a private job's; a withdrawn job keeps its files.
    clock.now = NOW + timedelta(days=60)
    assert "download" in offered(client.get(f"/bench/jobs/{withdrawn}").text, withdrawn)


def test_the_delete_question_says_what_stays_and_what_goes(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    private = add_job(db)
    page = client.get(f"/bench/jobs/{private}/delete").text
    goes = unescape(section(page, "delete-goes"))
    assert "nobody can download its files from now on" in goes and "within 7 days" in goes
    assert "Nothing of it is on a board or on the site" in goes
    stays = stays_of(page)
    assert "Nothing public" in stays and "Its score" not in stays
    assert page.index('id="delete-stays"') < page.index('name="confirm"')

    scored = add_job(db, **published())
    page = client.get(f"/bench/jobs/{scored}/delete").text
    stays = stays_of(page)
    assert "Its score, on hbench-demo, as it was published" in stays
    assert "withdraw it first" in stays
    assert "Its run's page on the site, which says its files were deleted" in stays
    assert "Its fingerprint, hidden" in stays and "bench-published-before" in stays
    assert "Nothing of it is on a board" not in page

    counted = add_job(db, issued=True)  # uploaded with its run token: it counted
    stays = client.get(f"/bench/jobs/{counted}/delete").text
    assert "Its fingerprint, hidden" in stays and "Its score" not in stays
