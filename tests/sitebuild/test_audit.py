"""`hbench audit` on a real data repository: made with the registry's own state changes
(`tests/sitebuild/datarepo.py`), written to disk, then edited the ways a forger or a
broken writer would, and each edit found, named by board, entry or run, and field."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue
from typer.testing import CliRunner

from hbench.cli.main import app
from registry.datarepo.state import Change, count_issued_run
from registry.jsonfile import dumps
from sitebuild.audit import audit_data_repo
from sitebuild.audit_diff import field_name, json_differences
from sitebuild.build import build_site
from tests.sitebuild.datarepo import T0, entry, realistic_state, write_repo

DEMO = "hbench-demo"
TB = "terminal-bench-2-claude-sonnet-4-5"
OCTOCAT = entry("octocat", "oracle").name
CI_ENTRY = entry("octo-org", "oracle", variant="ci")
BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site tests' data repository, with the issued count the service makes when an
    issued run is uploaded (`app.publish.service.count_run`) for its run on CI too."""
    state = count_issued_run(
        realistic_state(), DEMO, CI_ENTRY.key, "issue-ci-1", Change("change-ci", T0)
    )
    return write_repo(state, tmp_path_factory.mktemp("audit") / "data")


@pytest.fixture
def repo(pristine: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(pristine, tmp_path / "data"))


def audit(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        app, ["audit", "--data-repo", str(repo), "--json", "--workers", "1", *args]
    )
    return result.exit_code, json.loads(result.stdout)


def edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(dumps(data))


def words(text: str) -> str:
    """The console's text without the line breaks it wraps at."""
    return " ".join(text.split())


def found(report: dict[str, Any], code: str, **fields: Any) -> list[dict[str, Any]]:
    return [
        d
        for d in report["differences"]
        if d["code"] == code and all(d[k] == v for k, v in fields.items())
    ]


def test_a_repository_the_writer_made_agrees(repo: Path) -> None:
    result = CliRunner().invoke(app, ["audit", "--data-repo", str(repo), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "every board agrees with its runs (4 boards, 9 entries, 12 runs" in words(result.stdout)
    code, report = audit(repo)
    assert code == 0
    assert report["differences"] == []
    assert (report["boards"], report["runs"], report["entries"]) == (4, 12, 9)


def test_an_edited_score_in_a_run_file_names_the_row_and_its_fields(repo: Path) -> None:
    def fail_a_task(run: dict[str, Any]) -> None:
        run["results"]["count-lines"] = [0.0]

    edit(repo / f"boards/{DEMO}/runs/demo-1.json", fail_a_task)
    code, report = audit(repo)
    assert code == 1
    rows = found(report, "audit-row-differs", board=DEMO, item=OCTOCAT)
    fields = {d["field"] for d in rows}
    assert {"score", "runs[demo-1].score", "ciLow", "stderr"} <= fields
    score = next(d for d in rows if d["field"] == "score")
    assert score["held"] > score["recomputed"]
    assert score["path"] == f"boards/{DEMO}/rows.json"
    assert f"board {DEMO} {OCTOCAT} score: holds" in score["message"]
    # The site built from the clone shows rows.json's score; so do its panels.
    site = found(report, "audit-site-differs", board=DEMO, item=OCTOCAT, field="score")
    assert [d["path"] for d in site] == [f"(built from the checkout)/boards/{DEMO}/index.json"]
    assert found(report, "audit-site-differs", board=DEMO, item=OCTOCAT, field="row.score")
    assert found(
        report, "audit-panel-differs", path="(built from the checkout)/leaderboard/index.json"
    )
    # Only that board moved.
    assert {d["board"] for d in report["differences"] if d["board"]} == {DEMO}


def test_an_edited_rows_json_cell_is_named(repo: Path) -> None:
    path = repo / f"boards/{TB}/rows.json"
    table = json.loads(path.read_text())
    leader = table["rows"][0]
    leader["score"], leader["rankGroup"] = 0.99, 1
    table["runsWithdrawn"] = 3
    path.write_text(json.dumps(table))
    code, report = audit(repo)
    assert code == 1
    (cell,) = found(report, "audit-row-differs", board=TB, item=leader["entry"], field="score")
    assert cell["held"] == 0.99
    assert cell["recomputed"] == 0.75  # 9 of the 12 tasks passed
    assert found(report, "audit-board-differs", board=TB, field="runsWithdrawn")
    assert found(report, "audit-site-differs", board=TB, item=leader["entry"], field="score")


def test_a_row_left_out_and_a_row_made_up_are_both_reported(repo: Path) -> None:
    path = repo / f"boards/{TB}/rows.json"
    table = json.loads(path.read_text())
    dropped = table["rows"].pop(1)
    made_up = {**table["rows"][0], "entry": "mallory-oracle-abcdef", "owner": "mallory"}
    table["rows"].insert(0, made_up)
    path.write_text(json.dumps(table))
    code, report = audit(repo)
    assert code == 1
    assert found(report, "audit-row-missing", board=TB, item=dropped["entry"])
    assert found(report, "audit-row-extra", board=TB, item="mallory-oracle-abcdef")
    assert found(report, "audit-row-differs", board=TB, field="position")


def test_flipped_evidence_fields_are_each_reported(repo: Path) -> None:
    def run_on_ci(run: dict[str, Any]) -> None:
        run["evidence"]["ci"] = True  # a local run, never issued

    def issued(run: dict[str, Any]) -> None:
        run["issued"] = True  # no issued run of the entry was ever counted

    def regraded(run: dict[str, Any]) -> None:
        run["evidence"]["regrade"] = "agreed"  # its regrade failed, and the note says so

    edit(repo / f"boards/{DEMO}/runs/demo-1.json", run_on_ci)
    edit(repo / f"boards/{DEMO}/runs/demo-3.json", issued)
    edit(repo / f"boards/{DEMO}/runs/demo-4.json", regraded)
    code, report = audit(repo)
    assert code == 1
    evidence = found(report, "audit-evidence-inconsistent", board=DEMO)
    by_run = {(d["item"], d["field"]) for d in evidence}
    assert {
        ("demo-1", "issued"),
        ("demo-1", "provenance.kind"),
        ("demo-1", "provenance.runner"),
        ("demo-4", "evidence.regradeNote"),
    } <= by_run
    hubot = entry("hubot", "nop")
    assert (hubot.key, "issued") in by_run
    # An issued run also moves its row: the counts and the levels it proves.
    rows = found(report, "audit-row-differs", board=DEMO, item=hubot.name)
    assert {"runsIssuedPublic", "evidence"} <= {d["field"] for d in rows}


def test_a_run_record_at_odds_with_itself_and_with_the_log(repo: Path) -> None:
    def more_rewards(run: dict[str, Any]) -> None:
        run["results"]["hello-file"].append(1.0)
        run["manifestDigest"] = "not-a-digest"

    edit(repo / f"boards/{DEMO}/runs/demo-1.json", more_rewards)
    month = repo / "audit" / f"{T0:%Y-%m}.jsonl"
    lines = month.read_text().splitlines(keepends=True)
    month.write_text("".join(line for line in lines if '"run":"demo-3"' not in line))
    code, report = audit(repo)
    assert code == 1
    assert found(report, "audit-run-inconsistent", item="demo-1", field="results.hello-file")
    assert found(report, "audit-run-inconsistent", item="demo-1", field="trials")
    assert found(report, "audit-digest-differs", item="demo-1", field="manifestDigest")
    assert found(report, "audit-log-missing", item="demo-3", field="audit")


def test_a_built_site_beside_the_clone_is_held_to_its_runs(repo: Path) -> None:
    build_site(repo, repo / "_site", link=False)
    assert audit(repo)[0] == 0

    def other_digest(run: dict[str, Any]) -> None:
        run["manifestDigest"] = "f" * 64

    def other_score(board: dict[str, Any]) -> None:
        board["rows"][0]["score"] = 1.0

    edit(repo / f"_site/boards/{DEMO}/runs/demo-2.json", other_digest)
    edit(repo / f"_site/boards/{DEMO}/index.json", other_score)
    code, report = audit(repo)
    assert code == 1
    held = str(repo / "_site")
    assert report["sites"] == ["(built from the checkout)", held]
    (digest,) = found(report, "audit-digest-differs", item="demo-2")
    assert digest["path"] == f"{held}/boards/{DEMO}/runs/demo-2.json"
    assert digest["held"] == "f" * 64
    assert found(report, "audit-site-differs", board=DEMO, field="score",
                 path=f"{held}/boards/{DEMO}/index.json")  # fmt: skip
    # The checkout itself still agrees: nothing of it is reported.
    assert all(d["path"].startswith(held) for d in report["differences"])


def test_a_run_file_that_does_not_parse_is_reported_with_the_rest(repo: Path) -> None:
    (repo / f"boards/{DEMO}/runs/demo-1.json").write_text('{"id": "demo-1"}\n')
    code, report = audit(repo)
    assert code == 1
    assert found(report, "audit-file-invalid", path=f"boards/{DEMO}/runs/demo-1.json")
    # Left out of the recomputation, its entry's row is reported as differing too.
    assert found(report, "audit-row-differs", board=DEMO, item=OCTOCAT)


def test_the_report_in_words_ends_each_difference_with_its_code(repo: Path) -> None:
    edit(repo / f"boards/{DEMO}/runs/demo-1.json", lambda r: r["results"].update(
        {"count-lines": [0.0]}))  # fmt: skip
    result = CliRunner().invoke(app, ["audit", "--data-repo", str(repo), "--workers", "1"])
    assert result.exit_code == 1
    assert f"board {DEMO} {OCTOCAT} score: holds" in words(result.stderr)
    assert "(audit-row-differs)" in result.stderr
    assert "differences (4 boards" in words(result.stdout)


def test_the_audit_is_the_same_in_python(pristine: Path) -> None:
    report = audit_data_repo(pristine)
    assert report.agrees
    assert report.sites == ("(built from the checkout)",)


def test_json_differences_match_records_by_key_and_say_a_change_of_order() -> None:
    a: JsonValue = {"rows": [{"entry": "x", "score": 1}, {"entry": "y", "score": 0.5}]}
    b: JsonValue = {"rows": [{"entry": "y", "score": 0.5}, {"entry": "x", "score": 1.0}]}
    assert list(json_differences(a, b)) == [(["rows", "order"], ["x", "y"], ["y", "x"])]
    c: JsonValue = {"rows": [{"entry": "x", "score": True}]}
    d: JsonValue = {"rows": [{"entry": "x", "score": 1}]}
    assert [field_name(p) for p, *_ in json_differences(c, d)] == ["rows[x].score"]


def test_the_site_says_how_to_check_it(pristine: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(pristine, site, link=False)
    home = (site / "index.html").read_text()
    board = (site / f"boards/{DEMO}/index.html").read_text()
    assert "run <code>hbench audit</code> in the clone" in home
    assert "<dt>Check it yourself</dt>" in board
    assert "<code>hbench audit</code>: it recomputes this board" in board


def test_the_benchmark_audits_a_writer_made_repository_and_finds_nothing(tmp_path: Path) -> None:
    """bench/audit.py at a small size, for what it prints: never timed here."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "audit.py"), "--runs", "40", "--boards", "4",
         "--repeats", "1", "--dir", str(tmp_path)],
        capture_output=True, text=True, check=False, timeout=600, cwd=BENCH,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the audit found 0 differences (exit 0) -> agrees" in done.stdout
    assert "load + parse JSON:" in done.stdout
    assert "hbench audit, a new process:" in done.stdout


def test_a_site_folder_that_is_no_built_site_is_refused(repo: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["audit", "--data-repo", str(repo), "--site", str(tmp_path / "nowhere")]
    )
    assert result.exit_code == 1
    assert "is not a built site: it has no index.json (audit-file-invalid)" in words(result.stderr)
