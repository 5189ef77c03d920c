"""A published run's record names the rules that redacted its job, as the upload counted
them, and leaves the field out where there are none, so older records keep their bytes."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.db.summary import JobSummary
from app.publish.record import published_run
from app.settings import Settings
from registry.datarepo.models import Provenance, RunEntry
from registry.placement import EntrySettings

from ..bench.jobs import SealedJob
from ..bench.test_redaction_records import RULES, with_keys
from ..conftest import TokenFactory
from .conftest import NOW, FakeClock, outbox, publish, uploaded, write_data_repository


def test_the_published_run_carries_its_redactions_per_rule_to_the_data_repository(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    tmp_path: Path, clock: FakeClock, settings: Settings,
) -> None:  # fmt: skip
    token = make_token("alice")
    archive, files = with_keys(sealed, tmp_path)
    job_id = uploaded(client, archive, token)

    answer = publish(client, job_id, token)

    assert answer.status_code == 200, answer.text
    (change,) = outbox(db)
    run = change.payload["run"]
    assert run["redactions"] == files and run["redactionRules"] == RULES
    checkout = write_data_repository(settings)
    written = json.loads((checkout / "boards/hbench-demo/runs" / f"{job_id}.json").read_text())
    assert written["redactionRules"] == RULES


def test_a_job_uploaded_before_rules_were_counted_publishes_a_record_without_them() -> None:
    entry = RunEntry(owner="alice", name="oracle-a1b2c3", settings=EntrySettings(agent="oracle"))
    summary = {
        "job_id": "j-1", "job_name": "demo", "agent": {"name": "oracle"}, "n_attempts": 1,
        "score": 1.0, "results": {"hello-file": [1.0]}, "boards": {"fits": ["hbench-demo"]},
    }  # fmt: skip

    def record(**extra: object) -> dict[str, object]:
        return published_run(
            JobSummary.model_validate({**summary, **extra}), run_id="r-1", board="hbench-demo",
            entry=entry,
            issued=False, provenance=Provenance(kind="local"), published_at=NOW,
            fingerprint=None, redactions={"a.txt": 1},
        ).to_json_dict()  # fmt: skip

    assert "redactionRules" not in record()
    assert "redactionRules" not in record(redaction_rules={})
    assert record(redaction_rules={"github-pat": 1})["redactionRules"] == {"github-pat": 1}
