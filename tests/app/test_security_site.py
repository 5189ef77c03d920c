"""The site as the service serves it, under the content security policy, in a real
browser: every page loads with no refused script, style or image, and the site's script
still runs (a board's table sorts)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from app.main import create_app
from app.security import POLICY
from app.settings import Settings
from tests.browser import chromium
from tests.hbench.cli.service import serving
from tests.sitebuild.conftest import built_site, data_repo

__all__ = ["built_site", "data_repo"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site_url(built_site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The service, on SQLite, serving the built site at `/site/`."""
    settings = Settings(state_dir=tmp_path_factory.mktemp("served") / "state", writer_enabled=False)
    shutil.copytree(built_site, settings.site_dir)
    with serving(create_app(settings)) as url:
        yield f"{url}/site/"


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with chromium() as browser:
        yield browser.new_context(viewport={"width": 1280, "height": 900}).new_page()


def page_kinds(site: Path) -> list[str]:
    """One page of each kind: the first under each folder, by its folders' names with
    the last one (a board's, a model's name) left out."""
    pages = sorted(p.relative_to(site) for p in site.rglob("*.html"))
    kinds = {
        (path.parts[:1] if len(path.parts) > 1 else (), len(path.parts), path.stem == "index"): path
        for path in reversed(pages)
    }
    return sorted(path.as_posix() for path in kinds.values())


def test_every_kind_of_served_page_works_under_the_policy(
    page: Page, site_url: str, built_site: Path
) -> None:
    problems: list[str] = []
    policies: set[str] = set()

    def answered(response: Any) -> None:
        if response.status >= 400:
            problems.append(f"HTTP {response.status}: {response.url}")
        if response.url.startswith(site_url):
            policies.add(response.headers.get("content-security-policy", "none"))

    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("response", answered)
    for path in page_kinds(built_site):
        page.goto(site_url + path, wait_until="load")
        assert page.locator("h1").count() == 1, path
    assert len(page_kinds(built_site)) >= 10
    assert problems == [], "refused or failed under the policy:\n" + "\n".join(problems[:20])
    assert policies == {POLICY}


def test_the_sites_script_runs_under_the_policy(page: Page, site_url: str) -> None:
    page.goto(site_url + "boards/hbench-demo/index.html", wait_until="load")
    # The script turns each sortable header into a button; a click sorts by it.
    button = page.locator("table thead th button.sort").first
    assert button.count() == 1, "the site's script did not run"
    button.click()
    assert page.locator("table thead th[aria-sort]").count() == 1
