"""The pages in GitHub mode, signed in through the fake GitHub's OAuth pages: the form token
belongs to the sign-in, and a form sent without it, with another's, or from another site
is refused and changes nothing."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import IssuedRun
from tests.fakes.github import FakeGitHub

from ..conftest import LOCAL
from ..github.conftest import (
    SERVICE_URL,
    fake,
    fake_app,
    github_client,
    github_mode,
    rsa_keys,
    service,
    service_client,
    transport,
)
from .conftest import form_token

__all__ = ["fake", "fake_app", "github_client", "github_mode", "rsa_keys", "service",
           "service_client", "transport"]  # fmt: skip

RUN = {"board": "hbench-demo", "agent": "oracle"}


def sign_in(client: TestClient, fake: FakeGitHub, fake_app: FastAPI, login: str) -> None:
    fake.signing_in = fake.add_user(login)
    started = client.get("/auth/github/login", params={"next": "/run"}, follow_redirects=False)
    with TestClient(fake_app) as github:
        approved = github.get(started.headers["location"], follow_redirects=False)
    back = client.get(approved.headers["location"].removeprefix(SERVICE_URL),
                      follow_redirects=False)  # fmt: skip
    assert back.headers["location"] == "/run"


def issued(db: Session) -> int:
    db.rollback()
    return db.scalar(select(func.count()).select_from(IssuedRun)) or 0


@pytest.fixture
def alice(service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI) -> TestClient:
    sign_in(service_client, fake, fake_app, "alice")
    return service_client


def test_signed_out_pages_offer_sign_in(service_client: TestClient) -> None:
    page = service_client.get("/run").text
    assert 'href="/auth/github/login?next=/run"' in page
    assert service_client.get("/bench").status_code == 401


def test_a_signed_in_form_needs_its_token_and_this_origin(alice: TestClient, db: Session) -> None:
    page = alice.get("/run")
    assert "Signed in as <strong>alice</strong>" in page.text
    assert 'action="/auth/logout"' in page.text
    token = form_token(page)
    own = {"origin": SERVICE_URL}
    assert alice.post("/run", data=RUN, headers=own).status_code == 403
    forged = alice.post("/run", data={**RUN, "csrf_token": "f" * 64}, headers=own)
    assert forged.status_code == 403 and "csrf-token-invalid" in forged.text
    elsewhere = alice.post("/run", data={**RUN, "csrf_token": token},
                           headers={"origin": "https://evil.example"})  # fmt: skip
    assert elsewhere.status_code == 403 and "csrf-refused" in elsewhere.text
    no_origin = alice.post("/run", data={**RUN, "csrf_token": token})
    assert no_origin.status_code == 403 and "csrf-refused" in no_origin.text
    assert issued(db) == 0
    sent = alice.post("/run", data={**RUN, "csrf_token": token}, headers=own)
    assert sent.status_code == 200 and "Your run is issued" in sent.text
    assert issued(db) == 1


def test_one_persons_token_is_refused_for_another(
    service: FastAPI, alice: TestClient, fake: FakeGitHub, fake_app: FastAPI, db: Session
) -> None:
    alices = form_token(alice.get("/run"))
    with TestClient(service, **LOCAL) as bob:
        sign_in(bob, fake, fake_app, "bob")
        assert form_token(bob.get("/run")) != alices
        answer = bob.post("/run", data={**RUN, "csrf_token": alices},
                          headers={"origin": SERVICE_URL})  # fmt: skip
    assert answer.status_code == 403 and "csrf-token-invalid" in answer.text
    assert issued(db) == 0
