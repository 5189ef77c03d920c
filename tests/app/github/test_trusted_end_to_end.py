"""A run a workflow issued with its OIDC token, run by the real `hbench run`, uploaded and
published, carries the workflow's provenance into the data repository's run record and
onto the built site's board and run pages."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.auth.service import create_api_token
from app.datarepo.service import rebuild_site
from app.db.models import Account
from app.github.events import InstallationEvent
from app.github.installations import apply_installation
from app.main import create_app
from app.settings import Settings
from hbench.sandbox import IMPORT_PATH
from registry.datarepo import layout
from sitebuild import page
from tests.app.conftest import NO_REGRADES
from tests.fakes.github import FakeGitHub
from tests.fakes.github.webhooks import installation_payload
from tests.hbench.cli.helpers import hbench, write_spec

from ..bench.conftest import run_token, upload
from ..bench.jobs import packed
from ..conftest import LOCAL, bearer
from ..publish.conftest import write_data_repository
from .conftest import SERVICE_URL
from .test_trusted_publishing import DEMO, repository_claims, verifier_for

pytestmark = pytest.mark.harbor

COMMIT = "c0ffee" + "0" * 34


@pytest.fixture
def settings(tmp_path: Path, database_url: str, fake: FakeGitHub) -> Settings:
    """Local mode (its writer off: the test runs it), taking OIDC tokens of the fake."""
    return Settings(
        state_dir=tmp_path / "state",
        database_url=database_url,
        writer_enabled=False,
        public_url=SERVICE_URL,
        oidc_issuer=fake.url,
        **NO_REGRADES,
    )


def test_an_oidc_issued_run_publishes_with_its_workflows_provenance(
    settings: Settings,
    fake: FakeGitHub,
    transport: httpx.ASGITransport,
    db: Session,
    tmp_path: Path,
) -> None:
    alice = fake.add_user("alice")
    org = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(org, "octo-repo")
    installed = installation_payload(fake, fake.install(org, [repo]), alice)
    apply_installation(db, InstallationEvent.model_validate(installed), datetime.now(UTC))
    account = Account(login="alice", github_id=alice.id)
    db.add(account)
    db.commit()
    _, api_token = create_api_token(db, account, "publishing")
    app = create_app(settings)
    app.state.oidc_verifier = verifier_for(fake, transport)
    oidc = fake.oidc.mint(SERVICE_URL, **repository_claims(repo), sha=COMMIT)

    with TestClient(app, **LOCAL) as client:
        in_sandbox = {**DEMO, "environment": IMPORT_PATH}
        issued = client.post("/api/local-runs", json=in_sandbox, headers=bearer(oidc))
        assert issued.status_code == 201, issued.text
        run = issued.json()
        folder = tmp_path / "runner"
        folder.mkdir()
        ran = hbench("run", "--config", str(write_spec(folder, run["spec"])), cwd=folder)
        assert ran.returncode == 0, ran.stderr
        job = folder / "jobs" / run["job_name"]
        uploaded = upload(client, packed(job), **run_token(run["token"]))
        assert uploaded.status_code == 201, uploaded.text
        job_id = uploaded.json()["id"]
        published = client.post(f"/api/bench/jobs/{job_id}/publish", headers=bearer(api_token))
        assert published.status_code == 200, published.text
        board = published.json()["board"]

    checkout = write_data_repository(settings)
    record = json.loads((checkout / layout.run_file(board, job_id)).read_text())
    assert record["entry"]["owner"] == "alice"
    provenance = record["provenance"]
    workflow = "octo-org/octo-repo/.github/workflows/hbench.yml@refs/heads/main"
    expected = {
        "kind": "actions",
        "repository": "octo-org/octo-repo",
        "workflow": workflow,
        "ref": "refs/heads/main",
        "commit": COMMIT,
        "runner": "github-hosted",
    }
    assert {key: provenance.get(key) for key in expected} == expected
    # Later fields of the record, where it has them, carry the claims too.
    assert provenance.get("run_id", 1234567890) == 1234567890
    assert provenance.get("job_workflow_ref", workflow) == workflow

    rebuild_site(settings)
    board_page = (settings.site_dir / page.board(board)).read_text()
    assert "GitHub Actions" in board_page and "octo-org/octo-repo" in board_page
    # The board's pages (its own, its entries', its runs') show where the run ran.
    shown = "\n".join(p.read_text() for p in (settings.site_dir / "boards" / board).rglob("*.html"))
    for fact in ("octo-org/octo-repo", workflow, COMMIT, "github-hosted"):
        assert fact in shown, fact
