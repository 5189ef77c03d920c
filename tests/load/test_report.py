"""How the benchmarks' figures become one table: the rows a script hands over through
`HBENCH_BENCH_ROWS`, the printed lines read when it hands over none, and the tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from report import ROWS_VARIABLE, Row, emit, percentile, read_rows
from run_all import markdown_table, rows_from_lines, text_table


def test_rows_go_to_the_named_file_and_come_back_with_their_ratio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "rows.jsonl"
    monkeypatch.setenv(ROWS_VARIABLE, str(target))

    emit([Row("issue", "issue throughput", 30.0, "req/s", "no-op route", 75.0)])
    emit([Row("seal/verify", "seal", 0.9, "s", "sha256sum", 1.5, "≤1.3x", 0.55)])

    first, second = read_rows(target)
    assert (first.figure, first.ratio) == ("issue throughput", pytest.approx(0.4))
    assert (second.ratio, second.goal) == (0.55, "≤1.3x"), "a ratio given is kept"


def test_without_the_variable_a_script_writes_no_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ROWS_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)

    emit([Row("load", "all requests", 20.0, "req/s")])

    assert list(tmp_path.iterdir()) == []


def test_printed_lines_become_rows_against_the_first_figure() -> None:
    printed = [
        "runs 2000, boards 40, 3531 pages, median of 2\n",
        "load + parse JSON:        0.400 s\n",
        "full build, 1 process:    13.200 s (33.00x)\n",
        "pages written: 3531 files\n",
        "rebuild: 1.668 s (goal: under 2 s) -> met\n",
    ]

    rows = rows_from_lines("site_build", printed)

    assert [(r.figure, r.value, r.unit, r.baseline_name) for r in rows] == [
        ("load + parse JSON", 0.4, "s", None),
        ("full build, 1 process", 13.2, "s", "load + parse JSON"),
        ("pages written", 3531.0, "files", None),
    ]
    assert rows[1].ratio == pytest.approx(33.0)


def test_the_tables_align_and_escape_what_markdown_reads() -> None:
    rows = [
        Row("upload client", "hbench jobs upload", 2446.0, "ms", "tar czf | curl", 582.0),
        Row("load", "all requests", 20.3, "req/s"),
    ]

    text = text_table(rows).splitlines()
    markdown = markdown_table(rows).splitlines()

    assert len(text[0]) == len(text[1]), "the rule is as wide as the header"
    assert text[0].index("baseline ") == text[2].index("tar czf"), "columns line up"
    assert "4.20x" in text[2] and "2,446 ms" in text[2]
    assert markdown[2].count(" | ") == 6 and "tar czf \\| curl" in markdown[2]
    assert markdown[1].count("|") == 8


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(n) for n in range(1, 101)]
    assert (percentile(values, 0.5), percentile(values, 0.99)) == (51.0, 100.0)
