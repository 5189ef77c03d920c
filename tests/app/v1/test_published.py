"""A run published on a board appears in the runs API as `validated`
(`record_published_run`, which publishing calls in its transaction)."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.db.models import Job, JobStatus, ReproducedRunStatus
from app.registry import default_registry
from app.v1.service import record_published_run, reject_published_run

from .conftest import NOW


def published_job(db: Session, **summary: Any) -> Job:
    owner = ensure_account(db, "alice")
    job = Job(
        owner_id=owner.id, job_id=uuid.uuid4(), job_name="demo", status=JobStatus.PUBLISHED,
        checks=[], redactions={}, board="hbench-demo", entry="oracle-a3f9c1", published_at=NOW,
        summary={
            "job_id": "j-1", "job_name": "demo", "boards": {"fits": ["hbench-demo"]},
            "dataset": "hbench-demo@1.0", "model": None, "agent": {"name": "oracle"},
            "n_attempts": 1, "score": 0.8,
            "results": {"count-lines": [1.0], "hello-file": [1.0], "prime-factor": [0.0],
                        "reverse-words": [1.0], "sum-numbers": [None]},
            "usage": {"input_tokens": 100, "cached_tokens": 40, "output_tokens": 20,
                      "cost_usd": 0.25},
            "harbor_version": "0.25.0", "hbench_version": "0.3.1",
            **summary,
        },
    )  # fmt: skip
    db.add(job)
    db.commit()
    return job


def test_a_published_run_is_recorded_as_validated(db: Session, client: TestClient) -> None:
    job = published_job(db)

    row = record_published_run(
        db, job, "hbench-demo", registry=default_registry(), now=NOW,
        evidence=["self-reported", "issued"],
    )  # fmt: skip
    db.commit()

    assert row is not None
    data = client.get(f"/v1/runs/{row.id}").json()["data"]
    evidence = data.pop("evidence")
    assert evidence["levels"] == ["self-reported", "issued"]
    assert "unchanged since the submitter sealed them" in evidence["description"]
    assert "issued the run's spec before it ran" in evidence["description"]
    assert data | {"id": None} == {
        "id": None, "benchmarkSlug": "hbench-demo", "model": "none", "modelSlug": "none",
        "harness": "oracle", "taskCount": 5, "nAttempts": 1, "score": 80.0,
        "metric": "accuracy", "tokensUsed": 120, "costUsd": 0.25, "harborVersion": "0.25.0",
        "cliVersion": "0.3.1", "resultsHash": None,
        "taskRewards": [
            {"task": "count-lines", "reward": 1.0}, {"task": "hello-file", "reward": 1.0},
            {"task": "prime-factor", "reward": 0.0}, {"task": "reverse-words", "reward": 1.0},
            {"task": "sum-numbers", "reward": 0.0},
        ],
        "notes": None, "userId": "alice", "status": "validated",
        "createdAt": "2026-10-30T12:00:00.000Z",
    }  # fmt: skip
    # Once per job: publishing code that calls again gets the same run.
    again = record_published_run(db, job, "hbench-demo", registry=default_registry(), now=NOW)
    assert again is not None and again.id == row.id


def test_a_run_taken_down_leaves_the_list_and_the_aggregates(
    db: Session, client: TestClient
) -> None:
    job = published_job(db)
    row = record_published_run(db, job, "hbench-demo", registry=default_registry(), now=NOW)
    db.commit()
    assert row is not None
    assert client.get("/v1/runs").json()["pagination"]["total"] == 1

    reject_published_run(db, job.id)
    db.commit()

    assert client.get("/v1/runs").json()["data"] == []
    assert client.get(f"/v1/runs/{row.id}").json()["data"]["status"] == "rejected"
    db.refresh(row)
    assert row.status is ReproducedRunStatus.REJECTED


def test_a_board_of_no_registry_benchmark_records_nothing(db: Session) -> None:
    job = published_job(db, dataset="someone-else@2.0")
    assert (
        record_published_run(db, job, "a-new-board", registry=default_registry(), now=NOW) is None
    )
