"""Debian's headless Chromium, driven by Playwright, for every page test: the site's, the
service's pages' and the content security policy's.

It is Debian's `chromium-headless-shell`: the same Chromium build as the `chromium`
package, as its headless shell, which is what Playwright itself runs for headless
Chromium. The full browser in its headless mode took twice the CPU for the same pages (the
site's page walk: 19.3 core-seconds against 9.7; every page test together, 94 against 71)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright

CHROMIUM = "/usr/bin/chromium-headless-shell"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip

WAIT_MS = 90_000
"""How long a page may take to get where a test waits for it when it waits on the service's
work (an upload's checks), not only on the page: Playwright's 30 s ran out once on a
loaded two-core machine."""


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium, closed afterwards."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
