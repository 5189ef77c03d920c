"""A run page's Redactions section: the values replaced by each rule, beside each file's;
and the run's record keeps the rules' counts only where the upload counted them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from sitebuild.build import build_site

from .datarepo import REDACTION_RULES, REDACTIONS

DEMO = "hbench-demo"


def without(record: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in record.items() if name != key}


def section(html: str) -> str:
    start = html.split('<h2 id="redactions-heading">Redactions</h2>', 1)[1]
    return start.split("</section>", 1)[0]


def test_a_run_page_lists_the_values_each_rule_replaced(built_site: Path) -> None:
    shown = section((built_site / f"boards/{DEMO}/runs/demo-5.html").read_text())
    by_rule = shown.split('id="redaction-rules-table"', 1)[1].split("</table>", 1)[0]

    rows = re.findall(
        r'<tr><td><code>(.*?)</code></td><td data-sort="(\d+)">\d+</td></tr>', by_rule
    )
    assert rows == sorted((rule, str(n)) for rule, n in REDACTION_RULES.items())
    assert "By the rule that found them" in by_rule
    for path, n in REDACTIONS.items():  # the files' table is still there, after the rules'
        assert f'<tr><td><code>{path}</code></td><td data-sort="{n}">{n}</td></tr>' in shown


def test_a_run_recorded_before_rules_were_counted_shows_its_files_alone(
    data_repo: Path, tmp_path: Path
) -> None:
    older = shutil.copytree(data_repo, tmp_path / "data-repo")
    record = older / "boards" / DEMO / "runs" / "demo-5.json"
    record.write_text(json.dumps(without(json.loads(record.read_text()), "redactionRules")))
    build_site(older, tmp_path / "site")

    shown = section((tmp_path / "site" / f"boards/{DEMO}/runs/demo-5.html").read_text())
    assert 'id="redaction-rules-table"' not in shown
    assert 'id="redactions-table"' in shown


def test_the_record_keeps_rule_counts_only_where_there_are_some(data_repo: Path) -> None:
    runs = data_repo / "boards" / DEMO / "runs"
    counted = json.loads((runs / "demo-5.json").read_text())
    older = json.loads((runs / "demo-1.json").read_text())

    assert counted["redactionRules"] == REDACTION_RULES
    assert "redactionRules" not in older  # earlier records keep their bytes
