"""The service regrades uploaded jobs for real: `harbor job regrade` in the sandbox, on the
stored job's recorded outputs, run by the worker apart from any request."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Regrade, RegradeStatus
from app.main import create_app
from app.settings import Settings
from hbench.jobs.sealing import seal
from tests.conftest import HarborJobFactory

from ..bench.conftest import FakeClock, issue_run, run_token, upload
from ..bench.jobs import ORACLE_ONCE, SealedJob, packed, sealed_job
from ..conftest import LOCAL, TokenFactory, bearer
from ..publish.conftest import board_rows, write_data_repository
from .conftest import regrade_queue


def _forge_prime_factor(job: Path) -> None:
    """The forgery the checks can't see: prime-factor's failed rewards set to 1 in every
    copy (the verifier's reward.txt, each trial's result.json, the job's totals), then the
    job sealed again with hbench's own sealing code."""
    trials = sorted(job.glob("prime-factor__*"))
    for trial in trials:
        (trial / "verifier" / "reward.txt").write_text("1\n")
        result = json.loads((trial / "result.json").read_text())
        result["verifier_result"]["rewards"]["reward"] = 1.0
        (trial / "result.json").write_text(json.dumps(result, indent=4))
    totals = json.loads((job / "result.json").read_text())
    group: dict[str, Any] = next(iter(totals["stats"]["evals"].values()))
    group["metrics"] = [{"mean": 1.0}]
    group["reward_stats"] = {"reward": {"1.0": [p.name for p in job.iterdir() if p.is_dir()]}}
    group["pass_at_k"] = {"2": 1.0}
    (job / "result.json").write_text(json.dumps(totals, indent=4))
    seal(job)


def _regrade(db: Session, job_id: str) -> Regrade:
    db.rollback()
    return db.scalars(select(Regrade).where(Regrade.job_id == uuid.UUID(job_id))).one()


def test_an_honest_issued_run_is_regraded_and_published_as_regraded_and_issued(
    client: TestClient, *, db: Session, settings: Settings, sealed: SealedJob,
    sealed_archive: bytes, make_token: TokenFactory, clock: FakeClock,
) -> None:  # fmt: skip
    issued = issue_run(db, sealed.spec, login="alice")
    answer = upload(client, sealed_archive, **run_token(issued.token))
    assert answer.status_code == 201, answer.text
    job_id = answer.json()["id"]
    assert answer.json()["regrade"]["status"] == "queued"
    token = make_token("alice")

    # Until the worker has graded it again, the job waits.
    pending = client.post(f"/api/bench/jobs/{job_id}/publish", headers=bearer(token))
    assert pending.status_code == 409
    assert pending.json()["code"] == "regrade-pending"

    assert regrade_queue(settings) == 1
    regrade = _regrade(db, job_id)
    assert regrade.status == RegradeStatus.AGREED, regrade.note
    assert regrade.note == "all 10 graded trials got the same rewards"
    shown = client.get(f"/api/bench/jobs/{job_id}", headers=bearer(token)).json()
    assert shown["regrade"]["status"] == "agreed"
    assert shown["evidence"] == ["self-reported", "regraded", "issued"]
    assert not list(settings.regrade_dir.iterdir()), "the worker's scratch is removed"

    assert client.post(f"/api/bench/jobs/{job_id}/publish", headers=bearer(token)).is_success
    rows = board_rows(write_data_repository(settings), "hbench-demo")
    (row,) = rows.rows
    assert row.evidence == ["self-reported", "regraded", "issued"]
    assert rows.tasks_pinned
    run_file = settings.data_repository_dir / "boards" / "hbench-demo" / "runs" / f"{job_id}.json"
    record = json.loads(run_file.read_text())
    assert record["evidence"] == {
        "consistent": True, "tasksPinned": True, "regrade": "agreed", "regradeNote": None,
        "ci": False,
    }  # fmt: skip
    assert set(record["taskDigests"]) == {
        "count-lines", "hello-file", "prime-factor", "reverse-words", "sum-numbers",
    }  # fmt: skip


def test_a_reward_forged_in_every_copy_is_caught_by_the_regrade_and_kept_off_the_board(
    client: TestClient, *, db: Session, settings: Settings, sealed: SealedJob,
    make_token: TokenFactory, tmp_path: Path,
) -> None:  # fmt: skip
    job = sealed.copy_to(tmp_path)
    _forge_prime_factor(job)
    token = make_token("alice")
    answer = upload(client, packed(job), **bearer(token))
    # Every check the upload makes holds: the forgery is consistent and sealed.
    assert answer.status_code == 201, answer.text
    assert answer.json()["score"] == 1.0
    job_id = answer.json()["id"]

    assert regrade_queue(settings) == 1
    regrade = _regrade(db, job_id)
    assert regrade.status == RegradeStatus.DISAGREED
    assert regrade.note == "2 of 10 graded trials got other rewards when graded again"
    assert {(d["task"], d["recorded"]["reward"], d["regraded"]["reward"])
            for d in regrade.differences} == {("prime-factor", 1.0, 0.0)}  # fmt: skip

    refused = client.post(f"/api/bench/jobs/{job_id}/publish", headers=bearer(token))
    assert refused.status_code == 409
    body = refused.json()
    assert body["code"] == "regrade-mismatch"
    assert (
        "prime-factor" in body["detail"]
        and "recorded reward 1, regraded reward 0" in body["detail"]
    )
    shown = client.get(f"/api/bench/jobs/{job_id}", headers=bearer(token)).json()
    assert shown["status"] == "private"
    assert shown["evidence"] == ["self-reported"]
    assert shown["regrade"]["differences"][0]["regraded"] == {"reward": 0.0}


@pytest.fixture(scope="module")
def sealed_once(
    harbor_job: HarborJobFactory, demo_registry: Path, tmp_path_factory: pytest.TempPathFactory
) -> SealedJob:
    """The real oracle job of one attempt per task, sealed: each regraded trial starts its
    own containers, so five trials, not ten, show the docker environment as well."""
    return sealed_job(harbor_job, demo_registry, tmp_path_factory.mktemp("once"), ORACLE_ONCE)


@pytest.mark.docker
def test_the_worker_regrades_in_harbors_docker_environment_where_docker_runs(
    tmp_path: Path, sealed_once: SealedJob, docker_host: object
) -> None:
    """On one database (SQLite): it is the sandbox, not the database, under test here."""
    settings = Settings(
        state_dir=tmp_path / "state", writer_enabled=False, regrade_environment="docker",
        regrade_concurrency=4,
    )  # fmt: skip
    with TestClient(create_app(settings), **LOCAL) as local:
        answer = upload(local, packed(sealed_once.path))
        assert answer.status_code == 201, answer.text
        assert regrade_queue(settings) == 1
        shown = local.get(f"/api/bench/jobs/{answer.json()['id']}").json()
    assert shown["regrade"]["status"] == "agreed", shown["regrade"]
    assert shown["evidence"] == ["self-reported", "regraded"]
