"""`POST /api/bench/jobs/{id}/publish`: issued runs, self-reported jobs, new boards, the
choice among several boards, and every refusal leaving everything as it was."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.db.models import IssuedRun, JobStatus
from app.registry import default_registry, get_registry
from registry.placement import EntrySettings, entry_name

from ..bench.conftest import issue_run, run_token, upload
from ..bench.jobs import SealedJob
from ..conftest import TokenFactory
from .conftest import NOW, FakeClock, job_row, kinds, outbox, publish, uploaded, variant

LONGER_TIMEOUT = {"agent_timeout_multiplier": 2}  # a cell no board has: publishing opens one


def test_a_self_reported_job_goes_on_the_board_of_its_cell_under_its_owners_entry(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed_archive: bytes,
    clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)

    answer = publish(client, job_id, token)

    assert answer.status_code == 200, answer.text
    body = answer.json()
    entry = entry_name("alice", EntrySettings(agent="oracle"))
    assert (body["board"], body["entry"], body["owner"]) == ("hbench-demo", entry, "alice")
    assert (body["issued"], body["opened_board"], body["run_id"]) == (False, False, job_id)
    assert body["download"] == f"/api/bench/jobs/{job_id}/download"
    row = job_row(db, job_id)
    assert row.status is JobStatus.PUBLISHED and row.published_at == NOW
    assert (row.board, row.entry) == ("hbench-demo", entry)
    (change,) = outbox(db)
    assert change.kind == "publish_run"
    run = change.payload["run"]
    assert run["id"] == job_id and run["board"] == "hbench-demo"
    assert run["entry"]["owner"] == "alice" and run["entry"]["name"] == entry
    assert run["issued"] is False and run["provenance"] == {"kind": "local"} | dict.fromkeys(
        ("repository", "workflow", "ref", "commit", "runner")
    )
    assert run["results"]["prime-factor"] == [0.0, 0.0]
    assert run["nAttempts"] == 2 and len(run["manifestDigest"]) == 64
    assert len(run["trials"]) == 10 and {t["attempt"] for t in run["trials"]} == {1, 2}
    assert run["download"] == body["download"] and run["redactions"] == {}


def test_a_job_of_a_new_cell_opens_its_board_and_a_second_owner_joins_it(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    alice, bob = make_token("alice"), make_token("bob")
    first = uploaded(client, variant(sealed, tmp_path, config=LONGER_TIMEOUT), alice)
    second = uploaded(
        client, variant(sealed, tmp_path, config=LONGER_TIMEOUT, shift=timedelta(hours=1)), bob
    )

    opened = publish(client, first, alice).json()
    joined = publish(client, second, bob).json()

    assert opened["opened_board"] is True and joined["opened_board"] is False
    assert opened["board"] == joined["board"] != "hbench-demo"
    assert opened["entry"] != joined["entry"]
    assert (opened["owner"], joined["owner"]) == ("alice", "bob")
    assert kinds(db) == ["open_board", "publish_run", "publish_run"]
    board = outbox(db)[0].payload["board"]
    assert board["slug"] == opened["board"] and board["settings"] == LONGER_TIMEOUT


def test_an_issued_run_keeps_its_board_and_entry_and_counts_once(
    client: TestClient, *, db: Session, sealed: SealedJob, sealed_archive: bytes,
    make_token: TokenFactory, clock: FakeClock,
) -> None:  # fmt: skip
    issued = issue_run(db, sealed.spec, login="alice")
    token = make_token("alice")
    stored = upload(client, sealed_archive, **run_token(issued.token))
    assert stored.status_code == 201, stored.text

    answer = publish(client, stored.json()["id"], token)

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["board"], body["entry"], body["issued"]) == ("hbench-demo", "oracle-a1b2c3", True)
    assert kinds(db) == ["count_issued_run", "publish_run"]
    count = outbox(db)[0].payload
    assert count == {"board": "hbench-demo", "entryKey": "alice/oracle-a1b2c3",
                     "issueId": str(issued.run_id)}  # fmt: skip
    db.rollback()
    run = db.get(IssuedRun, issued.run_id)
    assert run is not None and run.counted_at == NOW


def test_an_issued_run_from_actions_publishes_its_verified_provenance(
    client: TestClient, *, db: Session, sealed: SealedJob, sealed_archive: bytes,
    make_token: TokenFactory, clock: FakeClock,
) -> None:  # fmt: skip
    issued = issue_run(db, sealed.spec, login="alice")
    db.rollback()
    run = db.get(IssuedRun, issued.run_id)
    assert run is not None
    run.provenance = {
        "repository": "alice/bench", "repository_id": 7, "sha": "a" * 40, "ref": "refs/heads/main",
        "workflow_ref": "alice/bench/.github/workflows/bench.yml@refs/heads/main",
        "job_workflow_ref": "hbench/hbench/.github/workflows/run.yml@refs/tags/v1",
        "run_id": "4242", "runner_environment": "github-hosted", "hardware": {"gpu": "none"},
    }  # fmt: skip
    db.commit()
    stored = upload(client, sealed_archive, **run_token(issued.token)).json()

    publish(client, stored["id"], make_token("alice"))

    provenance = outbox(db)[-1].payload["run"]["provenance"]
    assert provenance == {
        "kind": "actions", "repository": "alice/bench", "ref": "refs/heads/main",
        "workflow": "alice/bench/.github/workflows/bench.yml@refs/heads/main",
        "jobWorkflowRef": "hbench/hbench/.github/workflows/run.yml@refs/tags/v1",
        "runId": 4242, "commit": "a" * 40, "runner": "github-hosted",
    }  # fmt: skip


def test_a_job_fitting_several_boards_asks_which_and_takes_the_one_named(
    app: FastAPI, *, client: TestClient, db: Session, make_token: TokenFactory,
    sealed_archive: bytes, clock: FakeClock,
) -> None:  # fmt: skip
    registry = default_registry()
    twin = registry.boards["hbench-demo"].model_copy(update={"slug": "hbench-demo-twin"})
    boards = {**registry.boards, "hbench-demo-twin": twin}
    app.dependency_overrides[get_registry] = lambda: dataclasses.replace(registry, boards=boards)
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)

    asked = publish(client, job_id, token)

    assert asked.status_code == 409
    body = asked.json()
    assert body["code"] == "publish-board-choice"
    assert body["boards"] == ["hbench-demo", "hbench-demo-twin"]
    assert body["detail"].endswith("(publish-board-choice)")
    assert body["errors"][0]["code"] == "publish-board-choice"
    assert kinds(db) == [] and job_row(db, job_id).status is JobStatus.PRIVATE

    wrong = publish(client, job_id, token, board="another-board")
    assert wrong.json()["code"] == "publish-board-not-fitting"

    chosen = publish(client, job_id, token, board="hbench-demo-twin")
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["board"] == "hbench-demo-twin"


@pytest.mark.parametrize(
    ("case", "code", "status"),
    [
        ("someone-else", "bench-job-not-found", 404),
        ("published", "job-already-published", 409),
        ("withdrawn", "job-withdrawn", 409),
        ("window", "publish-window-passed", 409),
        ("denied", "account-denied", 403),
        ("local-tasks", "board-local-tasks", 422),
    ],
)
def test_a_refused_publish_changes_nothing(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed_archive: bytes,
    clock: FakeClock, case: str, code: str, status: int,
) -> None:  # fmt: skip
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    if case in {"published", "withdrawn"}:
        assert publish(client, job_id, token).status_code == 200
        if case == "withdrawn":
            withdrawn = client.post(
                f"/api/bench/jobs/{job_id}/withdraw", headers={"authorization": f"Bearer {token}"}
            )
            assert withdrawn.status_code == 200
    before = (job_row(db, job_id).status, kinds(db))
    if case == "someone-else":
        token = make_token("mallory")
    elif case == "window":
        clock.now = NOW + timedelta(days=30)
    elif case == "denied":
        ensure_account(db, "alice").is_denied = True
        db.commit()
    elif case == "local-tasks":
        row = job_row(db, job_id)
        row.summary = {**row.summary, "facts": {**row.summary["facts"], "dataset": None}}
        db.commit()

    answer = publish(client, job_id, token)

    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code
    assert (job_row(db, job_id).status, kinds(db)) == before


def test_a_job_without_facts_is_refused_with_why_it_fits_no_board(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed_archive: bytes,
    clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    row = job_row(db, job_id)
    notes = [{"code": "board-dataset-unpinned", "message": "the job ran hbench-demo unpinned"}]
    row.summary = {**row.summary, "facts": None, "boards": {"fits": [], "notes": notes}}
    db.commit()

    answer = publish(client, job_id, token)

    assert answer.json()["code"] == "board-dataset-unpinned"
    assert kinds(db) == []


def test_an_unknown_job_is_not_found(client: TestClient, make_token: TokenFactory) -> None:
    answer = publish(client, str(uuid.uuid4()), make_token("alice"))
    assert (answer.status_code, answer.json()["code"]) == (404, "bench-job-not-found")
