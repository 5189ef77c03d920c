"""A board takes only jobs of its own task files: softened tests keep a job off the demo's
boards, self-reported or issued, and a board whose benchmark pins nothing keeps to the task
files of its first run."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.registry import default_registry, get_registry
from hbench.demo import demo_spec
from hbench.digest import spec_digest
from hbench.jobs.sealing import seal
from registry.loader import Registry

from ..bench.conftest import FakeClock, issue_run, run_token, upload
from ..bench.jobs import SealedJob, packed
from ..conftest import TokenFactory, bearer
from .conftest import kinds, publish, uploaded


def _sealed_softened(softened_job: Path, folder: Path) -> tuple[Path, dict[str, Any]]:
    job = folder / softened_job.name
    shutil.copytree(softened_job, job)
    registry = softened_job.parent.parent / "registry.json"
    spec = {**demo_spec(registry, softened_job.name), "quiet": True}
    seal(job, spec_digest=spec_digest(spec))
    return job, spec


def test_softened_tests_keep_a_self_reported_job_private_and_off_every_board(
    client: TestClient, *, db: Session, softened_job: Path, make_token: TokenFactory,
    tmp_path: Path,
) -> None:  # fmt: skip
    job, _ = _sealed_softened(softened_job, tmp_path)
    token = make_token("alice")
    answer = upload(client, packed(job), **bearer(token))
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["score"] == 1.0
    assert body["boards"]["fits"] == [] and body["boards"]["opens"] is None
    (note,) = body["boards"]["notes"]
    assert note["code"] == "task-digest-mismatch"
    assert (
        "prime-factor" in note["message"] and "the tasks pinned for hbench-demo" in note["message"]
    )

    refused = publish(client, body["id"], token)
    assert refused.status_code == 422
    assert refused.json()["code"] == "task-digest-mismatch"
    assert kinds(db) == []


def test_softened_tests_keep_an_issued_run_off_its_board_though_it_counts(
    client: TestClient, *, db: Session, softened_job: Path, make_token: TokenFactory,
    tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    job, spec = _sealed_softened(softened_job, tmp_path)
    issued = issue_run(db, spec, login="alice")
    answer = upload(client, packed(job), **run_token(issued.token))
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["boards"]["fits"] == []
    assert body["boards"]["notes"][0]["code"] == "task-digest-mismatch"

    refused = publish(client, body["id"], make_token("alice"))
    assert refused.status_code == 422
    assert refused.json()["code"] == "task-digest-mismatch"
    assert kinds(db) == []


def _unpinned(registry: Registry) -> Registry:
    demo = registry.benchmarks["hbench-demo"]
    harbor = demo.harbor.model_copy(update={"task_digests": None, "pinned_from": None})
    benchmarks = {**registry.benchmarks, "hbench-demo": demo.model_copy(update={"harbor": harbor})}
    return Registry(benchmarks, registry.models, registry.boards, registry.prices)


def test_a_board_of_an_unpinned_benchmark_keeps_the_task_files_of_its_first_run(
    app: FastAPI, client: TestClient, *, db: Session, sealed_archive: bytes,
    softened_job: Path, make_token: TokenFactory, tmp_path: Path,
) -> None:  # fmt: skip
    app.dependency_overrides[get_registry] = lambda: _unpinned(default_registry())
    alice, bob = make_token("alice"), make_token("bob")
    first = uploaded(client, sealed_archive, alice)
    assert publish(client, first, alice).status_code == 200

    job, _ = _sealed_softened(softened_job, tmp_path)
    second = uploaded(client, packed(job), bob)
    # Nothing pins the demo's tasks now, so placement lets the job fit the board...
    assert client.get(f"/api/bench/jobs/{second}", headers=bearer(bob)).json()["boards"][
        "fits"
    ] == ["hbench-demo"]
    # ...and publishing holds it to the task files the board's first run ran.
    refused = publish(client, second, bob)
    assert refused.status_code == 422
    assert refused.json()["code"] == "task-digest-mismatch"
    assert "the runs on hbench-demo" in refused.json()["detail"]
    assert kinds(db).count("publish_run") == 1


def test_an_honest_job_keeps_fitting_its_boards(
    client: TestClient, *, sealed: SealedJob, sealed_archive: bytes, make_token: TokenFactory
) -> None:
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    shown = client.get(f"/api/bench/jobs/{job_id}", headers=bearer(token)).json()
    assert shown["boards"] == {"fits": ["hbench-demo"], "opens": None, "notes": []}
    assert shown["summary"]["tasks_pinned"] is True
