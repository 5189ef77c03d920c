"""The three steps used alone, chained by a caller's own composite action, issue with the
job's OIDC token: the real service verifies it against the fake GitHub's issuer, and the
run carries the workflow's provenance all the way to the uploaded job."""

from __future__ import annotations

import socket
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy import select

from app.db.models import Account, IssuedRun, Job
from app.db.session import Database
from app.github.events import InstallationEvent
from app.github.installations import apply_installation
from app.main import create_app
from app.settings import Settings
from tests.action.conftest import ROOT, RunnerJob, token_endpoint
from tests.fakes.github import FakeGitHub
from tests.fakes.github.server import serve_fake_github
from tests.fakes.github.webhooks import installation_payload
from tests.hbench.cli.service import serving_on

CALLER = """\
name: a caller's own steps
description: issue, run and upload with hbench's steps, one by one
inputs:
  service-url:
    description: the service
    required: true
runs:
  using: composite
  steps:
    - id: issue
      uses: ./hbench/actions/issue
      with:
        service-url: ${{ inputs.service-url }}
        board: hbench-demo-quick
        agent: oracle
    - id: run
      uses: ./hbench/actions/run
      with:
        run-dir: ${{ steps.issue.outputs.run-dir }}
        image: hbench-runner:test
    - id: upload
      uses: ./hbench/actions/upload
      with:
        service-url: ${{ inputs.service-url }}
        job-dir: ${{ steps.run.outputs.job-dir }}
        token-file: ${{ steps.issue.outputs.token-file }}
        run-dir: ${{ steps.issue.outputs.run-dir }}
outputs:
  submission:
    description: the entry
    value: ${{ steps.issue.outputs.submission }}
  job-id:
    description: the job
    value: ${{ steps.upload.outputs.job-id }}
  score:
    description: the score
    value: ${{ steps.upload.outputs.score }}
"""


@pytest.mark.harbor
def test_the_steps_issue_with_the_workflows_oidc_token_and_upload(
    runner_job: RunnerJob, tmp_path: Path
) -> None:
    keys = [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2)]
    fake = FakeGitHub(keys[0], keys[1:], url="http://127.0.0.1:9")
    alice = fake.add_user("alice")
    org = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(org, "octo-repo")
    installation = fake.install(org, [repo])
    workflow = "hbench/hbench/.github/workflows/run-benchmark.yml@refs/tags/v1"
    claims = {
        "repository": repo.full_name,
        "repository_id": str(repo.id),
        "repository_owner": org.login,
        "repository_owner_id": str(org.id),
        "sub": f"repo:{repo.full_name}:ref:refs/heads/main",
        "workflow_ref": f"{repo.full_name}/.github/workflows/bench.yml@refs/heads/main",
        "job_workflow_ref": workflow,
    }
    (runner_job.workspace / "caller").mkdir()
    (runner_job.workspace / "caller" / "action.yml").write_text(CALLER)
    (runner_job.workspace / "hbench").symlink_to(ROOT)  # where a checkout of hbench would be
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    service_url = f"http://127.0.0.1:{sock.getsockname()[1]}"

    with serve_fake_github(fake) as issuer_url:
        settings = Settings(
            mode="local",
            state_dir=tmp_path / "state",
            public_url=service_url,
            oidc_issuer=issuer_url,
            trusted_workflows=(f"{workflow}={'a' * 40}",),
        )
        database = Database(settings.effective_database_url)
        with serving_on(create_app(settings), sock):
            with database.session() as db:
                event = InstallationEvent.model_validate(
                    installation_payload(fake, installation, alice)
                )
                apply_installation(db, event, datetime.now(UTC))
                db.add(Account(login="alice", github_id=alice.id))
                db.commit()
            with token_endpoint(lambda audience: fake.oidc.mint(audience, **claims)) as tokens:
                runner = runner_job.runner(
                    ACTIONS_ID_TOKEN_REQUEST_URL=tokens.url,
                    ACTIONS_ID_TOKEN_REQUEST_TOKEN=tokens.request_token,
                )
                result = runner.run(runner_job.workspace / "caller", {"service-url": service_url})
        with database.session() as db:
            run = db.scalars(select(IssuedRun)).one()
            job = db.scalars(select(Job)).one()
            owner = db.get(Account, run.account_id)
            assert owner is not None
            owner_login = owner.login
        database.dispose()

    assert result.succeeded, result.log
    assert tokens.audiences == [service_url]
    assert tokens.authorizations == [f"bearer {tokens.request_token}"]
    assert result.outputs["submission"] == run.entry
    assert result.outputs["score"] == "1.0000"  # the quick board's two tasks both pass
    assert uuid.UUID(result.outputs["job-id"]) == job.id
    assert job.issued_run_id == run.id
    assert owner_login == "alice"
    assert run.provenance is not None
    assert run.provenance["oidc"]["repository"] == "octo-org/octo-repo"
    assert run.provenance["oidc"]["job_workflow_ref"] == workflow
    assert (
        result.job.skipped == ["actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065"] * 3
    )
