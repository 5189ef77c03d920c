"""Trusted publishing: a workflow issues a run with its GitHub Actions OIDC token (minted by
the fake issuer), the run belongs to the account its repository maps to, and every
refusal changes nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx2 import Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.auth.dependencies import looks_like_jwt
from app.auth.jwks import HttpJwksSource, JwksCache
from app.auth.oidc import OidcVerifier
from app.auth.service import create_api_token
from app.db.models import Account, IssuedRun, UsedOidcToken
from app.errors import status_for
from tests.fakes.github import FakeGitHub
from tests.fakes.github.oidc import SigningKey
from tests.fakes.github.state import FakeRepo, FakeUser
from tests.fakes.github.webhooks import deliver, delivery, installation_payload

from ..conftest import LOCAL
from .conftest import SERVICE_URL

DEMO: dict[str, Any] = {"arena": "hbench-demo", "declarative": {"agent": "oracle"}}


def verifier_for(fake: FakeGitHub, transport: httpx.ASGITransport) -> OidcVerifier:
    """The service's verifier, reading the fake issuer's keys (as `get_oidc_verifier`
    makes it, with the fake's transport)."""
    return OidcVerifier(
        issuer=fake.url, audience=SERVICE_URL, keys=JwksCache(HttpJwksSource(fake.url, transport))
    )


def repository_claims(repo: FakeRepo) -> dict[str, Any]:
    """The claims that name a repository, consistently, for the fake issuer's mint."""
    name = repo.full_name
    workflow = f"{name}/.github/workflows/hbench.yml@refs/heads/main"
    return {
        "repository": name,
        "repository_id": str(repo.id),
        "repository_owner": repo.owner.login,
        "repository_owner_id": str(repo.owner.id),
        "sub": f"repo:{name}:ref:refs/heads/main",
        "workflow_ref": workflow,
        "job_workflow_ref": workflow,
    }


@dataclass
class Workflows:
    """An organisation's repository with the App installed by alice, who has an account."""

    fake: FakeGitHub
    client: TestClient
    db: Session
    repo: FakeRepo
    alice: FakeUser

    def token(self, repo: FakeRepo | None = None, **changes: Any) -> str:
        return self.fake.oidc.mint(
            SERVICE_URL, **{**repository_claims(repo or self.repo), **changes}
        )

    def issue(self, token: str, path: str = "/api/local-runs") -> Response:
        return self.client.post(path, json=DEMO, headers={"authorization": f"Bearer {token}"})

    def runs(self) -> list[IssuedRun]:
        self.db.rollback()
        return list(self.db.scalars(select(IssuedRun)))

    def used_tokens(self) -> int:
        self.db.rollback()
        return self.db.scalar(select(func.count()).select_from(UsedOidcToken)) or 0


def install(client: TestClient, fake: FakeGitHub, account: FakeUser, by: FakeUser,
            repos: list[FakeRepo]) -> None:  # fmt: skip
    """The App installed on `account`'s `repos` by `by`; GitHub tells the service."""
    installation = fake.install(account, repos)
    payload = installation_payload(fake, installation, by)
    assert deliver(client, delivery(fake, "installation", payload)).status_code == 202


@pytest.fixture
def workflows(
    fake: FakeGitHub, service: FastAPI, transport: httpx.ASGITransport, db: Session
) -> Iterator[Workflows]:
    service.state.oidc_verifier = verifier_for(fake, transport)
    alice = fake.add_user("alice")
    db.add(Account(login="alice", github_id=alice.id))
    db.commit()
    org = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(org, "octo-repo")
    with TestClient(service, **LOCAL) as client:
        install(client, fake, org, alice, [repo])
        yield Workflows(fake, client, db, repo, alice)


def test_a_workflow_issues_a_run_for_whoever_installed_the_app(workflows: Workflows) -> None:
    answer = workflows.issue(workflows.token())
    assert answer.status_code == 201, answer.text
    [run] = workflows.runs()
    owner = workflows.db.get(Account, run.account_id)
    assert owner is not None and owner.github_id == workflows.alice.id
    assert answer.json()["submission"] == run.entry
    claims = (run.provenance or {})["oidc"]
    assert claims["repository"] == "octo-org/octo-repo"
    assert claims["repository_id"] == workflows.repo.id
    assert claims["job_workflow_ref"].startswith("octo-org/octo-repo/.github/workflows/hbench.yml")
    assert (claims["sha"], claims["run_id"]) == ("a" * 40, 1234567890)
    assert claims["runner_environment"] == "github-hosted"
    assert workflows.used_tokens() == 1


def test_a_personal_repository_maps_to_its_owner(
    workflows: Workflows, fake: FakeGitHub, db: Session
) -> None:
    bob = fake.add_user("bob")
    db.add(Account(login="bob", github_id=bob.id))
    db.commit()
    tools = fake.add_repo(bob, "tools")
    # Installed by someone without an account: the repository's owner has one.
    install(workflows.client, fake, bob, fake.add_user("helper"), [tools])
    answer = workflows.issue(workflows.token(tools))
    assert answer.status_code == 201, answer.text
    [run] = workflows.runs()
    assert db.get(Account, run.account_id).login == "bob"  # type: ignore[union-attr]


def test_a_token_issues_one_run(workflows: Workflows) -> None:
    token = workflows.token()
    assert workflows.issue(token).status_code == 201
    again = workflows.issue(token)
    assert (again.status_code, again.json()["code"]) == (401, "oidc-token-reused")
    assert "request a new one" in again.json()["detail"]
    assert len(workflows.runs()) == 1 and workflows.used_tokens() == 1


def now() -> int:
    return int(datetime.now(UTC).timestamp())


def forged(workflows: Workflows, rsa_keys: list[RSAPrivateKey]) -> str:
    """Signed with the App's key (not the issuer's) under the issuer's current key id."""
    impostor = SigningKey(kid=workflows.fake.oidc.current.kid, key=rsa_keys[0])
    return workflows.fake.oidc.mint(SERVICE_URL, key=impostor, **repository_claims(workflows.repo))


def stranger(workflows: Workflows) -> str:
    repo = workflows.fake.add_repo(workflows.fake.add_user("stranger"), "elsewhere")
    return workflows.token(repo)


def unclaimed(workflows: Workflows) -> str:
    """A repository whose installer and owner have no account."""
    fake = workflows.fake
    org = fake.add_user("quiet-org", type="Organization")
    repo = fake.add_repo(org, "lab")
    install(workflows.client, fake, org, fake.add_user("nobody-here"), [repo])
    return workflows.token(repo)


REFUSALS: dict[str, tuple[Callable[..., str], str, str]] = {
    "wrong audience": (
        lambda w, _: w.fake.oidc.mint("https://elsewhere.example", **repository_claims(w.repo)),
        "oidc-audience-mismatch", f"request it with audience={SERVICE_URL}",
    ),
    "expired": (
        lambda w, _: w.token(exp=now() - 3600, iat=now() - 4000, nbf=now() - 4000),
        "oidc-token-expired", "request a new one",
    ),
    "forged signature": (forged, "oidc-signature-invalid", "does not match the issuer's key"),
    "unknown owner": (
        lambda w, _: stranger(w), "oidc-repository-not-installed", "install the App on stranger",
    ),
    "nobody signed in": (
        lambda w, _: unclaimed(w), "oidc-account-unknown", "@nobody-here, who installed it",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", REFUSALS)
def test_a_refused_token_changes_nothing(
    workflows: Workflows, rsa_keys: list[RSAPrivateKey], case: str
) -> None:
    make, code, hint = REFUSALS[case]
    answer = workflows.issue(make(workflows, rsa_keys))
    body = answer.json()
    assert (answer.status_code, body["code"]) == (status_for(code), code), body
    assert hint in body["detail"]
    assert workflows.runs() == [] and workflows.used_tokens() == 0


def test_an_oidc_token_signs_in_nowhere_else(workflows: Workflows) -> None:
    token = workflows.token()
    listed = workflows.client.get("/api/local-runs", headers={"authorization": f"Bearer {token}"})
    assert listed.json()["code"] == "oidc-token-not-accepted"
    assert listed.status_code == status_for("oidc-token-not-accepted")
    assert "POST /api/local-runs" in listed.json()["detail"]
    assert workflows.used_tokens() == 0
    # Still good for what it is for.
    assert workflows.issue(token).status_code == 201


def test_an_api_token_still_issues_runs(workflows: Workflows, db: Session) -> None:
    alice = db.scalars(select(Account).where(Account.login == "alice")).one()
    _, token = create_api_token(db, alice, "ci")
    answer = workflows.issue(token)
    assert answer.status_code == 201, answer.text
    [run] = workflows.runs()
    assert run.provenance is None or "oidc" not in run.provenance


@pytest.mark.parametrize(
    ("bearer_value", "jwt"),
    [
        ("eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl", True),
        ("hpg_abc.def.ghi", False),
        ("hpg_0123456789abcdef", False),
        ("a.b", False),
        ("a..c", False),
        ("a.b.c.d", False),
    ],
)
def test_a_bearer_is_taken_for_an_oidc_token_by_its_shape(bearer_value: str, jwt: bool) -> None:
    assert looks_like_jwt(bearer_value) is jwt


def test_a_workflow_abandons_the_runs_of_its_own_repository_only(
    workflows: Workflows, fake: FakeGitHub
) -> None:
    issued = workflows.issue(workflows.token())
    assert issued.status_code == 201, issued.text
    path = f"/api/local-runs/{issued.json()['run_id']}/abandon"
    org = workflows.repo.owner
    other = fake.add_repo(org, "other-repo")
    install(workflows.client, fake, org, workflows.alice, [workflows.repo, other])

    def abandon(token: str) -> Response:
        return workflows.client.post(path, headers={"authorization": f"Bearer {token}"})

    elsewhere = abandon(workflows.token(other))
    assert (elsewhere.status_code, elsewhere.json()["code"]) == (404, "run-not-found")
    assert [run.status.value for run in workflows.runs()] == ["issued"]
    given_up = abandon(workflows.token())
    assert given_up.status_code == 200, given_up.text
    assert given_up.json()["status"] == "abandoned"
    assert [run.status.value for run in workflows.runs()] == ["abandoned"]
