"""The user guides in ../shared/spec/ cut into sentences, each with a short stable id.

docs/guide-promises.md names every sentence by its id; tests/test_guide_promises.py reads
the guides with these functions and holds the table to them. The guides are text exported
from web pages (their line breaks fall where the page had a code span) and one Markdown
file on a single line, so the cut is by rule, the same every time, not by meaning: a
sentence here is what these rules make of the text.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = ROOT.parent / "shared" / "spec"
"""Where the guides are: `shared/` beside the clone, on a machine and in CI alike."""

needs_guides = pytest.mark.skipif(
    not SPEC_DIR.is_dir(),
    reason=f"the user guides are not at {SPEC_DIR} (shared/ beside the clone)",
)
"""For a module of tests that read the guides' words."""

GUIDES = (
    "hbench-issue-a-run.txt",
    "hbench-upload-a-job.txt",
    "hbench-withdraw-delete-report.txt",
    "benchhub-skill.md",
)

TERMINAL = ".!?:|)"
"""A line ending with none of these, and long or followed by a line starting lowercase, was
cut where the page had a code span: it runs on into the next line."""
HEADING_WIDTH = 80

_SENTENCE_END = re.compile(
    # After . ! ? and a space, before what can open a sentence; not after e.g. or i.e.
    r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+(?=[A-Z0-9`\"'*(\[<#])"
    # or a full stop the export ran into the next sentence ("one.Press").
    r"|(?<=[a-z)][.!?])(?=[A-Z][a-z])"
)
_MARKDOWN_BREAK = re.compile(
    # a heading, a quoted line, a table row, a list item after : ; . or opening a label
    r"\s(?=#{1,6}\s)|\s>\s|(?<=\|)\s+(?=\|)"
    r"|(?<=[:;.])\s-\s|\s-\s(?=[A-Z][A-Za-z ]*:)|(?<=[^#\s])\s(?=\d\.\s\*\*)"
)
_BULLET = re.compile(r"^(?:[•*-]|\d+\.)\s+")
_NUMBER_ONLY = re.compile(r"^(?:#+ )?\d+\.$")


@dataclass(frozen=True)
class Sentence:
    guide: str
    text: str

    @property
    def id(self) -> str:
        return sentence_id(self.text)


def sentence_id(text: str) -> str:
    """The first 10 hex of the sha256 of the sentence, its whitespace collapsed."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:10]


def read_guide(name: str) -> list[Sentence]:
    text = (SPEC_DIR / name).read_text(encoding="utf-8")
    blocks = markdown_blocks(text) if name.endswith(".md") else text_blocks(text)
    return [Sentence(name, s) for block in blocks for s in split_block(block)]


def read_guides() -> list[Sentence]:
    return [s for name in GUIDES for s in read_guide(name)]


def text_blocks(text: str) -> list[str]:
    """A page's exported lines, each a block, rejoined where the export cut a sentence."""
    lines = [_BULLET.sub("", line.strip()) for line in text.splitlines()]
    blocks: list[str] = []
    for line in (line for line in lines if line):
        last = blocks[-1] if blocks else ""
        if last and last[-1] not in TERMINAL and runs_on(last, line):
            blocks[-1] = f"{last} {line}"
        else:
            blocks.append(line)
    return blocks


def runs_on(line: str, following: str) -> bool:
    return len(line) > HEADING_WIDTH or not following[0].isupper()


def markdown_blocks(text: str) -> list[str]:
    """Code fences whole; outside them, headings, quoted lines and table rows apart."""
    blocks: list[str] = []
    for index, part in enumerate(text.split("```")):
        if index % 2:
            blocks.append(f"```{part.strip()}```")
            continue
        for piece in re.split(_MARKDOWN_BREAK, part):
            if piece.strip():
                blocks.append(piece.strip())
    return blocks


def split_block(block: str) -> list[str]:
    block = " ".join(block.split())
    if block.startswith(("```", "|")) or block.endswith("|"):
        return [block]
    pieces = [_BULLET.sub("", p) for p in _SENTENCE_END.split(block) if p]
    sentences: list[str] = []
    for piece in pieces:
        if sentences and _NUMBER_ONLY.match(sentences[-1]):
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return sentences
