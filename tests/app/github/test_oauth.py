"""Signing in with GitHub through the fake's OAuth pages: the state check, the account by
GitHub id, the session cookie's flags, signing out, and forms from other sites refused."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from http.cookies import SimpleCookie

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx2 import Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.auth.sessions import SESSION_COOKIE, STATE_COOKIE
from app.clock import get_clock
from app.db.models import Account, utcnow
from app.github.client import GitHubKitClient
from app.github.port import get_github
from app.main import create_app
from app.settings import Settings
from tests.fakes.github import FakeGitHub
from tests.fakes.github.state import FakeUser

from ..conftest import LOCAL, REMOTE
from .conftest import SERVICE_URL


def cookie_of(answer: Response, name: str) -> dict[str, str | bool]:
    """A Set-Cookie of the answer, with its attributes (lower-cased names)."""
    for header in answer.headers.get_list("set-cookie"):
        jar: SimpleCookie = SimpleCookie()
        jar.load(header)
        if name in jar:
            morsel = jar[name]
            flags = {key: morsel[key] for key in morsel if morsel[key]}
            return {"value": morsel.value, **flags}
    raise AssertionError(f"no Set-Cookie for {name}: {answer.headers.get_list('set-cookie')}")


def approve(fake_app: FastAPI, location: str) -> str:
    """The fake GitHub's authorize page, approved; returns where it sends the browser."""
    with TestClient(fake_app) as github:
        answer = github.get(location, follow_redirects=False)
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


def sign_in(
    client: TestClient, fake: FakeGitHub, fake_app: FastAPI, user: FakeUser, next_page: str = "/"
) -> Response:
    fake.signing_in = user
    started = client.get("/auth/github/login", params={"next": next_page}, follow_redirects=False)
    assert started.status_code == 303, started.text
    back = approve(fake_app, started.headers["location"])
    return client.get(back.removeprefix(SERVICE_URL), follow_redirects=False)


@pytest.fixture
def alice(fake: FakeGitHub) -> FakeUser:
    return fake.add_user("alice")


def test_signing_in_with_github(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser, db: Session
) -> None:
    fake.signing_in = alice
    started = service_client.get(
        "/auth/github/login", params={"next": "/api/me"}, follow_redirects=False
    )
    location = started.headers["location"]
    assert location.startswith(f"{fake.url}/login/oauth/authorize?")
    assert f"client_id={fake.app.client_id}" in location
    assert "redirect_uri=http%3A%2F%2F127.0.0.1%3A8000%2Fauth%2Fgithub%2Fcallback" in location
    state = cookie_of(started, STATE_COOKIE)
    assert state["httponly"] is True and state["samesite"] == "lax"
    assert state["path"] == "/auth/github" and "secure" not in state  # loopback

    back = approve(fake_app, location)
    finished = service_client.get(back.removeprefix(SERVICE_URL), follow_redirects=False)
    assert finished.status_code == 303
    assert finished.headers["location"] == "/api/me"
    session = cookie_of(finished, SESSION_COOKIE)
    assert session["httponly"] is True and session["samesite"] == "lax"
    assert session["path"] == "/" and "secure" not in session
    assert cookie_of(finished, STATE_COOKIE)["value"] == ""  # removed

    me = service_client.get("/api/me")
    assert me.status_code == 200
    assert me.json()["login"] == "alice"
    assert me.json()["github_id"] == alice.id
    assert me.json()["signed_in_with"] == "session"
    [account] = db.scalars(select(Account))
    assert (account.login, account.github_id) == ("alice", alice.id)


def test_a_state_that_does_not_match_is_refused(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser, db: Session
) -> None:
    fake.signing_in = alice
    started = service_client.get("/auth/github/login", follow_redirects=False)
    back = approve(fake_app, started.headers["location"])
    forged = back.split("&state=")[0] + "&state=another-state"
    answer = service_client.get(forged.removeprefix(SERVICE_URL), follow_redirects=False)
    assert answer.status_code == 400
    assert answer.json()["code"] == "oauth-state-mismatch"
    assert SESSION_COOKIE not in answer.headers.get("set-cookie", "")
    assert db.scalars(select(Account)).all() == []


def test_a_sign_in_started_in_another_browser_is_refused(
    service: FastAPI,
    service_client: TestClient,
    fake: FakeGitHub,
    fake_app: FastAPI,
    alice: FakeUser,
) -> None:
    fake.signing_in = alice
    started = service_client.get("/auth/github/login", follow_redirects=False)
    back = approve(fake_app, started.headers["location"])
    victim = TestClient(service, **LOCAL)  # no state cookie
    answer = victim.get(back.removeprefix(SERVICE_URL), follow_redirects=False)
    assert answer.json()["code"] == "oauth-state-mismatch"


def test_a_refused_authorisation_signs_nobody_in(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser
) -> None:
    fake.deny_sign_in = True
    answer = sign_in(service_client, fake, fake_app, alice)
    assert answer.status_code == 400
    assert answer.json()["code"] == "oauth-denied"


def test_a_code_is_good_once(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser
) -> None:
    fake.signing_in = alice
    started = service_client.get("/auth/github/login", follow_redirects=False)
    back = approve(fake_app, started.headers["location"]).removeprefix(SERVICE_URL)
    assert service_client.get(back, follow_redirects=False).status_code == 303
    service_client.cookies.set(STATE_COOKIE, cookie_of(started, STATE_COOKIE)["value"], path="/")
    again = service_client.get(back, follow_redirects=False)
    assert again.status_code == 502
    assert again.json()["code"] == "oauth-exchange-failed"


def test_next_stays_on_this_site(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser
) -> None:
    for elsewhere in ("//evil.example/x", "https://evil.example", "/\\evil.example"):
        assert sign_in(service_client, fake, fake_app, alice, elsewhere).headers["location"] == "/"


def test_the_account_follows_the_github_id_through_a_rename(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser, db: Session
) -> None:
    sign_in(service_client, fake, fake_app, alice)
    first = service_client.get("/api/me").json()
    alice.login = "alice-renamed"
    sign_in(service_client, fake, fake_app, alice)
    second = service_client.get("/api/me").json()
    assert second["id"] == first["id"] and second["login"] == "alice-renamed"


def test_a_freed_login_taken_by_someone_else_gets_a_new_account(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser
) -> None:
    sign_in(service_client, fake, fake_app, alice)
    first = service_client.get("/api/me").json()
    alice.login = "alice-moved-on"
    newcomer = fake.add_user("alice")
    sign_in(service_client, fake, fake_app, newcomer)
    second = service_client.get("/api/me").json()
    assert second["id"] != first["id"]
    assert (second["login"], second["github_id"]) == ("alice", newcomer.id)
    sign_in(service_client, fake, fake_app, alice)
    assert service_client.get("/api/me").json()["id"] == first["id"]


def test_an_account_made_for_a_login_is_linked_at_first_sign_in(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser, db: Session
) -> None:
    made = ensure_account(db, "Alice")  # `hbench-app tokens create --login Alice`
    sign_in(service_client, fake, fake_app, alice)
    me = service_client.get("/api/me").json()
    assert me["id"] == str(made.id) and me["github_id"] == alice.id


def test_maintainers_are_named_by_the_settings(
    github_mode: Settings, github_client: GitHubKitClient, fake: FakeGitHub, fake_app: FastAPI
) -> None:
    alice = fake.add_user("alice")
    app = create_app(github_mode.model_copy(update={"maintainers": (alice.id,)}))
    app.dependency_overrides[get_github] = lambda: github_client
    with TestClient(app, **LOCAL) as client:
        sign_in(client, fake, fake_app, alice)
        assert client.get("/api/me").json()["is_maintainer"] is True
        sign_in(client, fake, fake_app, fake.add_user("bob"))
        assert client.get("/api/me").json()["is_maintainer"] is False


def test_a_renamed_maintainer_keeps_the_rights_and_whoever_takes_the_login_gets_none(
    github_mode: Settings, github_client: GitHubKitClient, fake: FakeGitHub, fake_app: FastAPI
) -> None:
    alice = fake.add_user("alice")
    app = create_app(github_mode.model_copy(update={"maintainers": (alice.id,)}))
    app.dependency_overrides[get_github] = lambda: github_client
    with TestClient(app, **LOCAL) as client:
        sign_in(client, fake, fake_app, alice)
        first = client.get("/api/me").json()
        assert first["is_maintainer"] is True
        assert client.get("/api/admin/deny").status_code == 200

        alice.login = "alice-renamed"  # on GitHub, who then signs in again
        sign_in(client, fake, fake_app, alice)
        renamed = client.get("/api/me").json()
        assert (renamed["id"], renamed["login"]) == (first["id"], "alice-renamed")
        assert renamed["is_maintainer"] is True
        assert client.get("/api/admin/deny").status_code == 200
        assert client.get("/maintainers").status_code == 200

        mallory = fake.add_user("alice")  # someone else takes the free login
        sign_in(client, fake, fake_app, mallory)
        taker = client.get("/api/me").json()
        assert taker["login"] == "alice" and taker["id"] != first["id"]
        assert taker["is_maintainer"] is False
        refused = client.get("/api/admin/deny")
        assert (refused.status_code, refused.json()["code"]) == (403, "maintainer-only")
        assert client.post("/api/admin/deny", json={"login": "bob"}).status_code == 403
        assert client.get("/maintainers").status_code == 403


def test_a_denied_account_gets_no_session(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser, db: Session
) -> None:
    db.add(Account(login="alice", github_id=alice.id, is_denied=True))
    db.commit()
    answer = sign_in(service_client, fake, fake_app, alice)
    assert answer.status_code == 403
    assert answer.json()["code"] == "account-denied"
    assert SESSION_COOKIE not in answer.headers.get("set-cookie", "")


@pytest.fixture
def public_client(github_mode: Settings, github_client: GitHubKitClient) -> Iterator[TestClient]:
    """The service at a public https URL, reached from another machine."""
    app = create_app(github_mode.model_copy(update={"public_url": "https://hbench.example"}))
    app.dependency_overrides[get_github] = lambda: github_client
    with TestClient(app, **{**REMOTE, "base_url": "https://hbench.example"}) as client:
        yield client


def test_cookies_are_secure_outside_loopback(
    public_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser
) -> None:
    fake.signing_in = alice
    started = public_client.get("/auth/github/login", follow_redirects=False)
    assert cookie_of(started, STATE_COOKIE)["secure"] is True
    assert (
        "redirect_uri=https%3A%2F%2Fhbench.example%2Fauth%2Fgithub%2Fcallback"
        in (started.headers["location"])
    )
    back = approve(fake_app, started.headers["location"])
    finished = public_client.get(
        back.removeprefix("https://hbench.example"), follow_redirects=False
    )
    assert cookie_of(finished, SESSION_COOKIE)["secure"] is True


def test_forms_from_other_sites_are_refused(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser
) -> None:
    sign_in(service_client, fake, fake_app, alice)
    body = {"name": "from a form"}
    for origin in (None, "https://evil.example", "http://127.0.0.1:8001", "null"):
        headers = {} if origin is None else {"origin": origin}
        answer = service_client.post("/api/tokens", json=body, headers=headers)
        assert answer.status_code == 403, origin
        assert answer.json()["code"] == "csrf-refused"
    assert service_client.get("/api/tokens").json()["tokens"] == []
    made = service_client.post("/api/tokens", json=body, headers={"origin": SERVICE_URL})
    assert made.status_code == 201
    assert made.json()["token"].startswith("hpg_")


def test_signing_out_removes_the_session(
    service_client: TestClient, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser
) -> None:
    sign_in(service_client, fake, fake_app, alice)
    refused = service_client.post("/auth/logout", headers={"origin": "https://evil.example"})
    assert refused.json()["code"] == "csrf-refused"
    assert service_client.get("/api/me").status_code == 200
    answer = service_client.post(
        "/auth/logout", headers={"origin": SERVICE_URL}, follow_redirects=False
    )
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    assert cookie_of(answer, SESSION_COOKIE)["value"] == ""
    assert service_client.get("/api/me").status_code == 401


def test_a_session_ends_after_its_lifetime(
    service: FastAPI, fake: FakeGitHub, fake_app: FastAPI, alice: FakeUser
) -> None:
    now = [utcnow()]
    service.dependency_overrides[get_clock] = lambda: lambda: now[0]
    with TestClient(service, **LOCAL) as client:
        sign_in(client, fake, fake_app, alice)
        now[0] += timedelta(days=6)
        assert client.get("/api/me").status_code == 200
        now[0] += timedelta(days=2)
        # The cookie's own expiry is the browser's business; the service checks its own.
        assert client.get("/api/me").status_code == 401


def test_a_forged_session_cookie_is_ignored(service_client: TestClient) -> None:
    service_client.cookies.set(SESSION_COOKIE, "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
    answer = service_client.get("/api/me")
    assert answer.status_code == 401
    assert "sign in with GitHub" in answer.json()["detail"]


def test_local_mode_has_no_github_sign_in(settings: Settings) -> None:
    with TestClient(create_app(settings), **LOCAL) as client:
        answer = client.get("/auth/github/login", follow_redirects=False)
    assert answer.status_code == 503
    assert answer.json()["code"] == "github-not-configured"
