"""Driving the pages in headless Chromium (`tests.browser`), as the site's browser tests
do: a browser per module, a console watcher, and screenshots under
`test-artifacts/screenshots/web/`. The service is served on a real loopback port by
`tests.hbench.cli.service`."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PageTimeout

from tests.browser import WAIT_MS

SCREENSHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots" / "web"


class Console:
    """Errors a page logs, scripts it fails, and requests that fail or are refused.

    An upload the service refuses answers 4xx on purpose (the page shows why), so
    `/bench/upload` may; Chromium's console line for any refused request is left to the
    response check, which sees every one.
    """

    EXPECTED_REFUSALS = ("/bench/upload",)

    def __init__(self, page: Page) -> None:
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(str(error)))
        page.on("requestfailed", self._failed)
        page.on("response", self._answered)

    def _console(self, message: Any) -> None:
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.problems.append(message.text)

    def _failed(self, request: Any) -> None:
        if request.failure != "net::ERR_ABORTED":
            self.problems.append(f"{request.failure}: {request.url}")

    def _answered(self, response: Any) -> None:
        refused_on_purpose = urlsplit(response.url).path in self.EXPECTED_REFUSALS
        if response.status >= 400 and not (response.status < 500 and refused_on_purpose):
            self.problems.append(f"HTTP {response.status}: {response.url}")


def wait_for_upload(page: Page) -> None:
    """Wait for Your bench's upload to land on its job's page, for as long as the service's
    checks may take on a loaded machine; if it doesn't, fail with what the page said."""
    try:
        page.wait_for_url("**/bench/jobs/*?done=uploaded", timeout=WAIT_MS)
    except PageTimeout as timeout:
        said = page.locator("#upload-status").text_content() or ""
        refused = page.locator("#upload-problems").all_inner_texts()
        raise AssertionError(
            f"the upload did not reach its job's page in {WAIT_MS} ms; the page said "
            f"{said!r}, refusals {refused}"
        ) from timeout


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


UNLABELLED = """() => Array.from(document.querySelectorAll('input, select, textarea'))
  .filter((el) => el.type !== 'hidden' && !(el.labels && el.labels.length)
                  && !el.getAttribute('aria-label'))
  .map((el) => el.id || el.name)"""
"""Form controls no label names: each must have one."""

TEXT_COLOURS = """() => {
  const background = (el) => {
    for (let at = el; at; at = at.parentElement) {
      const bg = getComputedStyle(at).backgroundColor;
      if (!/rgba\\(.*, 0\\)$/.test(bg) && bg !== "transparent") return bg;
    }
    return "rgb(255, 255, 255)";
  };
  const pairs = [];
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!walker.currentNode.textContent.trim() || seen.has(el)) continue;
    seen.add(el);
    const box = el.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1) continue;  // not shown
    pairs.push({text: walker.currentNode.textContent.trim().slice(0, 40),
                fg: getComputedStyle(el).color, bg: background(el)});
  }
  return pairs;
}"""
"""Each shown text's colour and the background behind it, for the contrast check."""
