"""Troubleshooting (`/guide/troubleshooting`): every rule code, what it means and how to fix
it, one entry per code at `#<code>`.

The page is made from the catalogue (`hbench.codes`: each code's area, status and summary)
and from docs/rule-codes.md (each code's paragraph), so it names every code the service
knows. The API's error envelope links a code's entry in `help`, and the pages link each
code they show to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from app.web.pages import PageDep
from hbench.codes import CATALOGUE, CODES, DOCS_PAGE, GUIDE_PATH, Area, Code
from hbench.rule_docs import CodeDoc, SectionDoc, read_rule_docs

router = APIRouter(include_in_schema=False)

# Raw HTML in the docs is shown as text, never passed through.
markdown = MarkdownIt("commonmark", {"html": False})


@dataclass(frozen=True)
class Entry:
    """One code's entry: the catalogue's facts and the docs' words, as HTML."""

    rule_code: Code
    meaning: Markup
    fix: Markup

    @property
    def code(self) -> str:
        return self.rule_code.code


@dataclass(frozen=True)
class Section:
    area: Area
    intro: Markup
    entries: tuple[Entry, ...]


def rendered(text: str) -> Markup:
    """Markdown from docs/rule-codes.md as HTML for the page: a code in backticks links
    its entry; a link to another docs page keeps its words and names the file, since the
    service does not serve docs/."""
    tokens = markdown.parse(text)
    for token in tokens:
        if token.type == "inline" and token.children is not None:
            token.children = page_tokens(token.children)
    return Markup(markdown.renderer.render(tokens, markdown.options, {}))  # noqa: S704  # escaped by markdown-it, raw HTML off


def page_tokens(children: list[Token]) -> list[Token]:
    out: list[Token] = []
    doc: str | None = None
    for child in children:
        if child.type == "code_inline" and child.content in CODES:
            link = Markup('<a href="#{0}"><code>{0}</code></a>').format(child.content)
            out.append(Token("html_inline", "", 0, content=str(link)))
        elif child.type == "link_open" and is_docs_file(str(child.attrs.get("href", ""))):
            doc = "docs/" + str(child.attrs["href"]).split("#", 1)[0]
        elif child.type == "link_close" and doc is not None:
            note = Markup(" (<code>{}</code>)").format(doc)
            out.append(Token("html_inline", "", 0, content=str(note)))
            doc = None
        else:
            out.append(child)
    return out


def is_docs_file(href: str) -> bool:
    """A link to another page of docs/ (relative, to a `.md` file)."""
    return "://" not in href and href.split("#", 1)[0].endswith(".md")


def sentence(text: str) -> str:
    """A fix as a sentence of its own: the docs write it after `**Fix:**`, in lower case."""
    return text[:1].upper() + text[1:] if text[:1].isalpha() else text


def entry(rule_code: Code, doc: CodeDoc) -> Entry:
    return Entry(rule_code, rendered(doc.meaning), rendered(sentence(doc.fix)))


def sections_of(docs: tuple[SectionDoc, ...]) -> tuple[Section, ...]:
    """The page's sections, one per area in the catalogue's order. A code or an area the
    docs lack is a mistake of the docs (tests/test_docs.py), so the page fails on it."""
    by_title = {section.title: section for section in docs}
    sections = []
    for area in Area:
        doc = by_title.get(area.title)
        if doc is None:
            raise LookupError(f"{DOCS_PAGE} has no section {area.title!r}")
        paragraphs = {code_doc.code: code_doc for code_doc in doc.codes}
        missing = [code for code, _, _ in CATALOGUE[area] if code not in paragraphs]
        if missing:
            raise LookupError(f"{DOCS_PAGE} does not explain {missing} under {area.title!r}")
        entries = tuple(entry(CODES[code], paragraphs[code]) for code, _, _ in CATALOGUE[area])
        sections.append(Section(area, rendered(doc.intro), entries))
    return tuple(sections)


@cache
def troubleshooting_sections() -> tuple[Section, ...]:
    """The page's sections, made once: the catalogue and the docs change only with a release."""
    return sections_of(read_rule_docs())


@router.get(GUIDE_PATH, response_class=HTMLResponse)
def troubleshooting(page: PageDep) -> HTMLResponse:
    return page.render(
        "troubleshooting.html", title="Troubleshooting", sections=troubleshooting_sections()
    )
