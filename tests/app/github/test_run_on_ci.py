"""Run on CI: a trusted release of the reusable workflow issues a run on a GitHub-hosted
runner, and the upload, bound to the same workflow run by a fresh OIDC token of it, makes
the run *run on CI*. Every way to fake that is refused with its code and stores nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx2 import Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.auth.claims import trusted_workflows
from app.auth.jwks import HttpJwksSource, JwksCache
from app.auth.oidc import OidcVerifier
from app.auth.service import create_api_token
from app.db.models import Account, IssuedRun, IssuedRunStatus, Job, UsedOidcToken
from app.registry import default_registry, get_registry
from hbench.digest import spec_digest
from registry.loader import Registry
from tests.fakes.github import FakeGitHub
from tests.fakes.github.state import FakeRepo

from ..bench.conftest import sealed
from ..bench.jobs import SealedJob, packed
from ..conftest import LOCAL
from .conftest import SERVICE_URL
from .test_trusted_publishing import install, repository_claims

RELEASE = "hbench/hbench/.github/workflows/run-benchmark.yml@refs/tags/v0.3.0"
RELEASED_AT = "c" * 40
DEMO: dict[str, Any] = {"arena": "hbench-demo", "declarative": {"agent": "oracle"}}
__all__ = ["sealed"]


class CI:
    """A repository with the App installed by alice, whose workflow calls the release."""

    def __init__(self, fake: FakeGitHub, client: TestClient, db: Session, repo: FakeRepo) -> None:
        self.fake, self.client, self.db, self.repo = fake, client, db, repo

    def token(self, **changes: Any) -> str:
        claims = {
            **repository_claims(self.repo),
            "job_workflow_ref": RELEASE,
            "job_workflow_sha": RELEASED_AT,
            **changes,
        }
        return self.fake.oidc.mint(SERVICE_URL, **claims)

    def issue(self, token: str, body: dict[str, Any] = DEMO) -> Response:
        return self.client.post(
            "/api/local-runs", json=body, headers={"authorization": f"Bearer {token}"}
        )

    def issued_for(self, sealed: SealedJob, **claims: Any) -> dict[str, Any]:
        """A run issued by the workflow, whose spec (a test's short cut, instead of running
        Harbor on the issued one) is the sealed job's."""
        answer = self.issue(self.token(**claims))
        assert answer.status_code == 201, answer.text
        run = self.db.get(IssuedRun, uuid.UUID(answer.json()["run_id"]))
        assert run is not None
        run.spec, run.spec_digest = sealed.spec, spec_digest(sealed.spec)
        self.db.commit()
        return dict(answer.json())

    def upload(self, sealed: SealedJob, run_token: str, oidc: str | None) -> Response:
        headers = {"content-type": "application/gzip", "hpg-run-token": run_token}
        if oidc is not None:
            headers["authorization"] = f"Bearer {oidc}"
        return self.client.post("/api/bench/uploads", content=packed(sealed.path), headers=headers)

    def used_tokens(self) -> int:
        self.db.rollback()
        return self.db.scalar(select(func.count()).select_from(UsedOidcToken)) or 0

    def jobs(self) -> list[Job]:
        self.db.rollback()
        return list(self.db.scalars(select(Job)))


@pytest.fixture
def ci(
    fake: FakeGitHub, service: FastAPI, transport: httpx.ASGITransport, db: Session
) -> Iterator[CI]:
    keys = JwksCache(HttpJwksSource(fake.url, transport))
    service.state.oidc_verifier = OidcVerifier(
        issuer=fake.url,
        audience=SERVICE_URL,
        keys=keys,
        trusted=trusted_workflows([f"{RELEASE}={RELEASED_AT}"]),
    )
    alice = fake.add_user("alice")
    db.add(Account(login="alice", github_id=alice.id))
    db.commit()
    org = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(org, "octo-repo")
    with TestClient(service, **LOCAL) as client:
        install(client, fake, org, alice, [repo])
        yield CI(fake, client, db, repo)


def test_an_upload_bound_to_the_issuing_workflow_run_is_run_on_ci(
    ci: CI, sealed: SealedJob, db: Session
) -> None:
    issued = ci.issued_for(sealed)
    run = db.get(IssuedRun, uuid.UUID(issued["run_id"]))
    assert run is not None and run.provenance is not None
    assert run.provenance["trusted_workflow"] is True
    assert run.provenance["oidc"]["job_workflow_sha"] == RELEASED_AT

    # A fresh token of the same job: another jti, the same run, attempt, workflow, runner.
    answer = ci.upload(sealed, issued["token"], ci.token())
    assert answer.status_code == 201, answer.text
    assert answer.json()["evidence"] == ["self-reported", "issued", "run-on-ci"]
    assert ci.used_tokens() == 2, "the upload's token is used up with the stored job"
    (job,) = ci.jobs()
    assert job.summary["ci"]["run_on_ci"] is True

    alice = db.scalars(select(Account).where(Account.login == "alice")).one()
    _, api_token = create_api_token(db, alice, "cli")
    published = ci.client.post(
        f"/api/bench/jobs/{job.id}/publish", headers={"authorization": f"Bearer {api_token}"}
    )
    assert published.status_code == 200, published.text


def test_an_upload_token_of_another_run_is_refused_and_stores_nothing(
    ci: CI, sealed: SealedJob, db: Session
) -> None:
    issued = ci.issued_for(sealed)
    # (A token of another commit of the workflow is refused before this, by the verifier.)
    for changed in ({"run_id": "999"}, {"run_attempt": "2"}, {"runner_environment": "x"}):
        refused = ci.upload(sealed, issued["token"], ci.token(**changed))
        body = refused.json()
        assert (refused.status_code, body["code"]) == (403, "oidc-upload-mismatch"), body
        assert "upload from the same job of the same workflow run" in body["detail"]
    assert ci.jobs() == [] and ci.used_tokens() == 1
    run = db.get(IssuedRun, uuid.UUID(issued["run_id"]))
    db.refresh(run)
    assert run is not None and run.status == IssuedRunStatus.ISSUED
    # The same run still uploads with its token alone: issued, not run on CI.
    alone = ci.upload(sealed, issued["token"], None)
    assert alone.status_code == 201, alone.text
    assert alone.json()["evidence"] == ["self-reported", "issued"]


def test_a_self_hosted_run_of_the_release_is_issued_but_never_run_on_ci(
    ci: CI, sealed: SealedJob
) -> None:
    issued = ci.issued_for(sealed, runner_environment="self-hosted")
    answer = ci.upload(sealed, issued["token"], ci.token(runner_environment="self-hosted"))
    assert answer.status_code == 201, answer.text
    assert answer.json()["evidence"] == ["self-reported", "issued"]


def _github_hosted_demo(registry: Registry) -> Registry:
    board = registry.boards["hbench-demo"].model_copy(update={"runner": "github-hosted"})
    return Registry(
        registry.benchmarks, registry.models, {**registry.boards, "hbench-demo": board},
        registry.prices,
    )  # fmt: skip


def test_a_github_hosted_board_refuses_a_self_hosted_runner_and_an_api_token(
    ci: CI, service: FastAPI, db: Session
) -> None:
    service.dependency_overrides[get_registry] = lambda: _github_hosted_demo(default_registry())
    refused = ci.issue(ci.token(runner_environment="self-hosted"))
    assert (refused.status_code, refused.json()["code"]) == (403, "oidc-runner-self-hosted")
    assert "GitHub-hosted label" in refused.json()["detail"]
    alice = db.scalars(select(Account).where(Account.login == "alice")).one()
    _, api_token = create_api_token(db, alice, "cli")
    by_token = ci.issue(api_token)
    assert (by_token.status_code, by_token.json()["code"]) == (403, "board-actions-only")
    assert ci.used_tokens() == 0
    assert ci.issue(ci.token()).status_code == 201


def test_a_caller_chosen_ref_of_the_workflow_issues_nothing(ci: CI) -> None:
    branch = "hbench/hbench/.github/workflows/run-benchmark.yml@refs/heads/main"
    refused = ci.issue(ci.token(job_workflow_ref=branch))
    assert (refused.status_code, refused.json()["code"]) == (403, "oidc-workflow-untrusted")
    moved = ci.issue(ci.token(job_workflow_sha="e" * 40))
    assert (moved.status_code, moved.json()["code"]) == (403, "oidc-workflow-sha-unknown")
    assert ci.used_tokens() == 0


def test_a_run_resumed_by_a_new_workflow_run_gets_a_new_token_and_no_run_on_ci(
    ci: CI, sealed: SealedJob, fake: FakeGitHub
) -> None:
    issued = ci.issued_for(sealed)
    later = {"run_id": "1234567999"}
    path = f"/api/local-runs/{issued['run_id']}/resume"

    org, alice = fake.user("octo-org"), fake.user("alice")
    assert org is not None and alice is not None
    other_repo = fake.add_repo(org, "elsewhere")
    install(ci.client, fake, org, alice, [ci.repo, other_repo])
    claims = {**repository_claims(other_repo), "job_workflow_ref": RELEASE}
    stranger = fake.oidc.mint(SERVICE_URL, **claims, job_workflow_sha=RELEASED_AT)
    refused = ci.client.post(path, headers={"authorization": f"Bearer {stranger}"})
    assert (refused.status_code, refused.json()["code"]) == (403, "oidc-resume-mismatch")

    resumed = ci.client.post(path, headers={"authorization": f"Bearer {ci.token(**later)}"})
    assert resumed.status_code == 200, resumed.text
    new_token = resumed.json()["token"]
    assert new_token != issued["token"] and resumed.json()["spec"] == sealed.spec
    old = ci.upload(sealed, issued["token"], None)
    assert old.json()["code"] == "run-token-invalid"
    # The upload is bound to the resuming workflow run; a resumed run is never run on CI.
    assert ci.upload(sealed, new_token, ci.token()).json()["code"] == "oidc-upload-mismatch"
    answer = ci.upload(sealed, new_token, ci.token(**later))
    assert answer.status_code == 201, answer.text
    assert answer.json()["evidence"] == ["self-reported", "issued"]
