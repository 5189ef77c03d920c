"""Every built page is well-formed HTML5 with its landmarks, and the stylesheet's palette
keeps text at a contrast of at least 4.5:1 on the backgrounds it is used on."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from sitebuild.build import STATIC
from tests.support.contrast import contrast, parse_colour

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}  # fmt: skip
SVG_LEAVES = {"circle", "line", "polyline", "path", "rect"}


class _Checker(HTMLParser):
    """Tag balance, unique ids, and the references between elements."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.ids: list[str] = []
        self.references: list[str] = []
        self.tags: set[str] = set()
        self.html_lang: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.tags.add(tag)
        if tag == "html":
            self.html_lang = values.get("lang")
        if values.get("id"):
            self.ids.append(str(values["id"]))
        if tag == "label" and values.get("for"):
            self.references.append(str(values["for"]))
        for name in ("aria-labelledby", "aria-describedby"):
            self.references.extend((values.get(name) or "").split())
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID and tag not in SVG_LEAVES:
            self.problems.append(f"<{tag}/> is not a void element")
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            self.problems.append(f"</{tag}> closes a void element")
        elif not self.stack or self.stack[-1] != tag:
            self.problems.append(
                f"</{tag}> does not close <{self.stack[-1] if self.stack else ''}>"
            )
        else:
            self.stack.pop()


def test_every_page_is_well_formed_html5(built_site: Path) -> None:
    pages = sorted(built_site.rglob("*.html"))
    assert pages
    for path in pages:
        text = path.read_text()
        assert text.startswith("<!DOCTYPE html>\n"), path
        checker = _Checker()
        checker.feed(text)
        checker.close()
        assert checker.problems == [] and checker.stack == [], (path, checker.problems)
        assert checker.html_lang == "en", path
        assert {"head", "title", "header", "nav", "main", "footer", "h1"} <= checker.tags, path
        assert re.search(r"<title>[^<]+ · hbench</title>", text), path
        assert '<meta charset="utf-8">' in text, path
        duplicates = {i for i in checker.ids if checker.ids.count(i) > 1}
        assert not duplicates, (path, duplicates)
        assert set(checker.references) <= set(checker.ids), path


def palette() -> dict[str, str]:
    css = (STATIC / "site.css").read_text()
    return dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-fA-F]{3,6});", css))


# Each text colour of the palette with every background it is drawn on.
PAIRS = [
    ("fg", "bg"), ("fg", "surface"), ("muted", "bg"), ("muted", "surface"), ("link", "bg"),
    ("link", "surface"), ("accent", "surface"),
    ("badge-actions-fg", "badge-actions-bg"), ("badge-off-fg", "badge-off-bg"),
    ("badge-source-fg", "badge-source-bg"), ("reproduced-fg", "reproduced-bg"),
    ("badge-self-fg", "badge-self-bg"), ("badge-regraded-fg", "badge-regraded-bg"),
    ("badge-issued-fg", "badge-issued-bg"), ("badge-ci-fg", "badge-ci-bg"),
    ("notice-fg", "notice-bg"),
]  # fmt: skip


def test_the_palette_keeps_text_readable() -> None:
    colours = palette()
    for text, background in PAIRS:
        ratio = contrast(parse_colour(colours[text]), parse_colour(colours[background]))
        assert ratio >= 4.5, f"--{text} on --{background}: {ratio:.2f}"
