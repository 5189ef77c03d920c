"""Rendering a page: the Jinja2 environment (templates under `templates/`, autoescaped,
strict about undefined names) with the site's formatters and path functions."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, is_dataclass
from functools import cache, lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from hbench import __version__
from registry.jsonfile import canonical
from sitebuild import entry_page, run_page
from sitebuild import page as paths
from sitebuild.format import FILTERS
from sitebuild.page import PATHS, Page

TEMPLATES = Path(__file__).parent / "templates"

NAV = (
    ("boards", "Boards", paths.home()),
    ("benchmarks", "Benchmarks", paths.benchmarks()),
    ("models", "Models", paths.models()),
    ("leaderboard", "Leaderboard", paths.leaderboard()),
    ("runs", "Pushed runs", paths.pushed_runs()),
    ("audit", "Audit log", paths.audit()),
    ("limits", "Limits", paths.limits()),
    ("take-part", "Take part", paths.take_part()),
)
"""The site's sections: key, label and page."""


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters.update(FILTERS)
    env.globals.update(PATHS)
    env.globals["version"] = __version__
    env.globals["site_header"] = site_header
    return env


def site_header(root: str, path: str, section: str) -> Markup:
    """The header and its navigation, marking the current page or section."""
    current = next((target for _, _, target in NAV if target == path), None)
    return _header(root, current, section)


@lru_cache(maxsize=256)
def _header(root: str, current: str | None, section: str) -> Markup:
    # Cached by depth and section: most pages (runs, entries) share one of a few headers.
    template = environment().get_template("header.html")
    html = template.render(root=root, current=current, section=section, nav=NAV)
    return Markup(html)  # noqa: S704 - rendered by the autoescaping environment


def render_html(page: Page) -> str:
    lean = LEAN.get(page.template)
    if lean is not None:
        return framed(page, lean(page))
    template = environment().get_template(page.template)
    return template.render(
        page=page, root=page.root, title=page.title, section=page.section,
        **context_names(page.context),
    )  # fmt: skip


def context_names(context: object) -> dict[str, object]:
    """A page's context as the names its template reads: each field of its dataclass."""
    if context is None:
        return {}
    if not is_dataclass(context) or isinstance(context, type):
        raise TypeError(f"a page's context is a dataclass, not {type(context).__name__}")
    # Not `asdict`: that copies every nested dataclass (rows, runs) into dicts.
    return {f.name: getattr(context, f.name) for f in fields(context)}


LEAN: Mapping[str, Callable[[Page], Markup]] = {
    run_page.TEMPLATE: run_page.render_main,
    entry_page.TEMPLATE: entry_page.render_main,
}
"""The pages written in Python, not Jinja: a large site's run and entry pages."""


def framed(page: Page, main: Markup) -> str:
    """`main` inside the frame `base.html` gives every page: head, header, footer.

    The frame is rendered once per depth and section with markers where each page's
    title, JSON name and main go; the title and the name are escaped here, and the main
    is `Markup`, made by `sitebuild.html`."""
    values = {_TITLE: escape(page.title), _JSON: escape(page.json_name), _MAIN: main}
    pieces = _frame(page.root, page.section, _current(page.path))
    return "".join([values.get(piece, piece) for piece in pieces])


_TITLE, _JSON, _MAIN = "\x00title\x00", "\x00json\x00", "\x00main\x00"
_SENTINEL = re.compile("(\x00[a-z]+\x00)")


@dataclass(frozen=True)
class _FramePage:
    path: str
    json_name: str = _JSON


def _current(path: str) -> str | None:
    return next((target for _, _, target in NAV if target == path), None)


@lru_cache(maxsize=64)
def _frame(root: str, section: str, current: str | None) -> tuple[str, ...]:
    # Rendered once per depth, section and current page, with markers where each page's
    # title, JSON name and main go: split at them, a page is one join.
    template = environment().from_string(
        '{% extends "base.html" %}{% block main %}{{ main }}{% endblock %}'
    )
    html = template.render(
        page=_FramePage(current or ""), root=root, title=_TITLE, section=section,
        main=Markup(_MAIN),  # noqa: S704 - a marker, replaced by the page's main
    )  # fmt: skip
    return tuple(_SENTINEL.split(html))


def render_json(page: Page) -> str | bytes:
    """The page's JSON: compact, for programs (the data repository's files are indented
    for diffs; these are not diffed, and the compact encoder is several times faster); a
    record's own bytes where the page has them."""
    return page.json_text if page.json_text is not None else canonical(page.data) + "\n"
