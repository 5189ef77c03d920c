"""docs/rule-codes.md read as data: its sections, and each code's paragraph split into what
the code means and how to fix it.

The page's shape is the catalogue's (`hbench.codes`): one `## <area title>` section per area,
an optional introduction, then a `### \\`code\\`` heading and one paragraph per code, whose
fix starts at `**Fix:**`. `tests/test_docs.py` holds the page to the catalogue through
`read_rule_docs`, and the service's Troubleshooting page is made from what it returns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from hbench.codes import DOCS_PAGE

ROOT = Path(__file__).resolve().parents[1]
FIX = "**Fix:**"
CODE_HEADING = re.compile(r"^### `([a-z0-9_-]+)`$")


@dataclass(frozen=True)
class CodeDoc:
    """One code's paragraph, as Markdown: what it means, and how to fix it ("" if the
    paragraph has no `**Fix:**`)."""

    code: str
    meaning: str
    fix: str


@dataclass(frozen=True)
class SectionDoc:
    """One `##` section: its title, the Markdown before its first code, and its codes."""

    title: str
    intro: str
    codes: tuple[CodeDoc, ...]


def parse_rule_docs(text: str) -> tuple[SectionDoc, ...]:
    """The sections of a rule-code page, in its order; text before the first section (the
    page's own introduction) is not part of any."""
    sections: list[tuple[str, list[str], list[tuple[str, list[str]]]]] = []
    for line in text.splitlines():
        heading = CODE_HEADING.match(line)
        if line.startswith("## "):
            sections.append((line[3:].strip(), [], []))
        elif not sections:
            continue
        elif heading:
            sections[-1][2].append((heading.group(1), []))
        elif sections[-1][2]:
            sections[-1][2][-1][1].append(line)
        else:
            sections[-1][1].append(line)
    return tuple(
        SectionDoc(title, "\n".join(intro).strip(), tuple(code_doc(c, ls) for c, ls in codes))
        for title, intro, codes in sections
    )


def code_doc(code: str, lines: list[str]) -> CodeDoc:
    meaning, _, fix = "\n".join(lines).strip().partition(FIX)
    return CodeDoc(code, meaning.strip(), fix.strip())


@cache
def read_rule_docs(path: Path = ROOT / DOCS_PAGE) -> tuple[SectionDoc, ...]:
    """The sections of docs/rule-codes.md (read once)."""
    return parse_rule_docs(path.read_text(encoding="utf-8"))
