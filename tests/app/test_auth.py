"""Signing in: the local user from this machine only, API tokens made, listed, used, revoked."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.auth.dependencies import is_local_request
from app.auth.service import authenticate_api_token
from app.auth.tokens import new_api_token, new_run_token
from app.db.models import Account, ApiToken, utcnow
from app.main import create_app
from app.settings import Settings
from hbench.errors import HbenchError

from .conftest import LOCAL, TokenFactory, bearer, github_settings


def test_the_local_user_is_signed_in_from_this_machine(client: TestClient) -> None:
    me = client.get("/api/me")
    assert me.status_code == 200
    assert me.json()["login"] == "local"
    assert me.json()["signed_in_with"] == "local"
    assert me.json()["is_maintainer"] is True
    # The same account on every request, not a new one each time.
    assert client.get("/api/me").json()["id"] == me.json()["id"]


def test_the_local_user_is_the_maintainer_even_if_made_by_the_cli(
    client: TestClient, make_token: TokenFactory
) -> None:
    make_token("local")
    assert client.get("/api/me").json()["is_maintainer"] is True


def test_the_local_login_is_a_setting(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"local_login": "octo-cat"}))
    with TestClient(app, **LOCAL) as client:
        assert client.get("/api/me").json()["login"] == "octo-cat"


def test_another_machine_must_send_a_token(remote: TestClient) -> None:
    answer = remote.get("/api/me")
    assert answer.status_code == 401
    assert answer.json()["code"] == "auth-required"
    assert "only for requests from this machine" in answer.json()["detail"]
    assert answer.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    ("client_host", "host", "origin", "local"),
    [
        ("127.0.0.1", "127.0.0.1", None, True),
        ("::1", "::1", None, True),
        ("127.0.0.1", "localhost", "http://localhost:8000", True),
        ("127.0.0.1", "127.0.0.1", "http://127.0.0.1:5173", True),
        ("10.0.0.5", "127.0.0.1", None, False),  # another machine
        ("127.0.0.1", "evil.example", None, False),  # DNS rebinding: a page's own name
        ("127.0.0.1", "127.0.0.1", "https://evil.example", False),  # a cross-site form
        ("127.0.0.1", "127.0.0.1", "null", False),  # a sandboxed frame or a file
        (None, "127.0.0.1", None, False),
    ],
)
def test_what_counts_as_a_request_from_this_machine(
    client_host: str | None, host: str, origin: str | None, local: bool
) -> None:
    assert is_local_request(client_host, host, origin) is local


def test_a_web_page_on_this_machine_gets_no_local_session(client: TestClient) -> None:
    answer = client.post(
        "/api/tokens", json={"name": "stolen"}, headers={"origin": "https://evil.example"}
    )
    assert answer.status_code == 401
    assert answer.json()["code"] == "auth-required"


DEMO_RUN = {"arena": "hbench-demo", "declarative": {"agent": "oracle"}}


@pytest.mark.parametrize(
    "page",
    [
        {"origin": "http://localhost:5555"},  # another port on this machine
        {"origin": "http://127.0.0.1:8000"},  # even the service's own origin: pages use forms
        {"sec-fetch-site": "same-site"},
        {"sec-fetch-site": "cross-site"},
    ],
)
def test_a_web_page_may_not_change_anything_through_the_api_as_the_local_user(
    client: TestClient, db: Session, page: dict[str, str]
) -> None:
    refused = client.post("/api/local-runs", json=DEMO_RUN, headers=page)
    assert (refused.status_code, refused.json()["code"]) == (403, "csrf-refused")
    assert "send an API token" in refused.json()["detail"]
    assert db.scalar(text("SELECT count(*) FROM issued_runs")) == 0
    # Reading is no change: a page can't read another origin's answer anyway.
    assert client.get("/api/local-runs", headers=page).status_code == 200


def test_a_program_on_this_machine_and_an_api_token_still_change_things(
    client: TestClient, make_token: TokenFactory
) -> None:
    assert client.post("/api/local-runs", json=DEMO_RUN).status_code == 201
    token = make_token("alice")
    headers = {**bearer(token), "origin": "http://localhost:5555"}
    assert client.post("/api/local-runs", json=DEMO_RUN, headers=headers).status_code == 201


def test_github_mode_has_no_local_session(settings: Settings) -> None:
    with TestClient(create_app(github_settings(settings)), **LOCAL) as client:
        answer = client.get("/api/me")
    assert answer.status_code == 401
    assert answer.json()["code"] == "auth-required"
    assert "Account settings" in answer.json()["detail"]


def test_github_mode_takes_api_tokens(settings: Settings, make_token: TokenFactory) -> None:
    token = make_token("alice")
    with TestClient(create_app(github_settings(settings)), **LOCAL) as client:
        answer = client.get("/api/me", headers=bearer(token))
    assert answer.status_code == 200
    assert answer.json()["login"] == "alice"


def test_a_token_is_shown_once_and_stored_as_its_hash(
    client: TestClient, remote: TestClient, db: Session
) -> None:
    created = client.post("/api/tokens", json={"name": "  laptop  "})
    assert created.status_code == 201
    assert created.headers["cache-control"] == "no-store"
    body = created.json()
    token = body["token"]
    assert token.startswith("hpg_")
    assert body["name"] == "laptop"
    assert body["prefix"] == token[:12]
    assert body["last_used_at"] is None

    row = db.scalars(select(ApiToken)).one()
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
    for table in ("accounts", "api_tokens"):
        dump = str(db.execute(text(f"SELECT * FROM {table}")).all())  # noqa: S608  # fixed names
        assert token not in dump and token[4:] not in dump

    listed = client.get("/api/tokens").json()["tokens"]
    assert listed == [{k: v for k, v in body.items() if k != "token"}]

    me = remote.get("/api/me", headers=bearer(token))
    assert me.status_code == 200
    assert me.json()["login"] == "local"
    assert me.json()["signed_in_with"] == "token"
    assert remote.get("/api/tokens", headers=bearer(token)).json()["tokens"][0]["last_used_at"]


def test_tokens_are_listed_newest_first_and_only_their_owners(
    remote: TestClient, make_token: TokenFactory
) -> None:
    first = make_token("alice", "first")
    make_token("alice", "second")
    make_token("bob", "bobs")
    names = [t["name"] for t in remote.get("/api/tokens", headers=bearer(first)).json()["tokens"]]
    assert names == ["second", "first"]


def test_a_revoked_token_stops_working_at_once(
    remote: TestClient, make_token: TokenFactory
) -> None:
    token, spare = make_token("alice", "doomed"), make_token("alice", "spare")
    doomed_id = next(
        t["id"]
        for t in remote.get("/api/tokens", headers=bearer(spare)).json()["tokens"]
        if t["name"] == "doomed"
    )
    assert remote.delete(f"/api/tokens/{doomed_id}", headers=bearer(spare)).status_code == 204

    answer = remote.get("/api/me", headers=bearer(token))
    assert answer.status_code == 401
    assert answer.json()["code"] == "token-revoked"
    assert [
        t["name"] for t in remote.get("/api/tokens", headers=bearer(spare)).json()["tokens"]
    ] == ["spare"]
    # Revoking again is no error: the token is revoked either way.
    assert remote.delete(f"/api/tokens/{doomed_id}", headers=bearer(spare)).status_code == 204


def test_a_token_revokes_itself(remote: TestClient, make_token: TokenFactory) -> None:
    token = make_token()
    token_id = remote.get("/api/tokens", headers=bearer(token)).json()["tokens"][0]["id"]
    assert remote.delete(f"/api/tokens/{token_id}", headers=bearer(token)).status_code == 204
    assert remote.get("/api/me", headers=bearer(token)).json()["code"] == "token-revoked"


def test_nobody_revokes_another_accounts_token(
    remote: TestClient, make_token: TokenFactory
) -> None:
    alice, bob = make_token("alice"), make_token("bob")
    alices_id = remote.get("/api/tokens", headers=bearer(alice)).json()["tokens"][0]["id"]
    answer = remote.delete(f"/api/tokens/{alices_id}", headers=bearer(bob))
    assert answer.status_code == 404
    assert answer.json()["code"] == "token-not-found"
    assert remote.get("/api/me", headers=bearer(alice)).status_code == 200


def test_an_api_token_cannot_make_more_tokens(
    remote: TestClient, client: TestClient, make_token: TokenFactory
) -> None:
    token = make_token()
    for caller in (remote, client):  # a token wins over the local session, too
        answer = caller.post("/api/tokens", json={"name": "more"}, headers=bearer(token))
        assert answer.status_code == 403
        assert answer.json()["code"] == "session-required"


@pytest.mark.parametrize(
    ("header", "hint"),
    [
        (f"Bearer {new_api_token()}", "unknown"),
        (f"Bearer {new_run_token()}", "hpg-run-token"),
        ("Bearer hpg_short", "not an hbench API token"),
        ("Basic YWxpY2U6c2VjcmV0", "Bearer hpg_"),
        ("Bearer", "Bearer hpg_"),
    ],
    ids=["unknown", "run-token", "short", "basic", "empty"],  # stable: tokens are random
)
def test_a_bad_authorization_header_is_refused(
    remote: TestClient, client: TestClient, header: str, hint: str
) -> None:
    for caller in (remote, client):  # a bad token never falls back to the local session
        answer = caller.get("/api/me", headers={"authorization": header})
        assert answer.status_code == 401
        assert answer.json()["code"] == "token-invalid"
        assert hint in answer.json()["detail"]


def test_a_denied_account_is_refused(
    remote: TestClient, make_token: TokenFactory, db: Session
) -> None:
    token = make_token("mallory")
    db.execute(text("UPDATE accounts SET is_denied = :yes"), {"yes": True})
    db.commit()
    answer = remote.get("/api/me", headers=bearer(token))
    assert answer.status_code == 403
    assert answer.json()["code"] == "account-denied"


def test_logins_are_one_account_whatever_their_case(
    remote: TestClient, make_token: TokenFactory, db: Session
) -> None:
    make_token("Alice")
    make_token("alice")
    assert [a.login for a in db.scalars(select(Account))] == ["Alice"]


def test_last_use_is_recorded_once_a_minute(db: Session, make_token: TokenFactory) -> None:
    token = make_token()
    start = utcnow()
    row = authenticate_api_token(db, token, now=start)
    assert row.last_used_at == start
    authenticate_api_token(db, token, now=start + timedelta(seconds=30))
    assert row.last_used_at == start
    later = start + timedelta(minutes=2)
    authenticate_api_token(db, token, now=later)
    assert row.last_used_at == later


def test_a_refusal_raises_with_its_code(db: Session) -> None:
    with pytest.raises(HbenchError) as refused:
        authenticate_api_token(db, new_api_token())
    assert refused.value.code == "token-invalid"
