"""`GET /api/local-runs` and `POST /api/local-runs/{run_id}/abandon`."""

from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.db.models import IssuedRunStatus

from ..conftest import REMOTE, TokenFactory, bearer
from .conftest import DEMO, FakeClock, issue, stored_runs


def test_the_list_shows_my_runs_newest_first(
    client: TestClient, clock: FakeClock, make_token: TokenFactory
) -> None:
    first = issue(client, {**DEMO, "hardware": {"gpu": "none"}}).json()
    clock.advance(minutes=5)
    second = issue(client, {**DEMO, "n_attempts": 3}).json()
    issue(TestClient(client.app, **REMOTE), DEMO, **bearer(make_token("alice")))

    runs = client.get("/api/local-runs").json()["runs"]

    assert [run["run_id"] for run in runs] == [second["run_id"], first["run_id"]]
    assert runs[0] == {
        "run_id": second["run_id"],
        "board": "hbench-demo",
        "submission": second["submission"],
        "job_name": second["job_name"],
        "n_attempts": 3,
        "status": "issued",
        "issued_at": second["issued_at"],
        "expires_at": second["expires_at"],
        "spec_digest": second["spec_digest"],
        "hardware": {},
        "execution": {"environment": "docker", "n_concurrent_trials": 4},
    }
    assert runs[1]["hardware"] == {"gpu": "none"}
    assert "token" not in runs[0]
    assert len(client.get("/api/local-runs", params={"limit": 1}).json()["runs"]) == 1


def test_abandoning_a_run_marks_it_abandoned(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    run_id = issue(client).json()["run_id"]

    answer = client.post(f"/api/local-runs/{run_id}/abandon")

    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "abandoned"
    (run,) = stored_runs(db)
    assert run.status is IssuedRunStatus.ABANDONED
    assert client.get("/api/local-runs").json()["runs"][0]["status"] == "abandoned"


@pytest.mark.parametrize(
    ("prepare", "reason"),
    [
        ("abandon", "was abandoned already"),
        ("upload", "has its job uploaded"),
        ("expire", "expired at 2026-11-01 12:00 UTC"),
    ],
)
def test_a_run_not_waiting_cant_be_abandoned(
    client: TestClient, db: Session, clock: FakeClock, prepare: str, reason: str
) -> None:
    run_id = issue(client).json()["run_id"]
    if prepare == "abandon":
        assert client.post(f"/api/local-runs/{run_id}/abandon").status_code == 200
    elif prepare == "upload":
        (run,) = stored_runs(db)
        run.status = IssuedRunStatus.UPLOADED
        db.commit()
    else:
        clock.advance(hours=48)
    before = stored_runs(db)[0].status

    answer = client.post(f"/api/local-runs/{run_id}/abandon")

    assert answer.status_code == 409
    assert answer.json()["code"] == "run-not-waiting"
    assert reason in answer.json()["detail"]
    assert stored_runs(db)[0].status is before


def test_another_accounts_run_is_not_found(
    client: TestClient, db: Session, make_token: TokenFactory
) -> None:
    theirs = issue(TestClient(client.app, **REMOTE), DEMO, **bearer(make_token("alice")))
    run_id = theirs.json()["run_id"]

    answer = client.post(f"/api/local-runs/{run_id}/abandon")

    assert answer.status_code == 404
    assert answer.json()["code"] == "run-not-found"
    assert stored_runs(db)[0].status is IssuedRunStatus.ISSUED
    # Another's run is answered exactly like a missing one.
    missing_id = str(uuid.uuid4())
    missing = client.post(f"/api/local-runs/{missing_id}/abandon")
    assert missing.status_code == 404
    assert missing.json()["detail"].replace(missing_id, "ID") == answer.json()["detail"].replace(
        run_id, "ID"
    )


def test_a_malformed_run_id_is_a_request_error(client: TestClient) -> None:
    answer = client.post("/api/local-runs/not-an-id/abandon")
    assert answer.status_code == 422
    assert answer.json()["code"] == "request-invalid"


def test_a_run_token_abandons_nothing_not_even_its_own_run(
    client: TestClient, db: Session, make_token: TokenFactory
) -> None:
    mine = issue(TestClient(client.app, **REMOTE), DEMO, **bearer(make_token("alice"))).json()
    remote = TestClient(client.app, **REMOTE)  # not signed in: only the token could speak
    path = f"/api/local-runs/{mine['run_id']}/abandon"

    answers = [
        remote.post(path, headers={"hpg-run-token": mine["token"]}),
        remote.post(path, headers=bearer(mine["token"])),
    ]

    assert [a.status_code for a in answers] == [401, 401], [a.text for a in answers]
    assert [run.status for run in stored_runs(db)] == [IssuedRunStatus.ISSUED]
