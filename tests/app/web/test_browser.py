"""The pages in a real browser (Debian's headless Chromium), in local mode: each renders
without console errors with every control labelled; a run is issued and its token copied;
a dropped folder is packed in the page and accepted; a refused upload shows its rule code.
Screenshots go to `test-artifacts/screenshots/web/`.

`pytest -m browser` selects these; one browser and one served app serve the whole module.
"""

from __future__ import annotations

import gzip
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import select

from app.db.models import Job, JobStatus
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.browser import chromium
from tests.hbench.cli.service import serving
from tests.support.contrast import contrast, parse_colour

from ..bench.jobs import SealedJob
from ..conftest import NO_REGRADES
from .browser import (
    TEXT_COLOURS,
    UNLABELLED,
    Console,
    screenshot,
    wait_for_upload,
)

pytestmark = pytest.mark.browser

PAGES = {
    "home": "/",
    "run": "/run",
    "bench": "/bench",
    "settings": "/settings",
    "report": "/report",
    "limits": "/limits",
    "maintainers": "/maintainers",
    "guide": "/guide/",
    "guide-put-your-result": "/guide/put-your-result-on-a-board",
    "guide-self-reported-and-issued": "/guide/self-reported-and-issued-runs",
    "guide-cells-and-boards": "/guide/cells-and-boards",
    "guide-what-is-public": "/guide/what-a-board-makes-public",
    "guide-limits": "/guide/limits",
    "guide-security": "/guide/security",
    "guide-troubleshooting": "/guide/troubleshooting",
}


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Local mode on SQLite in the module's state directory."""
    return Settings(
        state_dir=tmp_path_factory.mktemp("web") / "state", writer_enabled=False, **NO_REGRADES
    )


@pytest.fixture(scope="module")
def base_url(settings: Settings) -> Iterator[str]:
    with serving(create_app(settings)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser: Browser, base_url: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=base_url)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    try:
        yield context.new_page()
    finally:
        context.close()


def test_every_page_renders_without_console_errors(page: Page) -> None:
    console = Console(page)
    for name, path in PAGES.items():
        page.goto(path, wait_until="load")
        assert page.locator("h1").count() == 1, path
        for landmark in ("banner", "navigation", "main", "contentinfo"):
            assert page.get_by_role(landmark).count() >= 1, (path, landmark)
        assert page.evaluate(UNLABELLED) == [], path
        pairs = page.evaluate(TEXT_COLOURS)
        assert len(pairs) > 5, path
        low = [
            (p["text"], ratio)
            for p in pairs
            if (ratio := contrast(parse_colour(p["fg"]), parse_colour(p["bg"]))) < 4.5
        ]
        assert low == [], (path, "text below a contrast of 4.5:1")
        screenshot(page, name)
    assert console.problems == []


def test_issuing_a_run_and_copying_its_token(page: Page) -> None:
    console = Console(page)
    page.goto("/run")
    page.get_by_label("Board").select_option("hbench-demo")
    page.get_by_label("Agent", exact=True).fill("oracle")
    page.get_by_role("button", name="Issue the run").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your run is issued")
    token = page.locator("#run-token").inner_text()
    assert token.startswith("hpr_")
    assert token not in page.url
    page.get_by_role("button", name="Copy").first.click()
    # The clipboard's write answers late on a loaded run: it outlasted Playwright's 5 s once.
    expect(page.get_by_role("button", name="Copied")).to_be_visible(timeout=30_000)
    assert page.evaluate("navigator.clipboard.readText()") == token
    screenshot(page, "issued")
    page.goto("/bench")
    assert token not in page.content()
    assert console.problems == []


@pytest.mark.harbor
def test_a_folder_packed_in_the_page_is_accepted(
    page: Page, sealed: SealedJob, settings: Settings
) -> None:
    console = Console(page)
    page.goto("/bench")
    page.set_input_files("#folder-input", sealed.path)
    wait_for_upload(page)
    expect(page.get_by_role("status")).to_contain_text("kept private until you publish it")
    expect(page.locator("#job-status")).to_have_text("Private")
    screenshot(page, "job")
    job_id = page.url.split("/bench/jobs/")[1].split("?")[0]
    database = Database(settings.effective_database_url)
    try:
        with database.session() as session:
            row = session.scalars(select(Job).where(Job.id == uuid.UUID(job_id))).one()
            assert row.job_name == sealed.path.name and row.status is JobStatus.PRIVATE
    finally:
        database.dispose()
    page.goto("/bench")
    page.locator("details.checks summary").first.click()
    expect(page.locator("details.checks code").first).to_be_visible()
    screenshot(page, "bench-with-job")
    assert console.problems == []


def test_a_refused_upload_shows_its_rule_code(page: Page, tmp_path: Path) -> None:
    archive = tmp_path / "empty.tar.gz"
    archive.write_bytes(gzip.compress(bytes(1024)))  # a tar with no member
    console = Console(page)
    page.goto("/bench")
    page.set_input_files("#archive-input", archive)
    refusal = page.locator("#upload-refusal")
    expect(refusal).to_be_visible()
    expect(refusal).to_contain_text("archive-empty")
    screenshot(page, "upload-refused")
    assert console.problems == []


@pytest.mark.harbor
def test_a_long_name_is_packed_with_a_pax_record(
    page: Page, sealed: SealedJob, tmp_path: Path
) -> None:
    """A file whose path is over ustar's 100 bytes reaches the service by its full name:
    the service reads it, and refuses it as a file the manifest does not list."""
    job = sealed.copy_to(tmp_path)
    deep = job / ("notes-" + "n" * 60) / ("about-" + "a" * 60 + ".txt")
    deep.parent.mkdir()
    deep.write_text("added after sealing\n")
    page.goto("/bench")
    page.set_input_files("#folder-input", job)
    refusal = page.locator("#upload-refusal")
    expect(refusal).to_be_visible()
    expect(refusal).to_contain_text("manifest-file-extra")
    expect(refusal).to_contain_text(deep.name)


@pytest.mark.harbor
def test_a_dropped_archive_is_sent_as_it_is(page: Page, sealed_archive: bytes) -> None:
    """A .tar.gz dropped on the drop zone (a DataTransfer made in the page, as a drop from
    the desktop delivers it) is uploaded unchanged and accepted."""
    console = Console(page)
    page.goto("/bench")
    page.evaluate(
        """(bytes) => {
          const file = new File([new Uint8Array(bytes)], "job.tar.gz", {type: "application/gzip"});
          const data = new DataTransfer();
          data.items.add(file);
          const zone = document.getElementById("drop-zone");
          zone.dispatchEvent(new DragEvent("drop", {dataTransfer: data, bubbles: true,
                                                    cancelable: true}));
        }""",
        list(sealed_archive),
    )
    wait_for_upload(page)
    expect(page.locator("#job-status")).to_have_text("Private")
    assert console.problems == []
