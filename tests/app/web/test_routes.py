"""The pages' routes without a browser, on SQLite and PostgreSQL: each page renders, forms
call the same services as the API, refusals show their rule codes, and a form without its
token or from another site changes nothing."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.auth.tokens import hash_token
from app.db.models import ApiToken, IssuedRun, IssuedRunStatus, Job, Report
from app.web.pages import STATIC_PATH

from .conftest import ORIGIN, form_token, submit

PAGES = ["/", "/run", "/bench", "/settings", "/report", "/limits", "/maintainers"]
RUN_TOKEN = re.compile(r"hpr_[A-Za-z0-9_-]{43}")
API_TOKEN = re.compile(r"hpg_[A-Za-z0-9_-]{20,}")


def count(db: Session, model: type) -> int:
    db.rollback()  # see what the app committed
    return db.scalar(select(func.count()).select_from(model)) or 0


def issue_demo_run(client: TestClient) -> str:
    answer = submit(client, "/run", "/run", {"board": "hbench-demo", "agent": "oracle"})
    assert answer.status_code == 200, answer.text
    return answer.text


def test_every_page_renders_with_its_landmarks_and_policy(client: TestClient) -> None:
    for path in PAGES:
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.text)
        html = answer.text
        for landmark in ("<header", "<nav", "<main", "<footer", "<h1>"):
            assert landmark in html, (path, landmark)
        assert "Signed in as <strong>local</strong>" in html
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        assert answer.headers["cache-control"] == "no-store"
        assert "<script>" not in html  # scripts come from static files only
    assert client.get(f"{STATIC_PATH}/upload.js").status_code == 200


def test_pages_are_not_in_the_api_schema(client: TestClient) -> None:
    paths = set(client.get("/openapi.json").json()["paths"])
    assert not paths & {*PAGES, "/bench/upload", "/bench/jobs/{job_id}"}


def test_pages_that_need_a_sign_in_say_so_to_others(remote: TestClient) -> None:
    assert remote.get("/").status_code == 200
    for path in ("/bench", "/settings", "/maintainers"):
        answer = remote.get(path)
        assert answer.status_code == 401
        assert "auth-required" in answer.text


def test_issuing_a_run_shows_its_token_once(client: TestClient, db: Session) -> None:
    html = issue_demo_run(client)
    [token] = set(RUN_TOKEN.findall(html))
    [run] = db.scalars(select(IssuedRun))
    assert run.token_hash == hash_token(token)
    assert run.board == "hbench-demo" and run.entry in html
    job = run.spec["job_name"]
    assert f"mkdir -p runs/{job} &amp;&amp; cd runs/{job}" in html
    assert "HARBOR_TELEMETRY=0 hbench run --config spec.json" in html
    assert (
        f"hbench jobs upload --url {ORIGIN}/api/bench/uploads "
        f"-H &#34;hpg-run-token: $HPG_RUN_TOKEN&#34; jobs/{job}"
    ) in html
    bench = client.get("/bench").text
    assert job in bench and token not in bench
    assert f'href="/bench/runs/{run.id}/abandon"' in bench


def test_a_refused_run_shows_every_problem_and_stores_nothing(
    client: TestClient, db: Session
) -> None:
    answer = submit(
        client, "/run", "/run", {"board": "hbench-demo", "agent": "nope", "n_attempts": "2"}
    )
    assert answer.status_code == 422
    assert "run-agent-not-allowed" in answer.text and "run-attempts-refused" in answer.text
    assert 'value="nope"' in answer.text  # the form keeps what was typed
    answer = submit(client, "/run", "/run", {"board": "hbench-demo", "agent": "oracle",
                                             "kwargs": "[1]"})  # fmt: skip
    assert answer.status_code == 422 and "request-invalid" in answer.text
    assert count(db, IssuedRun) == 0


def test_forms_without_their_token_or_from_elsewhere_change_nothing(
    client: TestClient, db: Session
) -> None:
    fields = {"board": "hbench-demo", "agent": "oracle"}
    headers = {"origin": ORIGIN}
    missing = client.post("/run", data=fields, headers=headers)
    assert missing.status_code == 403 and "csrf-token-invalid" in missing.text
    forged = client.post("/run", data={**fields, "csrf_token": "0" * 64}, headers=headers)
    assert forged.status_code == 403 and "csrf-token-invalid" in forged.text
    elsewhere = submit(client, "/run", "/run", fields, origin="https://evil.example")
    # From another site, the request is not the local user's at all.
    assert elsewhere.status_code == 401 and "auth-required" in elsewhere.text
    upload = client.post(
        "/bench/upload", content=b"x", headers={"content-type": "application/gzip", **headers}
    )
    assert upload.status_code == 403 and upload.json()["code"] == "csrf-token-invalid"
    assert count(db, IssuedRun) == 0 and count(db, Job) == 0


def test_abandoning_a_run_from_your_bench(client: TestClient, db: Session) -> None:
    issue_demo_run(client)
    [run] = db.scalars(select(IssuedRun))
    page = f"/bench/runs/{run.id}/abandon"
    assert "Abandon this run?" in client.get(page).text
    answer = submit(client, page, page, {})
    assert answer.status_code == 303 and answer.headers["location"] == "/bench?done=abandoned"
    db.refresh(run)
    assert run.status is IssuedRunStatus.ABANDONED
    again = submit(client, page, page, {})
    assert again.status_code == 409 and "run-not-waiting" in again.text


def test_api_tokens_in_account_settings(client: TestClient, db: Session) -> None:
    answer = submit(client, "/settings", "/settings/tokens", {"name": "laptop"})
    assert answer.status_code == 200
    [token] = set(API_TOKEN.findall(answer.text))
    [row] = db.scalars(select(ApiToken))
    assert row.token_hash == hash_token(token) and row.name == "laptop"
    listed = client.get("/settings").text
    assert "laptop" in listed and token not in listed and f"{row.prefix}…" in listed
    me = client.get("/api/me", headers={"authorization": f"Bearer {token}"})
    assert me.json()["login"] == "local"
    empty = submit(client, "/settings", "/settings/tokens", {"name": ""})
    assert empty.status_code == 422 and "request-invalid" in empty.text
    revoked = submit(client, "/settings", f"/settings/tokens/{row.id}/revoke", {})
    assert revoked.status_code == 303
    db.refresh(row)
    assert row.revoked_at is not None
    assert client.get("/api/me", headers={"authorization": f"Bearer {token}"}).status_code == 401


def test_a_report_needs_a_run_on_a_board(client: TestClient, db: Session) -> None:
    short = submit(client, "/report", "/report", {"entry": "oracle-abc123", "message": "bad"})
    assert short.status_code == 422 and "report-message-length" in short.text
    unknown = submit(
        client, "/report", "/report", {"entry": "oracle-abc123", "message": "the score is 2.0"}
    )
    assert unknown.status_code == 404 and "report-target-unknown" in unknown.text
    assert count(db, Report) == 0


def test_the_deny_list_on_the_maintainers_page(client: TestClient, db: Session) -> None:
    denied = submit(client, "/maintainers", "/maintainers/deny", {"login": "mallory"})
    assert denied.status_code == 303
    assert "mallory" in client.get("/maintainers?done=denied").text
    bad = submit(client, "/maintainers", "/maintainers/deny", {"login": "not a login"})
    assert bad.status_code == 422 and "request-invalid" in bad.text
    itself = submit(client, "/maintainers", "/maintainers/deny", {"login": "local"})
    assert itself.status_code == 409 and "deny-maintainer" in itself.text
    allowed = submit(client, "/maintainers", "/maintainers/allow", {"login": "mallory"})
    assert allowed.status_code == 303
    assert "Nobody is denied." in client.get("/maintainers").text


def test_limits_count_the_callers_runs(client: TestClient) -> None:
    before = client.get("/limits").text
    assert "hbench-demo" in before
    issue_demo_run(client)
    after = client.get("/limits").text
    row = re.search(r"<th scope=\"row\"><span class=\"slug\">hbench-demo</span></th>(.*?)</tr>",
                    after)  # fmt: skip
    assert row is not None
    assert "<td>1 of" in row.group(1)


def test_the_form_token_is_per_sign_in(client: TestClient, remote: TestClient) -> None:
    token = form_token(client.get("/run"))
    assert len(token) == 64
    assert form_token(remote.get("/run")) == ""
