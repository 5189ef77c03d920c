"""A sharded run issued by a trusted release of the reusable workflow: each shard uploaded
bound to the issuing workflow run, the merged run run on CI; a shard uploaded otherwise
than the others (with its run token alone, beside bound ones) is refused, storing nothing."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import IssuedRun, Job
from app.db.summary import JobSummary
from hbench.digest import spec_digest

from ..publish.test_sharded_runs import shard_archives
from .test_run_on_ci import CI, DEMO, ci

__all__ = ["ci", "shard_archives"]


def upload(ci: CI, archive: bytes, run_token: str, oidc: str | None) -> Any:
    headers = {"content-type": "application/gzip", "hpg-run-token": run_token}
    if oidc is not None:
        headers["authorization"] = f"Bearer {oidc}"
    return ci.client.post("/api/bench/uploads", content=archive, headers=headers)


def test_shards_bound_to_the_issuing_workflow_run_make_the_merged_run_run_on_ci(
    ci: CI, db: Session, shard_archives: list[tuple[dict[str, Any], bytes]]
) -> None:
    answer = ci.issue(ci.token(), {**DEMO, "shards": 3})
    assert answer.status_code == 201, answer.text
    issued = answer.json()
    # A test's short cut, instead of running Harbor on the issued specs: each shard's spec
    # is the one its real job ran.
    for shard, (spec, _) in zip(issued["shards"], shard_archives, strict=True):
        row = db.get(IssuedRun, uuid.UUID(shard["run_id"]))
        assert row is not None
        row.spec, row.spec_digest = spec, spec_digest(spec)
    db.commit()
    tokens = [shard["token"] for shard in issued["shards"]]

    first = upload(ci, shard_archives[0][1], tokens[0], ci.token())
    assert first.status_code == 201, first.text
    assert first.json()["evidence"] == ["self-reported", "issued", "run-on-ci"]

    alone = upload(ci, shard_archives[1][1], tokens[1], None)
    assert (alone.status_code, alone.json()["code"]) == (409, "run-shard-mixed")
    assert "workflow run" in alone.json()["detail"]

    for index in (1, 2):
        bound = upload(ci, shard_archives[index][1], tokens[index], ci.token())
        assert bound.status_code == 201, bound.text

    db.rollback()
    (merged,) = db.scalars(select(Job).where(Job.issued_run_id == uuid.UUID(issued["run_id"])))
    summary = JobSummary.of(merged)
    assert summary.ci is not None and summary.ci.run_on_ci
    assert len(summary.shards) == 3
