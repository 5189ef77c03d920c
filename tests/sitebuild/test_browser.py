"""The built site in a real browser (Debian's headless Chromium): every page renders without
console errors, no link is broken, tables sort and filter (by text, and a board's by
evidence, the two together), and every page type passes basic accessibility checks
(landmarks, labels, names of images, contrast). Screenshots of each page type go to
`test-artifacts/screenshots/`.

`pytest -m browser` selects these; one browser and one HTTP server serve the whole module.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.request import urlopen

import pytest
from playwright.sync_api import Browser, Page

from tests.browser import chromium
from tests.http_stub import stub_server
from tests.support.contrast import contrast, parse_colour

from .datarepo import entry

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
DEMO = "boards/hbench-demo"
PAGE_TYPES = {
    "home": "index.html",
    "board": f"{DEMO}/index.html",
    "board-costed": "boards/terminal-bench-2-claude-sonnet-4-5/index.html",
    "entry": f"{DEMO}/entries/{entry('octocat', 'oracle').name}.html",
    "run": f"{DEMO}/runs/demo-5.html",
    "run-taken-down": f"{DEMO}/runs/demo-6.html",
    "benchmarks": "benchmarks/index.html",
    "benchmark": "benchmarks/swe-bench-verified/index.html",
    "models": "models/index.html",
    "model": "models/claude-sonnet-4-5/index.html",
    "leaderboard": "leaderboard/index.html",
    "audit": "audit/index.html",
    "audit-month": "audit/2026-10.html",
    "limits": "limits/index.html",
    "take-part": "take-part/index.html",
}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def base_url(built_site: Path) -> Iterator[str]:
    """The built site over HTTP on a free loopback port, under a sub-path as on Pages."""
    handler = functools.partial(_Quiet, directory=str(built_site.parent))
    with stub_server(handler) as port:
        yield f"http://127.0.0.1:{port}/{built_site.name}/"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


def test_every_page_renders_without_console_errors(
    page: Page, base_url: str, built_site: Path
) -> None:
    problems: list[str] = []

    def failed(request: Any) -> None:
        # Moving to the next page aborts what the last one was still loading (its icon).
        if request.failure != "net::ERR_ABORTED":
            problems.append(f"{request.failure}: {request.url}")

    def answered(response: Any) -> None:
        if response.status >= 400:
            problems.append(f"HTTP {response.status}: {response.url}")

    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("requestfailed", failed)
    page.on("response", answered)
    pages = sorted(p.relative_to(built_site).as_posix() for p in built_site.rglob("*.html"))
    assert len(pages) > 50
    for path in pages:
        page.goto(base_url + path, wait_until="load")
        assert page.locator("h1").count() == 1, path
    assert problems == []


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)
            if name == "id" and value:
                self.ids.add(value)


def test_a_link_checker_walks_the_whole_site_without_a_broken_link(
    base_url: str, built_site: Path
) -> None:
    seen: dict[str, set[str]] = {}  # page URL -> the ids it holds
    wanted: list[tuple[str, str, str]] = []  # (from, to, fragment)
    queue = [base_url + "index.html"]
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        try:
            with urlopen(url) as answer:  # noqa: S310 - our own server on the loopback
                body = answer.read().decode()
        except HTTPError as error:
            pytest.fail(f"{url}: HTTP {error.code}")
        seen[url] = set()
        if not url.endswith(".html"):
            continue
        parsed = _Links()
        parsed.feed(body)
        seen[url] = parsed.ids
        for link in parsed.links:
            target, fragment = urldefrag(urljoin(url, link))
            if urlsplit(target).netloc != urlsplit(base_url).netloc:
                continue  # other sites are out of reach offline
            assert target.startswith(base_url), f"{url} leaves the site's sub-path: {link}"
            wanted.append((url, target, fragment))
            queue.append(target)
    for source, target, fragment in wanted:
        if fragment:
            assert fragment in seen[target], f"{source}: no #{fragment} in {target}"
    built = {base_url + p.relative_to(built_site).as_posix() for p in built_site.rglob("*.html")}
    assert built <= set(seen), f"pages no link reaches: {sorted(built - set(seen))[:5]}"


def column(page: Page, table: str, index: int) -> list[str]:
    cells = page.locator(f"#{table} tbody tr td:nth-child({index})")
    return [text.strip() for text in cells.all_inner_texts()]


def test_sorting_a_table_by_clicking_its_header(page: Page, base_url: str) -> None:
    page.goto(base_url + "boards/terminal-bench-2-claude-sonnet-4-5/index.html")
    cost = page.locator("#rows-table thead th").nth(9)
    cost.get_by_role("button").click()
    assert cost.get_attribute("aria-sort") == "ascending"
    ascending = column(page, "rows-table", 10)
    assert ascending == sorted(ascending, key=lambda c: float(c.lstrip("$")))
    cost.get_by_role("button").click()
    assert cost.get_attribute("aria-sort") == "descending"
    assert column(page, "rows-table", 10) == ascending[::-1]
    entry_header = page.locator("#rows-table thead th").nth(1)
    entry_header.get_by_role("button").click()
    names = column(page, "rows-table", 2)
    assert names == sorted(names)


def test_filtering_a_table_hides_the_rows_that_do_not_match(page: Page, base_url: str) -> None:
    page.goto(base_url + "index.html")
    box = page.get_by_label("Filter boards")
    assert box.is_visible()
    box.fill("terminal")
    visible = page.locator("#boards-table tbody tr:visible")
    assert visible.count() == 1 and "Terminal-Bench" in visible.inner_text()
    box.fill("")
    assert page.locator("#boards-table tbody tr:visible").count() > 1


def visible_rows(page: Page, table: str) -> list[str]:
    """The first cell's text of each row the filters leave shown."""
    return [
        t.strip()
        for t in page.locator(f"#{table} tbody tr:visible td:first-child").all_inner_texts()
    ]


def test_filtering_by_evidence_keeps_the_rows_that_hold_the_level(
    page: Page, base_url: str
) -> None:
    page.goto(base_url + f"{DEMO}/index.html")
    entries = page.get_by_label("Show", exact=True).first
    assert entries.is_visible()
    assert page.locator("#rows-table tbody tr:visible").count() == 3
    options = ["all entries", "only Regraded", "only Issued", "only Run on CI"]
    assert entries.locator("option").all_inner_texts() == options
    entries.select_option(label="only Regraded")
    shown = page.locator("#rows-table tbody tr:visible")
    assert shown.count() == 1 and "octocat" in shown.inner_text()
    entries.select_option(label="only Issued")
    assert shown.count() == 1 and "octo-org" in shown.inner_text()
    entries.select_option(label="only Run on CI")
    assert shown.count() == 1 and "octo-org" in shown.inner_text()
    entries.select_option(label="all entries")
    assert page.locator("#rows-table tbody tr:visible").count() == 3

    # The runs' select and their search box filter together.
    runs = page.locator("#runs-table-evidence")
    runs.select_option(label="only Regraded")
    assert visible_rows(page, "runs-table") == ["demo-1", "demo-2"]
    runs.select_option(label="only Run on CI")
    assert visible_rows(page, "runs-table") == ["demo-5"]
    runs.select_option(label="only Issued")
    assert visible_rows(page, "runs-table") == ["demo-2", "demo-5"]
    page.get_by_label("Filter runs").fill("demo-5")
    assert visible_rows(page, "runs-table") == ["demo-5"]
    page.get_by_label("Filter runs").fill("demo-1")
    assert visible_rows(page, "runs-table") == []
    assert page.locator('[data-empty-for="runs-table"]').is_visible()
    runs.select_option(label="all runs")
    assert visible_rows(page, "runs-table") == ["demo-1"]
    assert not page.locator('[data-empty-for="runs-table"]').is_visible()
    screenshot_of(page, "board-filtered")


def test_a_board_of_old_records_has_no_regraded_entry(page: Page, base_url: str) -> None:
    page.goto(base_url + "boards/terminal-bench-2-claude-sonnet-4-5/index.html")
    page.locator("#rows-table-evidence").select_option("regraded")
    assert page.locator("#rows-table tbody tr:visible").count() == 0
    assert page.get_by_text("No entry matches.").is_visible()
    page.locator("#rows-table-evidence").select_option("")
    assert page.locator("#rows-table tbody tr:visible").count() == 4


def test_pages_read_fine_without_javascript(browser: Browser, base_url: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(base_url + f"{DEMO}/index.html")
        assert page.locator("#rows-table tbody tr").count() == 3
        assert page.locator("#rows-table thead button").count() == 0  # plain headers
        assert not page.get_by_label("Filter entries").is_visible()  # no box that does nothing
        assert not page.locator("#rows-table-evidence").is_visible()
        assert not page.get_by_text("No entry matches.").is_visible()
        # The labels and their legend read the same without the script.
        assert page.locator("#rows-table .badge.evidence-regraded").count() == 1
        assert page.locator("#evidence-legend dt").all_inner_texts() == [
            "Self-reported",
            "Regraded",
            "Issued",
            "Run on CI",
        ]
    finally:
        context.close()


CHECKS = """() => {
  const landmarks = ["header", "nav", "main", "footer"].filter(t => !document.querySelector(t));
  const unlabelled = [...document.querySelectorAll("input, select, textarea, button")]
    .filter(el => !(el.labels && el.labels.length) && !el.getAttribute("aria-label")
                  && !(el.tagName === "BUTTON" && el.textContent.trim()))
    .map(el => el.outerHTML.slice(0, 80));
  const titled = (svg) => {
    const title = svg.querySelector(":scope > title");
    return title && title.textContent.trim();
  };
  const unnamed = [...document.querySelectorAll("img:not([alt]), svg")]
    .filter(el => el.tagName.toLowerCase() === "img" || !titled(el))
    .map(el => el.outerHTML.slice(0, 80));
  const colours = (el) => {
    const svg = el.closest("svg");
    let back = svg || el;
    let bg = "rgba(0, 0, 0, 0)";
    while (back) {
      bg = getComputedStyle(back).backgroundColor;
      if (!/rgba\\(.*, 0\\)$/.test(bg) && bg !== "transparent") break;
      back = back.parentElement;
      bg = "rgb(255, 255, 255)";
    }
    const style = getComputedStyle(el);
    return [svg ? style.fill : style.color, bg];
  };
  const pairs = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!walker.currentNode.textContent.trim() || seen.has(el)) continue;
    seen.add(el);
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;  // not shown: an SVG <title>, hidden rows
    const [fg, bg] = colours(el);
    pairs.push({text: walker.currentNode.textContent.trim().slice(0, 40), fg, bg});
  }
  return {lang: document.documentElement.lang, landmarks, unlabelled, unnamed, pairs};
}"""


@pytest.mark.parametrize("kind", sorted(PAGE_TYPES))
def test_every_page_type_passes_basic_accessibility_checks(
    page: Page, base_url: str, kind: str
) -> None:
    page.goto(base_url + PAGE_TYPES[kind])
    found = page.evaluate(CHECKS)
    assert found["lang"] == "en"
    assert found["landmarks"] == [], "missing landmarks"
    assert found["unlabelled"] == [], "form controls without a label"
    assert found["unnamed"] == [], "images without alt text or a <title>"
    assert len(found["pairs"]) > 10  # the contrast check saw the page's text
    ratios = [
        (p["text"], p["fg"], p["bg"], contrast(parse_colour(p["fg"]), parse_colour(p["bg"])))
        for p in found["pairs"]
    ]
    low = [r for r in ratios if r[3] < 4.5]
    assert low == [], "text below a contrast of 4.5:1"
    assert page.locator("main h1").count() == 1
    screenshot_of(page, kind)


def screenshot_of(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=True)
