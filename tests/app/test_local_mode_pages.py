"""A web page on another port of this machine, in a real Chromium, can't act as the local
user: its calls to the JSON API that would change something are refused, and nothing
changes (the local user runs the service, and is its maintainer). A request with no body
needs no CORS preflight, so the browser sends it: abandoning a run, withdrawing a job,
dismissing a report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.browser import chromium
from tests.hbench.cli.service import serving
from tests.http_stub import StubHandler, stub_server

pytestmark = pytest.mark.browser

ATTACK = """<!doctype html><title>elsewhere</title><script>
window.results = [];
async function attack(url) {
  for (const mode of ["cors", "no-cors"]) {
    try {
      const answer = await fetch(url, {method: "POST", mode});
      window.results.push(mode + ":" + answer.status);
    } catch (error) {
      window.results.push(mode + ":failed");
    }
  }
}
</script>"""


class AttackPage(StubHandler):
    def do_GET(self) -> None:
        payload = ATTACK.encode()
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def service_url(tmp_path: Path) -> Iterator[tuple[str, Database]]:
    settings = Settings(state_dir=tmp_path / "state", writer_enabled=False, regrade_enabled=False)
    with serving(create_app(settings)) as url:
        database = Database(settings.effective_database_url)
        try:
            yield url, database
        finally:
            database.dispose()


def test_a_page_on_another_port_cannot_abandon_the_local_users_run(
    service_url: tuple[str, Database],
) -> None:
    url, database = service_url
    body = {"arena": "hbench-demo", "declarative": {"agent": "oracle"}}
    issued = httpx.post(f"{url}/api/local-runs", json=body, timeout=30)  # this machine's hbench
    assert issued.status_code == 201, issued.text
    run_id = issued.json()["run_id"]
    with stub_server(AttackPage) as port, chromium() as browser:
        page = browser.new_page()
        page.goto(f"http://localhost:{port}/")
        page.evaluate(f"attack({json.dumps(f'{url}/api/local-runs/{run_id}/abandon')})")
        results = page.evaluate("window.results")
    assert len(results) == 2, results
    with database.session() as session:
        status = session.scalar(text("SELECT status FROM issued_runs"))
    assert status == "issued", "a page of another origin abandoned the local user's run"
