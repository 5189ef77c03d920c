"""Every response carries the content security policy and the other security headers;
`/docs` has a policy of its own that lets Swagger UI start and nothing more."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from fastapi import FastAPI, Response
from fastapi.testclient import TestClient

from app.main import create_app
from app.security import HSTS, POLICY, inline_scripts, install_security_headers, script_hash
from app.settings import Settings
from sitebuild.build import STATE_FILE

from .conftest import LOCAL, github_settings

FIXED = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """The headers don't depend on the database: SQLite only, in the test's folder."""
    return Settings(state_dir=tmp_path / "state")


def assert_secured(headers: Mapping[str, str], policy: str = POLICY) -> None:
    for name, value in FIXED.items():
        assert headers.get(name) == value, name
    assert headers.get("content-security-policy") == policy


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/api/health", 200),
        ("GET", "/openapi.json", 200),
        ("GET", "/api/nowhere", 404),  # the error envelope
        ("POST", "/api/bench/uploads", 415),  # a refusal before the body is read
        ("GET", "/api/bench/jobs", 200),
        ("GET", "/site/", 404),  # the static mount, before the first build
    ],
)
def test_every_kind_of_response_carries_the_headers(
    client: TestClient, method: str, path: str, status: int
) -> None:
    answer = client.request(method, path)
    assert answer.status_code == status, answer.text
    assert_secured(answer.headers)
    assert "strict-transport-security" not in answer.headers  # local mode speaks http


def test_the_built_site_is_served_under_the_policy(client: TestClient, settings: Settings) -> None:
    site = settings.site_dir
    (site / "static").mkdir(parents=True)
    (site / "index.html").write_text("<!doctype html><title>board</title>")
    (site / "static" / "site.js").write_text("document.title;")
    (site / STATE_FILE).write_text("{}")  # the build finished
    for path in ("/site/", "/site/index.html", "/site/static/site.js"):
        answer = client.get(path)
        assert answer.status_code == 200, path
        assert_secured(answer.headers)


def test_the_policy_allows_nothing_inline_nor_from_elsewhere() -> None:
    directives = dict(part.strip().split(" ", 1) for part in POLICY.split(";"))
    assert directives == {
        "default-src": "'self'",
        "script-src": "'self'",
        "style-src": "'self'",
        "img-src": "'self' data:",
        "frame-ancestors": "'none'",
        "base-uri": "'none'",
        "form-action": "'self'",
    }


def test_docs_get_a_policy_that_runs_swagger_uis_own_script_only(client: TestClient) -> None:
    answer = client.get("/docs")
    assert answer.status_code == 200
    policy = answer.headers["content-security-policy"]
    assert policy != POLICY
    assert_secured(answer.headers, policy)
    scripts = inline_scripts(answer.text)
    assert scripts, "Swagger UI's page starts the UI with an inline script"
    script_src = next(d for d in policy.split(";") if d.strip().startswith("script-src"))
    # Exactly the page's own scripts by hash: no 'unsafe-inline', no other hash.
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
    hashes = {word for word in script_src.split() if word.startswith("'sha256-")}
    assert hashes == {script_hash(script) for script in scripts}
    assert "frame-ancestors 'none'" in policy
    # Every outside file the page loads is allowed by the policy, and only those hosts.
    assert "https://cdn.jsdelivr.net" in script_src
    # The other pages keep the strict policy.
    assert client.get("/docs/oauth2-redirect").headers["content-security-policy"] == POLICY


def test_each_header_is_sent_once(client: TestClient) -> None:
    answer = client.get("/openapi.json")
    assert answer.headers.get_list("content-security-policy") == [POLICY]
    assert answer.headers.get_list("x-frame-options") == ["DENY"]


def test_a_page_with_a_policy_of_its_own_keeps_it() -> None:
    own = "default-src 'none'"
    app = FastAPI()

    @app.get("/page")
    def page() -> Response:
        return Response("page", headers={"Content-Security-Policy": own})

    install_security_headers(app, hsts=False)
    with TestClient(app) as client:
        answer = client.get("/page")
    assert answer.headers.get_list("content-security-policy") == [own]
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_github_mode_over_https_adds_strict_transport_security(settings: Settings) -> None:
    app = create_app(github_settings(settings))
    with TestClient(app, **LOCAL) as client:
        answer = client.get("/api/health")
    assert answer.headers["strict-transport-security"] == HSTS
    assert_secured(answer.headers)
