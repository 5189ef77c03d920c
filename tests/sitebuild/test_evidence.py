"""Every run's evidence on the built site: labels in plain words on the board's rows and
runs, with what each level proves and doesn't in their titles and in the board's legend; a
run page's Evidence section for each combination, an old record without evidence shown as
self-reported only; whether the board's task files are pinned; and the same in the JSON."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from typing import Any

from registry.evidence import LEVELS, TEXTS
from sitebuild.evidence import labels, run_section

from .datarepo import (
    FAILED_NOTE,
    NO_COPY_NOTE,
    OPEN_BOARD,
    REDACTED_NOTE,
    T0,
    demo_pins,
    entry,
    make_run,
)

DEMO = "boards/hbench-demo"
LABEL = re.compile(r'<span class="badge evidence-([a-z-]+)"(?: title="([^"]*)")?>([^<]+)</span>')
ROW = re.compile(r'<tr data-evidence="([a-z -]*)">(.*?)</tr>', re.S)


def html(site: Path, path: str) -> str:
    return (site / path).read_text()


def page_json(site: Path, path: str) -> Any:
    return json.loads((site / path).read_text())


def shown(fragment: str) -> list[str]:
    """The evidence labels in a piece of a page, by their words."""
    return [text for _level, _title, text in LABEL.findall(fragment)]


def section(page: str, heading_id: str) -> str:
    start = page.index(f'<h2 id="{heading_id}"')
    return page[start : page.index("</section>", start)]


def first(pattern: str, text: str) -> str:
    """The first group of the pattern's first match in the text."""
    found = re.search(pattern, text)
    assert found is not None, (pattern, text)
    return found[1]


def table_rows(page: str, table_id: str) -> list[tuple[str, str]]:
    """Each body row of a table: its `data-evidence` and its HTML."""
    start = page.index(f'id="{table_id}"')
    return ROW.findall(page[start : page.index("</table>", start)])


def test_each_board_row_shows_the_levels_every_public_run_holds(built_site: Path) -> None:
    page = html(built_site, f"{DEMO}/index.html")
    rows = {
        first(r"github\.com/([a-z-]+)", cells): (data, shown(cells))
        for data, cells in table_rows(page, "rows-table")
    }
    assert rows == {
        # demo-1 regraded, demo-2 regraded and issued: the entry holds what both hold.
        "octocat": ("self-reported regraded", ["Self-reported", "Regraded"]),
        # Issued and run on CI, but its outputs were redacted, so not regradable.
        "octo-org": ("self-reported issued run-on-ci", ["Self-reported", "Issued", "Run on CI"]),
        # A record from before evidence was kept.
        "hubot": ("self-reported", ["Self-reported"]),
    }
    # Every label says, in its title, what its level proves and what it doesn't.
    for level, title, text in LABEL.findall(section(page, "rows-heading")):
        words = next(TEXTS[known] for known in LEVELS if known == level)
        assert text == words.title
        assert unescape(title) == (
            f"{words.title}: proves {words.proves}. Does not prove {words.does_not_prove}."
        )


def test_the_board_has_a_legend_of_every_level(built_site: Path) -> None:
    legend = unescape(section(html(built_site, f"{DEMO}/index.html"), "evidence-heading"))
    assert shown(legend) == [TEXTS[level].title for level in LEVELS]
    for level in LEVELS:
        assert f"Proves {TEXTS[level].proves}." in legend
        assert f"Does not prove {TEXTS[level].does_not_prove}." in legend
    assert "verified" not in legend.lower()


def test_the_board_says_whether_the_registry_pins_its_task_files(built_site: Path) -> None:
    demo = unescape(html(built_site, f"{DEMO}/index.html"))
    assert "<dt>Task files</dt><dd>pinned by the registry" in demo
    opened = unescape(html(built_site, f"boards/{OPEN_BOARD}/index.html"))
    assert (
        "<dt>Task files</dt><dd>not pinned by the registry: every run on the board ran the "
        "same task files as the board's first run"
    ) in opened
    assert page_json(built_site, f"{DEMO}/index.json")["board"]["tasksPinned"] is True
    assert page_json(built_site, f"boards/{OPEN_BOARD}/index.json")["board"]["tasksPinned"] is False
    home = {b["slug"]: b for b in page_json(built_site, "index.json")["boards"]}
    assert home["hbench-demo"]["tasksPinned"] and not home[OPEN_BOARD]["tasksPinned"]


def test_the_board_json_carries_each_row_and_runs_evidence(built_site: Path) -> None:
    board = page_json(built_site, f"{DEMO}/index.json")
    rows = {row["owner"]: row for row in board["rows"]}
    assert rows["octocat"]["evidence"] == ["self-reported", "regraded"]
    assert {r["id"]: r["evidence"] for r in rows["octocat"]["runs"]} == {
        "demo-1": ["self-reported", "regraded"],
        "demo-2": ["self-reported", "regraded", "issued"],
    }
    assert {run["id"]: run["evidence"] for run in board["runs"]} == {
        "demo-1": ["self-reported", "regraded"],
        "demo-2": ["self-reported", "regraded", "issued"],
        "demo-3": ["self-reported"],
        "demo-4": ["self-reported"],  # its regrade failed
        "demo-5": ["self-reported", "issued", "run-on-ci"],
        "demo-6": ["self-reported"],
    }
    page = html(built_site, f"{DEMO}/index.html")
    listed = {
        first(r"runs/([a-z0-9-]+)\.html", cells): (data, shown(cells))
        for data, cells in table_rows(page, "runs-table")
    }
    assert listed["demo-2"] == (
        "self-reported regraded issued",
        ["Self-reported", "Regraded", "Issued"],
    )
    assert listed["demo-4"] == ("self-reported", ["Self-reported"])


def test_an_entry_page_lists_each_runs_evidence(built_site: Path) -> None:
    name = entry("octocat", "oracle").name
    page = html(built_site, f"{DEMO}/entries/{name}.html")
    assert [(data, shown(cells)) for data, cells in table_rows(page, "entry-runs")] == [
        ("self-reported regraded", ["Self-reported", "Regraded"]),
        ("self-reported regraded issued", ["Self-reported", "Regraded", "Issued"]),
    ]
    facts = page[page.index("<dt>Evidence</dt>") : page.index("</dd>", page.index("<dt>Evidence"))]
    assert shown(facts) == ["Self-reported", "Regraded"]
    data = page_json(built_site, f"{DEMO}/entries/{name}.json")
    assert [run["evidence"] for run in data["runs"]] == [
        ["self-reported", "regraded"],
        ["self-reported", "regraded", "issued"],
    ]
    assert data["row"]["evidence"] == ["self-reported", "regraded"]


def evidence_of(site: Path, board: str, run: str) -> tuple[list[str], str]:
    """A run page's levels as its Evidence section lists them, and the section's text."""
    page = html(site, f"boards/{board}/runs/{run}.html")
    found = section(page, "evidence-heading")
    listed = found[found.index('id="run-evidence"') : found.index("</dl>")]
    return shown(listed), unescape(found)


def test_a_regraded_issued_run_shows_every_level_and_its_task_digests(built_site: Path) -> None:
    levels, text = evidence_of(built_site, "hbench-demo", "demo-2")
    assert levels == ["Self-reported", "Regraded", "Issued"]
    for level in LEVELS:
        held = TEXTS[level].title in levels
        assert (f"Proves {TEXTS[level].proves}." in text) is held
        assert (f"Does not prove {TEXTS[level].does_not_prove}." in text) is held
    assert "It does not hold: Run on CI." in text
    assert "<dt>Regrade</dt><dd>agreed: the tasks' own verifiers" in text
    assert "<dt>Task files</dt><dd>matched the pins" in text
    assert "<dt>Files agree</dt><dd>yes:" in text
    cells = re.findall(r'<th scope="row">([a-z-]+)</th><td><code>([0-9a-f]+)</code>', text)
    # Each task's digest, its first 12 hex digits; the record (the page's JSON) has them all.
    assert cells == [
        (task, d.removeprefix("sha256:")[:12]) for task, d in sorted(demo_pins().items())
    ]
    page = html(built_site, f"{DEMO}/runs/demo-2.html")
    fact = page[page.index("<dt>Evidence</dt>") : page.index("</dd>", page.index("<dt>Evidence"))]
    assert shown(fact) == levels


def test_an_issued_run_not_regradable_says_why(built_site: Path) -> None:
    levels, text = evidence_of(built_site, "hbench-demo", "demo-5")
    assert levels == ["Self-reported", "Issued", "Run on CI"]
    assert "It does not hold: Regraded." in text
    assert f"<dt>Regrade</dt><dd>not regradable: {REDACTED_NOTE}</dd>" in text


def test_a_failed_regrade_shows_its_note_escaped(built_site: Path) -> None:
    page = html(built_site, f"{DEMO}/runs/demo-4.html")
    assert "&lt;killed&gt; &amp; out of memory" in page and "<killed>" not in page
    levels, text = evidence_of(built_site, "hbench-demo", "demo-4")
    assert levels == ["Self-reported"]
    assert f"<dt>Regrade</dt><dd>failed: {FAILED_NOTE}</dd>" in text


def test_a_run_on_a_board_without_pins_says_its_tasks_were_not_matched(built_site: Path) -> None:
    levels, text = evidence_of(built_site, OPEN_BOARD, "open-1")
    assert levels == ["Self-reported"]
    assert f"not regradable: {NO_COPY_NOTE}" in text
    assert "<dt>Task files</dt><dd>not matched to pins" in text
    assert "Task digests (3 tasks" in text


def test_an_old_record_without_evidence_is_self_reported_only(
    built_site: Path, data_repo: Path
) -> None:
    record = json.loads((data_repo / "boards/hbench-demo-quick/runs/quick-1.json").read_text())
    assert "evidence" not in record and "taskDigests" not in record
    page = html(built_site, "boards/hbench-demo-quick/runs/quick-1.html")
    assert shown(page) == ["Self-reported", "Self-reported"]  # the facts' and the section's
    levels, text = evidence_of(built_site, "hbench-demo-quick", "quick-1")
    assert levels == ["Self-reported"]
    assert "published before the service kept each run's evidence" in text
    assert "It does not hold: Regraded, Issued, Run on CI." in text
    assert "<dt>Regrade</dt><dd>none recorded" in text
    assert "Task digests: not recorded" in text


def test_an_old_issued_record_is_self_reported_and_issued_never_regraded() -> None:
    old = make_run("old-1", "hbench-demo", entry("octocat", "oracle"), {"hello-file": [1.0]},
                   T0, issued=True)  # fmt: skip
    assert old.evidence is None
    text = unescape(run_section(old, tuple(old.levels())))
    listed = text[text.index('id="run-evidence"') : text.index("</dl>")]
    assert shown(listed) == ["Self-reported", "Issued"]
    assert "shows only what its record establishes: self-reported and issued." in text
    assert "It does not hold: Regraded, Run on CI." in text


def test_no_evidence_words_say_verified(built_site: Path) -> None:
    for path in built_site.rglob("*.html"):
        page = path.read_text()
        if 'id="evidence-heading"' in page:
            assert "verified" not in section(page, "evidence-heading").lower(), path


def test_labels_are_made_once_per_combination() -> None:
    assert labels(("self-reported", "issued")) is labels(("self-reported", "issued"))
    assert shown(labels(("issued", "self-reported"))) == ["Self-reported", "Issued"]
