"""A job's regrade and evidence on Your bench, on SQLite and PostgreSQL: each regrade status
in plain words on the job list and the job's page, the evidence the job would carry, and no
Publish button (with the rule code) while the regrade is pending or when it disagreed.

The jobs are rows stored as an upload stores them, each with a `Regrade` row of one status
(the regrade itself runs Harbor, which tests/app/regrade/ does for real)."""

from __future__ import annotations

import re
import uuid
from html import unescape
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.db.models import Job, JobStatus, Regrade, RegradeStatus, utcnow
from registry.evidence import TEXTS

from ..bench.conftest import issue_run
from .conftest import submit

SUMMARY: dict[str, Any] = {
    "job_id": "j-1",
    "job_name": "demo",
    "results": {"prime-factor": [1.0, 1.0]},
    "dataset": "hbench-demo@1.0",
    "agent": {"name": "oracle"},
    "model": None,
    "n_attempts": 2,
    "score": 0.8,
    "pass_at_k": {"2": 0.8},
    "boards": {"fits": ["hbench-demo"], "opens": None, "notes": []},
}
CHECK = {
    "rule": "manifest-matches-bytes",
    "title": "Every file matches the manifest",
    "status": "passed",
    "note": "all 44 files match their size and sha256",
}
DIFFERENCES = [
    {"task": "prime-factor", "trial": "prime-factor__a1", "recorded": {"reward": 1.0},
     "regraded": {"reward": 0.0}, "why": None},
    {"task": "prime-factor", "trial": "prime-factor__b2", "recorded": {"reward": 1.0},
     "regraded": None, "why": "the verifier wrote no reward"},
]  # fmt: skip
NOTES = {
    RegradeStatus.QUEUED: None,
    RegradeStatus.RUNNING: None,
    RegradeStatus.AGREED: "all 10 graded trials got the same rewards",
    RegradeStatus.DISAGREED: "2 of 10 graded trials got other rewards when graded again",
    RegradeStatus.NOT_REGRADABLE: "the service keeps no copy of hbench-demo@1.0's tasks",
    RegradeStatus.FAILED: "harbor job regrade stopped (exit 1): no space left on device",
}
SAID = {
    RegradeStatus.QUEUED: "Regrading…",
    RegradeStatus.RUNNING: "Regrading…",
    RegradeStatus.AGREED: "Regraded: every graded trial got the same rewards",
    RegradeStatus.DISAGREED: f"Regrade disagreed: {NOTES[RegradeStatus.DISAGREED]}",
    RegradeStatus.NOT_REGRADABLE: f"Not regradable: {NOTES[RegradeStatus.NOT_REGRADABLE]}",
    RegradeStatus.FAILED: f"Regrade failed: {NOTES[RegradeStatus.FAILED]}",
}
HELD = {RegradeStatus.QUEUED, RegradeStatus.RUNNING, RegradeStatus.DISAGREED}
LABEL = re.compile(r'<span class="level level-([a-z-]+)" title="([^"]*)">([^<]+)</span>')


def add_job(
    db: Session,
    regrade: RegradeStatus | None,
    *,
    note: str | None = None,
    issued: bool = False,
    ci: bool = False,
    name: str = "demo-job",
) -> str:
    """A private job of the local user, as an upload stores it, with its regrade's row;
    `ci` as an upload bound to the trusted workflow run that issued it records it."""
    run = issue_run(db, {"job_name": name}, login="local").run_id if issued else None
    job = Job(
        owner_id=ensure_account(db, "local").id, job_id=uuid.uuid4(), job_name=name,
        status=JobStatus.PRIVATE, summary={**SUMMARY, "ci": {"run_on_ci": ci}},
        checks=[CHECK], redactions={}, issued_run_id=run, uploaded_at=utcnow(),
    )  # fmt: skip
    db.add(job)
    db.flush()
    if regrade is not None:
        db.add(
            Regrade(
                job_id=job.id, status=regrade, note=note or NOTES[regrade],
                differences=DIFFERENCES if regrade is RegradeStatus.DISAGREED else [],
                queued_at=utcnow(),
            )
        )  # fmt: skip
    db.commit()
    return str(job.id)


def labels(html: str) -> list[str]:
    """The evidence labels a part of a page shows, by their text."""
    return [text for _level, _title, text in LABEL.findall(html)]


def section(html: str, heading_id: str) -> str:
    """A page's section, from its heading to the next one."""
    start = html.index(f'id="{heading_id}"')
    end = html.find("<h2", start)
    return html[start : end if end >= 0 else None]


def list_row(html: str, job_id: str) -> str:
    start = html.index(f'<tr data-job="{job_id}">')
    return html[start : html.index("</tr>", start)]


@pytest.mark.parametrize("status", list(RegradeStatus))
def test_each_regrade_status_is_said_in_plain_words(
    client: TestClient, db: Session, status: RegradeStatus
) -> None:
    job_id = add_job(db, status)
    page = client.get(f"/bench/jobs/{job_id}").text
    regrade = unescape(section(page, "regrade-title"))
    assert SAID[status] in regrade
    held = status in HELD
    assert (f'href="/bench/jobs/{job_id}/publish"' in page) is not held
    row = unescape(list_row(client.get("/bench").text, job_id))
    assert SAID[status] in row
    assert "verified" not in page.lower()


def test_a_pending_regrade_offers_no_publish_and_says_why(client: TestClient, db: Session) -> None:
    job_id = add_job(db, RegradeStatus.QUEUED)
    job = f"/bench/jobs/{job_id}"
    page = client.get(job).text
    hold = unescape(page[page.index('id="publish-hold"') :])
    assert "Publishing waits for the regrade" in hold and "Refresh this page" in hold
    assert "regrade-pending" in hold
    assert '<span class="note">so far</span>' in list_row(client.get("/bench").text, job_id)

    # Asked directly, the question page says why at once and offers no button.
    confirm = client.get(f"{job}/publish")
    assert confirm.status_code == 409
    assert "regrade-pending" in confirm.text and 'type="submit"' not in confirm.text
    # A form sent anyway (from a page opened before) is refused with the rule code; the
    # form token is the person's, so any page's does.
    refused = submit(client, "/settings", f"{job}/publish", {})
    assert refused.status_code == 409
    assert '<code class="code">regrade-pending</code>' in refused.text
    assert 'type="submit"' not in refused.text
    db.expire_all()
    assert db.get_one(Job, uuid.UUID(job_id)).status is JobStatus.PRIVATE


def test_a_disagreed_regrade_lists_each_difference_and_refuses_publishing(
    client: TestClient, db: Session
) -> None:
    job_id = add_job(db, RegradeStatus.DISAGREED)
    job = f"/bench/jobs/{job_id}"
    page = client.get(job).text
    table = page[page.index('id="regrade-differences"') : page.index("</table>")]
    rows = re.findall(r"<tr><th scope=\"row\">(.*?)</th><td><code>(.*?)</code></td>"
                      r"<td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>", table)  # fmt: skip
    assert rows == [
        ("prime-factor", "prime-factor__a1", "reward 1", "reward 0", ""),
        (
            "prime-factor",
            "prime-factor__b2",
            "reward 1",
            "no reward",
            "the verifier wrote no reward",
        ),
    ]
    assert "regrade-mismatch" in section(page, "regrade-title") + page[page.index("publish-hold") :]
    evidence = unescape(section(page, "evidence-title"))
    assert "None: a job whose outputs grade otherwise" in evidence and labels(evidence) == []
    assert "none: it can't be published" in unescape(list_row(client.get("/bench").text, job_id))

    refused = submit(client, "/settings", f"{job}/publish", {})
    assert refused.status_code == 409
    assert '<code class="code">regrade-mismatch</code>' in refused.text
    assert "prime-factor (prime-factor__a1): recorded reward 1, regraded reward 0" in refused.text
    assert 'type="submit"' not in refused.text


@pytest.mark.parametrize(
    ("status", "issued", "ci", "levels"),
    [
        (RegradeStatus.AGREED, True, True, ["Self-reported", "Regraded", "Issued", "Run on CI"]),
        (RegradeStatus.AGREED, True, False, ["Self-reported", "Regraded", "Issued"]),
        (RegradeStatus.AGREED, False, False, ["Self-reported", "Regraded"]),
        (RegradeStatus.NOT_REGRADABLE, True, True, ["Self-reported", "Issued", "Run on CI"]),
        (RegradeStatus.FAILED, False, False, ["Self-reported"]),
        (RegradeStatus.RUNNING, False, False, ["Self-reported"]),
        (None, False, False, ["Self-reported"]),
    ],
)
def test_the_job_shows_the_evidence_it_would_carry(
    client: TestClient, db: Session, *, status: RegradeStatus | None, issued: bool, ci: bool,
    levels: list[str],
) -> None:  # fmt: skip
    job_id = add_job(db, status, issued=issued, ci=ci)
    page = client.get(f"/bench/jobs/{job_id}").text
    evidence = section(page, "evidence-title")
    assert labels(evidence) == levels
    for level in TEXTS.values():
        # Each level held says what it proves and what it doesn't; no other is named.
        shown = level.title in levels
        assert (unescape(f"Proves {level.proves}.") in unescape(evidence)) is shown
        assert (f"Does not prove {level.does_not_prove}." in unescape(evidence)) is shown
    assert labels(list_row(client.get("/bench").text, job_id)) == levels
    for _level, title, text in LABEL.findall(evidence):
        assert unescape(title).startswith(f"{text}: proves ")


def test_a_job_uploaded_before_regrades_says_so(client: TestClient, db: Session) -> None:
    job_id = add_job(db, None)
    page = unescape(client.get(f"/bench/jobs/{job_id}").text)
    assert "Not regradable: it was uploaded before the service regraded jobs" in page
    assert f'href="/bench/jobs/{job_id}/publish"' in page


def test_a_regrade_note_is_escaped(client: TestClient, db: Session) -> None:
    job_id = add_job(db, RegradeStatus.FAILED, note="<script>alert(1)</script> stopped")
    for html in (client.get(f"/bench/jobs/{job_id}").text, client.get("/bench").text):
        assert "<script>alert(1)</script>" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt; stopped" in html
