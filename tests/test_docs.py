"""Docs are held to the code: every rule code is documented once, and nothing else is."""

from __future__ import annotations

import re
from pathlib import Path

from hbench.rules import DOCS_PAGE, RULE_CODES

ROOT = Path(__file__).resolve().parents[1]


def documented_codes() -> list[str]:
    text = (ROOT / DOCS_PAGE).read_text()
    # Underscores only for the runs API's codes, which keep the skill document's style.
    return re.findall(r"^### `([a-z0-9_-]+)`$", text, flags=re.MULTILINE)


def test_every_rule_code_is_documented_once() -> None:
    documented = documented_codes()
    duplicated = {code for code in documented if documented.count(code) > 1}
    assert not duplicated, f"documented more than once: {sorted(duplicated)}"
    assert sorted(RULE_CODES - set(documented)) == [], "codes missing from the docs"
    assert sorted(set(documented) - RULE_CODES) == [], "docs name codes the code lacks"


def test_every_evidence_level_is_explained_in_the_trust_model() -> None:
    from registry.evidence import LEVELS, TEXTS  # noqa: PLC0415 - this test's own subject

    text = (ROOT / "docs" / "trust.md").read_text()
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    rows = re.findall(r"^\| ([a-z-]+) \|", text, flags=re.MULTILINE)
    for level in LEVELS:
        assert TEXTS[level].title in headings, f"docs/trust.md has no section for {level}"
        assert level in rows, f"docs/trust.md's table has no row for {level}"
