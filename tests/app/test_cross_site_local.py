"""Cross-site requests to local mode: a web page on this machine, of another site or another
port, sends every kind of body a browser sends without a CORS preflight (a form, a
multipart form, `text/plain`, none) and those it can't send without one, to every route
that changes something, marked as a browser marks it (`Origin`, `Sec-Fetch-Site`).
Each is refused with a rule code, and nothing in the database changes
(docs/security.md, "What local mode trusts")."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import Base

SAFE = {"GET", "HEAD", "OPTIONS"}
# Anyone may push a run summary, anonymously (the skill's POST /v1/runs), and webhooks are
# signed by GitHub; neither takes the local session, so neither is the local user's.
NOT_LOCAL = {"/v1/runs", "/api/github/webhooks"}
# Signing out without a sign-in cookie only sends the browser home: there is nothing to
# change (with a cookie, it checks the origin: tests/app/github/test_oauth.py).
NOTHING_TO_CHANGE = {"/auth/logout"}

BODIES: dict[str, dict[str, Any]] = {
    "none": {},
    "form": {
        "content": b"confirm=oracle-k2&reason=spam&login=bob&text=0123456789ab",
        "headers": {"content-type": "application/x-www-form-urlencoded"},
    },
    "multipart": {
        "content": b'--b\r\ncontent-disposition: form-data; name="confirm"\r\n\r\nx\r\n--b--\r\n',
        "headers": {"content-type": "multipart/form-data; boundary=b"},
    },
    "text": {"content": b'{"board": "hbench-demo"}', "headers": {"content-type": "text/plain"}},
    # Not sent without a preflight, which the service answers with no CORS header; tried all
    # the same, as a browser that skipped the preflight would send it.
    "json": {
        "content": b'{"board": "hbench-demo"}',
        "headers": {"content-type": "application/json"},
    },
    "gzip": {"content": b"\x1f\x8b\x08\x00", "headers": {"content-type": "application/gzip"}},
}
MARKS = {
    "another site": {"origin": "https://evil.example", "sec-fetch-site": "cross-site"},
    "another port": {"origin": "http://localhost:5173", "sec-fetch-site": "same-site"},
    "an opaque origin": {"origin": "null", "sec-fetch-site": "cross-site"},
    "origin only": {"origin": "http://127.0.0.1:9999"},
    "fetch metadata only": {"sec-fetch-site": "cross-site"},
    # The service's own origin through the API: its pages change things through their forms,
    # never the API, so even this is a page's script and is refused.
    "this origin through the api": {
        "origin": "http://127.0.0.1:8000",
        "sec-fetch-site": "same-origin",
    },
}
REFUSALS = {"csrf-refused", "csrf-token-invalid", "auth-required", "request-invalid"}
"""`request-invalid`: a page's form from this very origin but in another body than the
browser's own form (`text/plain`), refused before its missing token is looked at."""


def changing_routes(app: FastAPI) -> list[tuple[str, str]]:
    return sorted(
        (method, str(route.path))
        for route in iter_route_contexts(app.routes)
        for method in (getattr(route, "methods", None) or ())
        if method not in SAFE and route.path not in NOT_LOCAL | NOTHING_TO_CHANGE
    )


def filled(path: str) -> str:
    values = {
        "{run_id}": str(uuid.uuid4()),
        "{job_id}": str(uuid.uuid4()),
        "{token_id}": str(uuid.uuid4()),
        "{session_id}": str(uuid.uuid4()),
        "{number}": "1",
        "{login}": "bob",
    }
    for name, value in values.items():
        path = path.replace(name, value)
    return path


def table_counts(db: Session) -> dict[str, int]:
    db.rollback()
    return {
        table.name: db.scalar(select(func.count()).select_from(table)) or 0
        for table in Base.metadata.sorted_tables
    }


def code_of(answer: Any) -> str:
    if answer.headers.get("content-type", "").startswith("application/json"):
        return str(answer.json().get("code"))
    # A page's refusal is the page again, its problem shown with its code.
    return next((code for code in REFUSALS if code in answer.text), answer.text[:200])


def test_the_routes_tried_are_every_route_that_changes_something(app: FastAPI) -> None:
    routes = changing_routes(app)
    paths = {path for _, path in routes}
    assert {"/api/local-runs", "/api/bench/uploads", "/bench/upload", "/run"} <= paths
    assert not paths & NOT_LOCAL
    assert len(routes) >= 30, routes


@pytest.mark.parametrize("mark", sorted(MARKS))
@pytest.mark.parametrize("body", sorted(BODIES))
def test_a_marked_browser_request_changes_nothing_as_the_local_user(
    client: TestClient, db: Session, app: FastAPI, body: str, mark: str
) -> None:
    client.get("/api/local-runs")  # the local user's account, as their first hbench call makes
    before = table_counts(db)
    seen = []
    for method, path in changing_routes(app):
        kind = BODIES[body]
        headers = {**kind.get("headers", {}), **MARKS[mark]}
        answer = client.request(method, filled(path), content=kind.get("content"), headers=headers)
        seen.append((method, path, answer.status_code, code_of(answer)))
    refused = [(m, p, status, code) for m, p, status, code in seen if code in REFUSALS]
    assert refused == seen, [s for s in seen if s not in refused]
    assert all(400 <= status < 500 for _, _, status, _ in seen), seen
    for path in NOTHING_TO_CHANGE:
        client.post(path, content=BODIES[body].get("content"), headers=MARKS[mark])
    assert table_counts(db) == before


def test_a_program_on_this_machine_still_changes_things(client: TestClient, db: Session) -> None:
    # The other side of the same rule: no Origin, no Sec-Fetch-Site, as hbench and curl send.
    body = {"arena": "hbench-demo", "declarative": {"agent": "oracle"}}
    answer = client.post("/api/local-runs", json=body)
    assert answer.status_code == 201, answer.text
    assert table_counts(db)["issued_runs"] == 1


@pytest.mark.parametrize("body", ["none", "form", "text", "multipart"])
def test_an_anonymous_push_from_a_page_is_never_the_local_users(
    client: TestClient, db: Session, body: str
) -> None:
    # POST /v1/runs takes anonymous pushes from anyone; a page's is refused unread (its body
    # is no JSON run summary) and is never attributed to the local user.
    kind = BODIES[body]
    headers = {**kind.get("headers", {}), **MARKS["another site"]}
    answer = client.post("/v1/runs", content=kind.get("content"), headers=headers)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "validation_error"
    assert table_counts(db)["reproduced_runs"] == 0
