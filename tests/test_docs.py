"""Docs are held to the code: every rule code is documented once, and nothing else is."""

from __future__ import annotations

import re
from pathlib import Path

from hbench.codes import CATALOGUE, CODE_NAMES, DOCS_PAGE, Area
from hbench.rule_docs import parse_rule_docs, read_rule_docs

ROOT = Path(__file__).resolve().parents[1]


def documented_codes() -> list[str]:
    text = (ROOT / DOCS_PAGE).read_text()
    # Underscores only for the runs API's codes, which keep the skill document's style.
    return re.findall(r"^### `([a-z0-9_-]+)`$", text, flags=re.MULTILINE)


def test_every_rule_code_is_documented_once() -> None:
    documented = documented_codes()
    duplicated = {code for code in documented if documented.count(code) > 1}
    assert not duplicated, f"documented more than once: {sorted(duplicated)}"
    assert sorted(CODE_NAMES - set(documented)) == [], "codes missing from the docs"
    assert sorted(set(documented) - CODE_NAMES) == [], "docs name codes the code lacks"


def test_the_docs_have_one_section_per_area_in_the_catalogues_order() -> None:
    titles = [section.title for section in read_rule_docs()]
    assert titles == [area.title for area in Area]


def test_each_code_is_documented_under_its_areas_section() -> None:
    for section, area in zip(read_rule_docs(), Area, strict=True):
        documented = [doc.code for doc in section.codes]
        declared = [code for code, _, _ in CATALOGUE[area]]
        assert sorted(set(declared) - set(documented)) == [], f"missing under {area.title!r}"
        assert sorted(set(documented) - set(declared)) == [], f"not of {area.title!r}"


def test_each_code_says_what_it_means_and_how_to_fix_it() -> None:
    for section in read_rule_docs():
        for doc in section.codes:
            assert doc.meaning, f"{doc.code} says nothing before its fix"
            assert doc.fix, f"{doc.code} has no **Fix:**"


def test_the_parser_splits_sections_and_fixes() -> None:
    text = (
        "# Title\n\nIntro.\n\n## One\n\nAbout one.\n\n### `a-code`\nIt broke. **Fix:** mend it.\n"
    )
    (section,) = parse_rule_docs(text)
    assert (section.title, section.intro) == ("One", "About one.")
    assert [(c.code, c.meaning, c.fix) for c in section.codes] == [
        ("a-code", "It broke.", "mend it.")
    ]


def test_every_evidence_level_is_explained_in_the_trust_model() -> None:
    from registry.evidence import LEVELS, TEXTS  # noqa: PLC0415 - this test's own subject

    text = (ROOT / "docs" / "trust.md").read_text()
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    rows = re.findall(r"^\| ([a-z-]+) \|", text, flags=re.MULTILINE)
    for level in LEVELS:
        assert TEXTS[level].title in headings, f"docs/trust.md has no section for {level}"
        assert level in rows, f"docs/trust.md's table has no row for {level}"
