"""An accepted job is stored with key-like values replaced, after the manifest was checked
on the bytes as they arrived."""

from __future__ import annotations

import tarfile
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.settings import Settings
from registry.placement import EntrySettings

from ..conftest import TokenFactory, bearer
from .conftest import FakeClock, issue_run, job_rows, run_token, upload
from .jobs import SealedJob, edit_json, packed, reseal, trial_folders

ANTHROPIC_KEY = "sk-ant-api03-" + "Xy7kQ2mZ9pLw4RtV8nB1" * 4 + "Xy7kQ2mZ9pLw4" + "AA"
"""Shaped as Anthropic's keys are (93 characters between prefix and `AA`), and random
enough to pass gitleaks' rule: a key of three letters repeated has too little entropy."""
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_keys_in_agent_logs_are_stored_redacted_and_counted(
    client: TestClient,
    *,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    sealed: SealedJob,
    tmp_path: Path,
) -> None:
    job = sealed.copy_to(tmp_path)
    trial = trial_folders(job)[0]
    log = trial / "agent" / "oracle.txt"
    log.write_text(f"using key {ANTHROPIC_KEY}\nexport GITHUB_TOKEN={GITHUB_TOKEN}\n")
    reseal(job)  # sealed with the keys in: the manifest must match the bytes as sent

    answer = upload(client, packed(job), **bearer(make_token("alice")))

    assert answer.status_code == 201, answer.text
    body = answer.json()
    logged = f"{trial.name}/agent/oracle.txt"
    assert body["redactions"] == {"total": 2, "files": {logged: 2}}
    checks = {check["rule"]: check["status"] for check in body["checks"]}
    assert checks["manifest-matches-bytes"] == "passed"
    (row,) = job_rows(db)
    assert row.redactions == {logged: 2}
    assert row.blob_key is not None
    with tarfile.open(settings.blob_dir / row.blob_key, "r:gz") as tar:
        stored = tar.extractfile(f"{job.name}/{logged}")
        assert stored is not None
        text = stored.read().decode()
        manifest = tar.extractfile(f"{job.name}/manifest.json")
        assert manifest is not None
        # The seal is kept as it was: the stored copy differs from it only where redacted.
        assert manifest.read() == (job / "manifest.json").read_bytes()
    assert text == "using key [REDACTED]\nexport GITHUB_TOKEN=[REDACTED]\n"
    assert ANTHROPIC_KEY not in answer.text


def test_a_key_in_the_jobs_settings_is_redacted_in_the_summary_too(
    client: TestClient, make_token: TokenFactory, sealed: SealedJob, tmp_path: Path
) -> None:
    job = sealed.copy_to(tmp_path)
    agents = [{"name": "oracle", "kwargs": {"api_key": ANTHROPIC_KEY, "temperature": 0}}]
    edit_json(job / "config.json", lambda data: data.update(agents=agents))
    reseal(job)
    token = make_token("alice")

    answer = upload(client, packed(job), **bearer(token))

    assert answer.status_code == 201, answer.text
    assert answer.json()["redactions"]["files"]["config.json"] == 1
    detail = client.get(f"/api/bench/jobs/{answer.json()['id']}", headers=bearer(token))
    summary = detail.json()["summary"]
    assert summary["agent"]["kwargs"] == {"api_key": "[REDACTED]", "temperature": 0}
    assert summary["entry_settings"]["options"]["api_key"] == "[REDACTED]"
    settings = EntrySettings.model_validate(summary["entry_settings"])
    assert summary["entry_settings_digest"] == settings.digest()
    assert ANTHROPIC_KEY not in detail.text


def test_a_refusal_quotes_no_key(
    client: TestClient, db: Session, clock: FakeClock, sealed: SealedJob, tmp_path: Path
) -> None:
    spec = sealed.spec
    run = issue_run(db, spec)
    job = sealed.copy_to(tmp_path)
    agents = [{"name": "oracle", "kwargs": {"api_key": ANTHROPIC_KEY}}]
    edit_json(job / "config.json", lambda data: data.update(agents=agents))
    reseal(job)

    answer = upload(client, packed(job), **run_token(run.token))

    assert (answer.status_code, answer.json()["code"]) == (422, "local-spec-mismatch")
    assert "agents[0].kwargs.api_key is '[REDACTED]' in the job" in answer.json()["detail"]
    assert ANTHROPIC_KEY[:20] not in answer.text
