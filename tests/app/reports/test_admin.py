"""The maintainers' queue, take-downs and the deny list (`/api/admin/…`)."""

from __future__ import annotations

import json

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.datarepo.changes import from_outbox
from app.db.models import Account, Job, JobStatus, OutboxEntry, Report, ReportStatus
from app.settings import Settings, get_settings
from tests.app.conftest import REMOTE, TokenFactory, bearer, github_settings

from .conftest import MESSAGE, FakeClock, public_job, report

NOTE = "Every trial timed out; a score of 100 can't come from these logs."


def number(answer: Response) -> int:
    value: int = answer.json()["number"]
    return value


def test_the_queue_lists_open_reports_first(
    client: TestClient, reporter: TestClient, db: Session, clock: FakeClock
) -> None:
    public_job(db)
    first = number(report(reporter, entry="oracle-a3f9c1"))
    second = number(report(reporter, entry="oracle-a3f9c1"))
    third = number(report(reporter, entry="oracle-a3f9c1"))
    assert client.post(f"/api/admin/reports/{first}/dismiss").status_code == 200

    queue = client.get("/api/admin/reports").json()["reports"]

    assert [(r["number"], r["status"]) for r in queue] == [
        (second, "open"), (third, "open"), (first, "dismissed"),
    ]  # fmt: skip
    assert queue[0]["reporter"] == "rita"  # maintainers see who reported; nobody else does
    assert queue[0]["message"] == MESSAGE
    assert [
        r["number"] for r in client.get("/api/admin/reports?open_only=true").json()["reports"]
    ] == [second, third]
    again = client.post(f"/api/admin/reports/{first}/dismiss")
    assert (again.status_code, again.json()["code"]) == (409, "report-closed")
    missing = client.post("/api/admin/reports/999999/dismiss")
    assert (missing.status_code, missing.json()["code"]) == (404, "report-not-found")


def test_a_take_down_writes_the_reason_and_note_and_names_nobody(
    client: TestClient, reporter: TestClient, db: Session, clock: FakeClock
) -> None:
    job = public_job(db)
    n = number(report(reporter, entry="oracle-a3f9c1"))

    answer = client.post(
        f"/api/admin/reports/{n}/take-down", json={"reason": "score-cannot-be-right", "note": NOTE}
    )

    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "board": "hbench-demo", "run_id": str(job.id), "reason": "score-cannot-be-right",
        "note": NOTE, "reports_closed": [n],
    }  # fmt: skip
    (entry,) = db.scalars(select(OutboxEntry).where(OutboxEntry.kind == "take_down_run"))
    change = from_outbox(entry.kind, entry.payload)
    assert change.model_dump() == {
        "kind": "take_down_run", "board": "hbench-demo", "run_id": str(job.id),
        "reason": "score-cannot-be-right", "note": NOTE,
    }  # fmt: skip
    everything = json.dumps([e.payload for e in db.scalars(select(OutboxEntry))]).lower()
    assert "rita" not in everything and "owen" not in everything
    db.expire_all()
    taken = db.get_one(Job, job.id)
    assert (taken.status, taken.taken_down_at) == (JobStatus.TAKEN_DOWN, clock.now)
    assert db.get_one(Report, n).status is ReportStatus.TAKEN_DOWN
    again = client.post(
        f"/api/admin/runs/{job.id}/take-down", json={"reason": "breaks-terms", "note": "x"}
    )
    assert (again.status_code, again.json()["code"]) == (409, "takedown-run-not-public")


def test_a_run_is_taken_down_by_its_id_too(client: TestClient, db: Session) -> None:
    job = public_job(db, status=JobStatus.DELETED)  # deleted files, score still on its board

    answer = client.post(
        f"/api/admin/runs/{job.id}/take-down",
        json={"reason": "owner-request", "note": "Asked by its owner."},
    )

    assert answer.status_code == 200, answer.text
    db.expire_all()
    # A deleted job stays deleted (its files' purge goes on); it is off its board now.
    assert db.get_one(Job, job.id).status is JobStatus.DELETED
    assert db.get_one(Job, job.id).taken_down_at is not None
    unknown = client.post(
        "/api/admin/runs/nope/take-down", json={"reason": "owner-request", "note": "x"}
    )
    assert (unknown.status_code, unknown.json()["code"]) == (404, "takedown-run-not-found")


@pytest.mark.parametrize(
    ("body", "codes"),
    [
        ({"reason": "i-dislike-it", "note": NOTE}, ["takedown-reason-unknown"]),
        ({"reason": "breaks-terms", "note": "x" * 281}, ["takedown-note-invalid"]),
        ({"reason": "breaks-terms", "note": "   "}, ["takedown-note-invalid"]),
        (
            {"reason": "breaks-terms", "note": "Reported by @Rita, see thread."},
            ["takedown-note-invalid"],
        ),
        ({"reason": "breaks-terms", "note": "owen's run is fake"}, ["takedown-note-invalid"]),
    ],
)
def test_a_bad_take_down_changes_nothing(
    client: TestClient, reporter: TestClient, db: Session, body: dict[str, str], codes: list[str]
) -> None:
    job = public_job(db)
    n = number(report(reporter, run=str(job.id)))

    answer = client.post(f"/api/admin/reports/{n}/take-down", json=body)

    assert answer.status_code == 422, answer.text
    assert [e["code"] for e in answer.json()["errors"]] == codes
    assert db.scalars(select(OutboxEntry)).all() == []
    db.expire_all()
    assert db.get_one(Job, job.id).status is JobStatus.PUBLISHED


def test_an_entry_with_several_runs_needs_the_run_chosen(
    client: TestClient, reporter: TestClient, db: Session
) -> None:
    first, second = public_job(db), public_job(db)
    n = number(report(reporter, entry="oracle-a3f9c1"))
    body = {"reason": "breaks-terms", "note": NOTE}

    ambiguous = client.post(f"/api/admin/reports/{n}/take-down", json=body)
    assert (ambiguous.status_code, ambiguous.json()["code"]) == (409, "report-run-ambiguous")
    assert (
        str(first.id) in ambiguous.json()["detail"] and str(second.id) in ambiguous.json()["detail"]
    )

    chosen = client.post(f"/api/admin/reports/{n}/take-down", json={**body, "run": str(second.id)})
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["run_id"] == str(second.id)


ADMIN = [
    ("get", "/api/admin/reports", None),
    ("post", "/api/admin/reports/1/dismiss", None),
    ("post", "/api/admin/reports/1/take-down", {"reason": "breaks-terms", "note": "x"}),
    ("post", "/api/admin/runs/x/take-down", {"reason": "breaks-terms", "note": "x"}),
    ("get", "/api/admin/deny", None),
    ("post", "/api/admin/deny", {"login": "mallory"}),
    ("delete", "/api/admin/deny/mallory", None),
]


def test_only_maintainers_reach_the_admin_endpoints(reporter: TestClient, db: Session) -> None:
    for method, path, body in ADMIN:
        answer = reporter.request(method, path, json=body)
        assert (answer.status_code, answer.json()["code"]) == (403, "maintainer-only"), path
    assert db.scalars(select(Account).where(Account.is_denied)).all() == []


def test_a_maintainer_by_the_settings_reaches_them_by_account_id_not_login(
    app: FastAPI, client: TestClient, settings: Settings, db: Session, make_token: TokenFactory
) -> None:
    mara_token, marc_token = make_token("mara"), make_token("marc")
    mara, marc = (
        db.scalars(select(Account).where(Account.login == n)).one() for n in ("mara", "marc")
    )
    mara.github_id, marc.github_id = 583231, 9919
    marc.is_maintainer = True  # stored by a sign-in before his id left the list
    db.commit()
    named = github_settings(settings, maintainers=(583231,))
    app.dependency_overrides[get_settings] = lambda: named
    remote = TestClient(app, **REMOTE)
    assert remote.get("/api/admin/deny", headers=bearer(mara_token)).status_code == 200
    refused = remote.get("/api/admin/deny", headers=bearer(marc_token))
    assert (refused.status_code, refused.json()["code"]) == (403, "maintainer-only")


def test_the_deny_list(client: TestClient, make_token: TokenFactory) -> None:
    assert client.post("/api/admin/deny", json={"login": "mallory"}).json() == {
        "logins": ["mallory"]
    }
    assert client.post("/api/admin/deny", json={"login": "eve"}).json() == {
        "logins": ["eve", "mallory"]
    }
    assert client.get("/api/admin/deny").json() == {"logins": ["eve", "mallory"]}
    assert client.delete("/api/admin/deny/EVE").json() == {"logins": ["mallory"]}
    gone = client.delete("/api/admin/deny/eve")
    assert (gone.status_code, gone.json()["code"]) == (404, "deny-account-not-found")
    bad = client.post("/api/admin/deny", json={"login": "not a login"})
    assert (bad.status_code, bad.json()["code"]) == (422, "request-invalid")
    own = client.post("/api/admin/deny", json={"login": "local"})
    assert (own.status_code, own.json()["code"]) == (409, "deny-maintainer")


def test_a_denied_account_can_not_be_issued_runs(
    client: TestClient, make_token: TokenFactory
) -> None:
    token = make_token("mallory")
    client.post("/api/admin/deny", json={"login": "mallory"})

    answer = TestClient(client.app, **REMOTE).post(
        "/api/local-runs",
        json={"board": "hbench-demo", "declarative": {"agent": "oracle"}},
        headers=bearer(token),
    )

    assert (answer.status_code, answer.json()["code"]) == (403, "account-denied")


def test_a_denied_account_can_not_upload(client: TestClient, make_token: TokenFactory) -> None:
    token = make_token("mallory")
    client.post("/api/admin/deny", json={"login": "mallory"})

    answer = TestClient(client.app, **REMOTE).post(
        "/api/bench/uploads", content=b"\x1f\x8b not even a job",
        headers={"content-type": "application/gzip", **bearer(token)},
    )  # fmt: skip

    assert (answer.status_code, answer.json()["code"]) == (403, "account-denied")
    assert client.post("/api/admin/deny", json={"login": "mallory"}).status_code == 200
    client.delete("/api/admin/deny/mallory")
    allowed = TestClient(client.app, **REMOTE).post(
        "/api/bench/uploads", content=b"\x1f\x8b not even a job",
        headers={"content-type": "application/gzip", **bearer(token)},
    )  # fmt: skip
    assert allowed.json()["code"] != "account-denied"
