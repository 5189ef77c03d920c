"""The whole path in a real browser, in GitHub mode: Chromium signs in through the fake
GitHub's OAuth pages, issues a run of the demo board on Run a benchmark, runs its spec
with the real `hbench run` (Harbor in the bubblewrap sandbox), drops the job's folder on
Your bench with the run token pasted, and publishes it from the job's page.

The fake GitHub and the service each listen on a real loopback port, so the browser
follows the same redirects it would between github.com and the service.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import select

from app.db.models import IssuedRun, IssuedRunStatus, Job, JobStatus
from app.db.session import Database
from app.github.client import GitHubKitClient
from app.github.port import get_github
from app.main import create_app
from app.settings import Settings
from hbench.sandbox import IMPORT_PATH
from tests.browser import WAIT_MS, chromium
from tests.fakes.github import FakeGitHub, create_fake_github
from tests.hbench.cli.helpers import hbench, write_spec
from tests.hbench.cli.service import loopback_socket, serving_on, url_of

from ..conftest import NO_REGRADES, github_settings
from ..github.conftest import rsa_keys
from .browser import Console, screenshot, wait_for_upload

__all__ = ["rsa_keys"]

pytestmark = [pytest.mark.browser, pytest.mark.harbor]


@pytest.fixture
def browser() -> Iterator[Browser]:
    with chromium() as browser:
        yield browser


@pytest.fixture
def github(rsa_keys: list[RSAPrivateKey]) -> Iterator[FakeGitHub]:
    """The fake GitHub, served on its own loopback port."""
    sock = loopback_socket()
    fake = FakeGitHub(rsa_keys[0], rsa_keys[1:], url=url_of(sock))
    with serving_on(create_fake_github(fake), sock):
        yield fake


@pytest.fixture
def service(tmp_path: Path, github: FakeGitHub) -> Iterator[tuple[str, Settings]]:
    """The service in GitHub mode as the fake's App, at its own loopback address (its
    public URL, so known before the settings are made), on SQLite."""
    sock = loopback_socket()
    url = url_of(sock)
    fake = github
    served = github_settings(
        Settings(state_dir=tmp_path / "state", **NO_REGRADES),
        github_app_id=fake.app.id,
        github_private_key=fake.app.private_key_pem,
        github_webhook_secret=fake.app.webhook_secret,
        github_client_id=fake.app.client_id,
        github_client_secret=fake.app.client_secret,
        github_api_url=f"{fake.url}/api/v3",
        oidc_issuer=fake.url,
        public_url=url,
        writer_enabled=False,
    )
    app = create_app(served)
    client = GitHubKitClient(
        base_url=f"{fake.url}/api/v3",
        app_id=fake.app.id,
        private_key=fake.app.private_key_pem,
        client_id=fake.app.client_id,
        client_secret=fake.app.client_secret,
        transport=httpx.AsyncHTTPTransport(),
        auto_retry=False,
    )
    app.dependency_overrides[get_github] = lambda: client
    with serving_on(app, sock):
        yield url, served


def test_sign_in_issue_upload_and_publish_in_the_browser(
    browser: Browser, github: FakeGitHub, service: tuple[str, Settings], tmp_path: Path
) -> None:
    url, settings = service
    github.signing_in = github.add_user("octocat")
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=url)
    context.set_default_timeout(WAIT_MS)
    page: Page = context.new_page()
    console = Console(page)
    try:
        page.goto("/run")
        page.get_by_role("link", name="Sign in with GitHub").first.click()
        page.wait_for_url(f"{url}/run")
        expect(page.locator(".who")).to_contain_text("Signed in as octocat")

        page.get_by_label("Board").select_option("hbench-demo")
        # This machine's tests run the demo's trials in the sandbox (Docker's have their own).
        page.get_by_label("Where the trials run").select_option(IMPORT_PATH)
        page.get_by_label("Agent", exact=True).fill("oracle")
        page.get_by_role("button", name="Issue the run").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Your run is issued")
        token = page.locator("#run-token").inner_text()
        run_id = uuid.UUID(page.locator("#run-id").inner_text())
        spec = json.loads(page.locator("#spec").text_content() or "")
        screenshot(page, "e2e-issued")

        folder = tmp_path / "run"
        folder.mkdir()
        ran = hbench("run", "--config", str(write_spec(folder, spec)), cwd=folder)
        assert ran.returncode == 0, ran.stderr
        job_dir = folder / "jobs" / spec["job_name"]

        page.get_by_role("link", name="Your bench").first.click()
        page.get_by_label("Run token").fill(token)
        page.set_input_files("#folder-input", job_dir)
        wait_for_upload(page)
        expect(page.locator("#job-status")).to_have_text("Private")
        screenshot(page, "e2e-uploaded")

        # Exactly: the page also links the rule codes of what it can't do (job-not-published).
        page.get_by_role("link", name="Publish", exact=True).click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Make it public?")
        page.get_by_role("button", name="Publish").click()
        page.wait_for_url("**?done=published")
        expect(page.locator("#job-status")).to_have_text("Published")
        screenshot(page, "e2e-published")
        assert console.problems == []
    finally:
        context.close()

    database = Database(settings.effective_database_url)
    try:
        with database.session() as session:
            job = session.scalars(select(Job)).one()
            assert job.status is JobStatus.PUBLISHED
            assert job.issued_run_id == run_id and job.board == "hbench-demo"
            run = session.get_one(IssuedRun, run_id)
            assert run.status is IssuedRunStatus.UPLOADED
    finally:
        database.dispose()
