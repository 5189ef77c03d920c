"""`docs/security.md` names, for each protection, the tests that prove it: each named test
must exist, so the page can't go on citing a test that was renamed or removed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "security.md"
NAMED = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


def test_every_test_the_security_page_names_exists() -> None:
    named = NAMED.findall(DOC.read_text())
    assert len(named) >= 40, "each protection names the tests that prove it"
    missing = [
        f"{file}::{name}"
        for file, name in named
        if not (ROOT / file).is_file() or name not in defined_tests(ROOT / file)
    ]
    assert missing == []


def test_every_section_names_a_test() -> None:
    sections = re.split(r"^## ", DOC.read_text(), flags=re.MULTILINE)[1:]
    assert len(sections) >= 10
    for section in sections:
        assert NAMED.search(section), f"no test proves: {section.splitlines()[0]}"
