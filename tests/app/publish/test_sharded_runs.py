"""A sharded run's uploads: each shard a real Harbor job of its tasks, checked against its own
spec; the last to arrive forms the run's one job, published once and counted once. A shard
sent twice is refused; a shard missing at expiry leaves the run expired, counted once."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import JsonValue
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.auth.tokens import hash_token, new_run_token
from app.bench.merge import merged_ci, merged_regrade, mixed_workflow_runs
from app.bench.shards import complete_pending
from app.blobs import LocalBlobStore
from app.db.models import IssuedRun, IssuedRunStatus, Job
from app.db.session import Database
from app.db.summary import JobSummary, SummaryCi
from app.publish.maintenance import run_maintenance
from app.runs.shards import shard_spec, split
from app.settings import Settings
from hbench.demo import demo_spec
from hbench.digest import spec_digest
from hbench.jobs.sealing import seal
from tests.conftest import HarborJobFactory

from ..bench.conftest import run_token, upload
from ..bench.jobs import packed
from ..conftest import TokenFactory
from .conftest import NOW, FakeClock, job_row, outbox, publish
from .test_maintenance import POLICY

TASKS = ["count-lines", "hello-file", "prime-factor", "reverse-words", "sum-numbers"]
SHARDS = 3
RUN_NAME = "sharded-run"


@dataclass(frozen=True)
class ShardedRun:
    run_id: uuid.UUID
    shard_ids: list[uuid.UUID]
    tokens: list[str]


@pytest.fixture(scope="module")
def shard_archives(
    harbor_job: HarborJobFactory, demo_registry: Path, tmp_path_factory: pytest.TempPathFactory
) -> list[tuple[dict[str, Any], bytes]]:
    """Each shard's spec and its real job (Harbor run with the shard's tasks), sealed."""
    folder = tmp_path_factory.mktemp("shards")
    whole: dict[str, JsonValue] = json.loads(
        json.dumps({**demo_spec(demo_registry, RUN_NAME), "quiet": True})
    )
    made = []
    for index, tasks in enumerate(split(TASKS, SHARDS)):
        spec = shard_spec(whole, tasks, index, SHARDS)
        flags = [flag for task in tasks for flag in ("-i", task)]
        source = harbor_job(str(spec["job_name"]), *flags)
        dest = folder / source.name
        dest.mkdir()
        for path in source.iterdir():  # a copy to seal: the cached job is shared
            copy = dest / path.name
            if path.is_dir():
                shutil.copytree(path, copy)
            else:
                copy.write_bytes(path.read_bytes())
        seal(dest, spec_digest=spec_digest(spec))
        made.append((spec, packed(dest)))
    return made


def whole_spec(shard: dict[str, Any]) -> dict[str, Any]:
    spec = {**shard, "job_name": RUN_NAME}
    spec["datasets"] = [{k: v for k, v in shard["datasets"][0].items() if k != "task_names"}]
    return spec


def store_sharded(db: Session, specs: list[dict[str, Any]], *, login: str = "alice") -> ShardedRun:
    """A sharded run stored directly, as `POST /api/local-runs` with `shards` stores it."""
    account = ensure_account(db, login)
    issued_at = NOW - timedelta(hours=1)

    def row(spec: dict[str, Any], token: str) -> IssuedRun:
        return IssuedRun(
            id=uuid.uuid4(), account_id=account.id, board="hbench-demo", entry="oracle-a1b2c3",
            spec=spec, spec_digest=spec_digest(spec), token_hash=hash_token(token),
            status=IssuedRunStatus.ISSUED, issued_at=issued_at,
            expires_at=issued_at + timedelta(hours=48), shard_count=len(specs),
        )  # fmt: skip

    parent = row(whole_spec(specs[0]), new_run_token())
    db.add(parent)
    tokens, shard_ids = [], []
    for index, spec in enumerate(specs):
        token = new_run_token()
        shard = row(spec, token)
        shard.parent_id, shard.shard_index = parent.id, index
        db.add(shard)
        tokens.append(token)
        shard_ids.append(shard.id)
    db.commit()
    return ShardedRun(parent.id, shard_ids, tokens)


def jobs_of(db: Session, run_id: uuid.UUID) -> list[Job]:
    db.rollback()
    return list(db.scalars(select(Job).where(Job.issued_run_id == run_id)))


def status_of(db: Session, run_id: uuid.UUID) -> IssuedRunStatus:
    db.rollback()
    db.expire_all()  # this session changed the run itself in one test
    run = db.get(IssuedRun, run_id)
    assert run is not None
    return run.status


def counts(db: Session) -> list[str]:
    return [str(e.payload["issueId"]) for e in outbox(db) if e.kind == "count_issued_run"]


def maintain(settings: Settings, now: datetime) -> int:
    database = Database(settings.effective_database_url)
    try:
        blobs = LocalBlobStore(settings.blob_dir)
        return run_maintenance(database, blobs, now=now, policy=POLICY).counted
    finally:
        database.dispose()


def test_the_last_shard_forms_the_runs_one_job_published_and_counted_once(
    client: TestClient, *, db: Session, settings: Settings, make_token: TokenFactory,
    shard_archives: list[tuple[dict[str, Any], bytes]], clock: FakeClock,
) -> None:  # fmt: skip
    run = store_sharded(db, [spec for spec, _ in shard_archives])
    answers = []
    for index, (_, archive) in enumerate(shard_archives):
        if index:
            assert jobs_of(db, run.run_id) == []  # no merged job while a shard is missing
            assert status_of(db, run.run_id) is IssuedRunStatus.ISSUED
        answer = upload(client, archive, **run_token(run.tokens[index]))
        assert answer.status_code == 201, answer.text
        assert answer.json()["issued_run_id"] == str(run.shard_ids[index])
        answers.append(answer.json())

    (merged,) = jobs_of(db, run.run_id)
    assert status_of(db, run.run_id) is IssuedRunStatus.UPLOADED
    summary = JobSummary.of(merged)
    shard_summaries = [JobSummary.of(job_row(db, a["id"])) for a in answers]
    assert summary.task_names == TASKS
    assert summary.n_trials == sum(s.n_trials for s in shard_summaries) == len(TASKS)
    rewards = [r or 0.0 for s in shard_summaries for values in s.results.values() for r in values]
    assert summary.score == pytest.approx(sum(rewards) / len(rewards))
    assert [s.index for s in summary.shards] == [1, 2, 3]
    assert [s.job for s in summary.shards] == [a["id"] for a in answers]
    assert summary.issued_run is not None and summary.issued_run.id == str(run.run_id)
    assert summary.boards.fits == ["hbench-demo"]
    assert (merged.job_name, merged.board, merged.entry) == (
        RUN_NAME,
        "hbench-demo",
        "oracle-a1b2c3",
    )
    assert len((merged.fingerprint or {})["trials"]) == len(TASKS)
    with LocalBlobStore(settings.blob_dir).open(str(merged.blob_key)) as stream:
        stored = stream.read()
    with tarfile.open(fileobj=io.BytesIO(stored)) as merged_tar:
        names = sorted(merged_tar.getnames())
    assert names == [f"{RUN_NAME}/{RUN_NAME}-{i}of3.tar.gz" for i in (1, 2, 3)]

    token = make_token("alice")
    # Your bench shows the run's regrade from its shards' (this service regrades nothing).
    shown = client.get(f"/api/bench/jobs/{merged.id}", headers={"authorization": f"Bearer {token}"})
    assert shown.status_code == 200, shown.text
    assert shown.json()["regrade"] == {
        "status": "not_regradable",
        "note": "shard 1 of 3: this service does not regrade jobs",
        "differences": [],
    }
    alone = publish(client, answers[0]["id"], token)
    assert (alone.status_code, alone.json()["code"]) == (409, "run-shard-part")
    assert counts(db) == []

    published = publish(client, str(merged.id), token)
    assert published.status_code == 200, published.text
    assert counts(db) == [str(run.run_id)]
    runs = [e.payload["run"] for e in outbox(db) if e.kind == "publish_run"]
    assert [r["id"] for r in runs] == [str(merged.id)]
    assert runs[0]["results"] == summary.results

    # Maintenance counts the run never again, and its shards never at all.
    assert maintain(settings, NOW + timedelta(days=3)) == 0
    assert counts(db) == [str(run.run_id)]


def test_a_shard_sent_twice_is_refused(
    client: TestClient, *, db: Session, shard_archives: list[tuple[dict[str, Any], bytes]],
    clock: FakeClock,
) -> None:  # fmt: skip
    run = store_sharded(db, [spec for spec, _ in shard_archives])
    archive = shard_archives[0][1]
    assert upload(client, archive, **run_token(run.tokens[0])).status_code == 201

    again = upload(client, archive, **run_token(run.tokens[0]))

    # The shard's own job again counted already, as an unsharded run's does; another job
    # with its used token is run-token-used.
    assert (again.status_code, again.json()["code"]) == (409, "bench-published-before")
    other = upload(client, shard_archives[1][1], **run_token(run.tokens[0]))
    assert (other.status_code, other.json()["code"]) == (409, "run-token-used")
    assert status_of(db, run.run_id) is IssuedRunStatus.ISSUED


def test_a_shard_uploaded_against_another_shards_spec_is_refused(
    client: TestClient, *, db: Session, shard_archives: list[tuple[dict[str, Any], bytes]],
    clock: FakeClock,
) -> None:  # fmt: skip
    run = store_sharded(db, [spec for spec, _ in shard_archives])

    answer = upload(client, shard_archives[1][1], **run_token(run.tokens[0]))

    assert answer.status_code == 422
    assert {e["code"] for e in answer.json()["errors"]} >= {"local-spec-mismatch"}
    assert jobs_of(db, run.shard_ids[0]) == []


def test_a_shard_missing_at_expiry_leaves_the_run_expired_and_counted_once(
    client: TestClient, *, db: Session, settings: Settings,
    shard_archives: list[tuple[dict[str, Any], bytes]], clock: FakeClock,
) -> None:  # fmt: skip
    run = store_sharded(db, [spec for spec, _ in shard_archives])
    for index in (0, 1):
        answer = upload(client, shard_archives[index][1], **run_token(run.tokens[index]))
        assert answer.status_code == 201, answer.text

    assert maintain(settings, NOW) == 0  # still waiting for its third shard
    assert maintain(settings, NOW + timedelta(hours=48)) == 1

    assert counts(db) == [str(run.run_id)]
    assert jobs_of(db, run.run_id) == []
    clock.now = NOW + timedelta(hours=48)
    late = upload(client, shard_archives[2][1], **run_token(run.tokens[2]))
    assert (late.status_code, late.json()["code"]) == (401, "run-token-expired")


def test_a_run_whose_merge_never_ran_is_merged_by_maintenance(
    client: TestClient, *, db: Session, settings: Settings,
    shard_archives: list[tuple[dict[str, Any], bytes]], clock: FakeClock,
) -> None:  # fmt: skip
    run = store_sharded(db, [spec for spec, _ in shard_archives])
    for index, (_, archive) in enumerate(shard_archives):
        assert upload(client, archive, **run_token(run.tokens[index])).status_code == 201
    # As if the last upload's process died between storing its shard and merging: the
    # merged job gone, the run waiting again.
    (merged,) = jobs_of(db, run.run_id)
    db.delete(merged)
    parent = db.get(IssuedRun, run.run_id)
    assert parent is not None
    parent.status = IssuedRunStatus.ISSUED
    db.commit()

    assert maintain(settings, NOW + timedelta(hours=49)) == 1  # merged, then counted

    assert status_of(db, run.run_id) is IssuedRunStatus.UPLOADED
    assert len(jobs_of(db, run.run_id)) == 1
    assert counts(db) == [str(run.run_id)]
    database = Database(settings.effective_database_url)
    try:
        assert complete_pending(database, LocalBlobStore(settings.blob_dir), NOW) == 0
    finally:
        database.dispose()


def test_shards_of_different_workflow_runs_are_mixed() -> None:
    one = SummaryCi(run_on_ci=True, runner_environment="github-hosted", run_id=7, run_attempt=1)
    again = one.model_copy(update={"run_attempt": 2})
    other = one.model_copy(update={"run_id": 8})

    assert not mixed_workflow_runs([one, one, one])
    assert mixed_workflow_runs([one, again]) and mixed_workflow_runs([one, other])
    assert mixed_workflow_runs([one, None])
    merged = merged_ci([one, one])
    assert merged is not None and merged.run_on_ci and merged.run_id == 7
    assert merged_ci([one, other]) is None and merged_ci([one, None]) is None


def test_the_runs_regrade_waits_for_every_shard_then_shows_the_worst() -> None:
    def shard(status: str, note: str | None = None, *differences: str) -> dict[str, Any]:
        return {"status": status, "note": note, "differences": list(differences)}

    agreed = shard("agreed")
    assert merged_regrade([agreed, shard("queued"), shard("running")]) == {
        "status": "running",
        "note": "shard 3 of 3 is running for its regrade",
        "differences": [],
    }
    assert merged_regrade([agreed, agreed])["status"] == "agreed"
    assert merged_regrade([agreed, agreed])["note"] == (
        "each of its 2 shards was regraded, and every graded trial agreed"
    )
    mixed = [shard("failed", "no docker", "a"), agreed, shard("disagreed", None, "b", "c")]
    assert merged_regrade(mixed) == {
        "status": "disagreed",
        "note": "shard 3 of 3: no reason was recorded",
        "differences": ["a", "b", "c"],
    }
