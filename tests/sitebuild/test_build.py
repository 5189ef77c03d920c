"""The site built from a realistic data repository: every page with its JSON, the registry
export inside it, honest counts, the audit log, and rebuilds that render only what changed."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from html import unescape
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hbench.errors import HbenchError
from registry.datarepo import layout
from registry.datarepo.state import Change, RepoState, publish_run, withdraw_run
from registry.export import validate_export
from sitebuild.build import Builder, build_site
from sitebuild.config import SiteConfig
from sitebuild.format import NONE
from sitebuild.source import DataFiles, read_data_repo
from sitebuild.state import STATE_FILE
from sitebuild.writer import SPARE_SUFFIX, Writer

from .conftest import SERVICE
from .datarepo import (
    ACTIONS,
    CONFIG,
    DEMO_TASKS,
    OPEN_BOARD,
    REDACTIONS,
    T0,
    entry,
    make_run,
)

DEMO = "hbench-demo"
TB = "terminal-bench-2-claude-sonnet-4-5"


def page_json(site: Path, path: str) -> Any:
    return json.loads((site / path).read_text())


def run_files(data_repo: Path) -> list[Path]:
    return sorted(data_repo.glob("boards/*/runs/*.json"))


def test_every_board_entry_and_run_has_a_page_with_its_json_beside(
    built_site: Path, data_repo: Path
) -> None:
    boards = {p.parent.parent.name for p in run_files(data_repo)} | {
        p.stem for p in (data_repo / "registry/boards").glob("*.json")
    }
    assert OPEN_BOARD in boards
    for board in boards:
        assert (built_site / f"boards/{board}/index.html").is_file()
        assert page_json(built_site, f"boards/{board}/index.json")["board"]["slug"] == board
    entries = set()
    for path in run_files(data_repo):
        board, run = path.parent.parent.name, path.stem
        assert (built_site / f"boards/{board}/runs/{run}.html").is_file()
        # The run's JSON is its record, byte for byte, at the data repository's path.
        assert (built_site / f"boards/{board}/runs/{run}.json").read_text() == path.read_text()
        entries.add((board, json.loads(path.read_text())["entry"]["name"]))
    for board, name in entries:
        assert page_json(built_site, f"boards/{board}/entries/{name}.json")["entry"] == name
    for html in built_site.rglob("*.html"):
        assert html.with_suffix(".json").is_file(), f"{html} has no JSON beside it"


def test_the_board_shows_rank_groups_intervals_honest_counts_and_provenance(
    built_site: Path,
) -> None:
    board = page_json(built_site, f"boards/{DEMO}/index.json")
    assert board["runsWithdrawn"] == 1 and board["runsTakenDown"] == 1
    rows = {row["owner"]: row for row in board["rows"]}
    assert sorted(rows) == ["hubot", "octo-org", "octocat"]  # mona's runs are off the board
    assert [row["rankGroup"] for row in board["rows"]] == sorted(
        r["rankGroup"] for r in rows.values()
    )
    assert (rows["octocat"]["runsIssued"], rows["octocat"]["runsIssuedPublic"]) == (2, 1)
    html = (built_site / f"boards/{DEMO}/index.html").read_text()
    octocat = rows["octocat"]
    assert f"{octocat['ciLow'] * 100:.1f}\N{EN DASH}{octocat['ciHigh'] * 100:.1f}" in html
    assert "1 of 2" in html
    badge = 'title="Issued from GitHub Actions in octo-org/bench-runs">GitHub Actions</span>'
    assert html.count(badge) == 1
    statuses = {r["id"]: r["status"] for r in board["runs"]}
    assert statuses["demo-4"] == "withdrawn" and statuses["demo-6"] == "taken_down"


def test_a_priced_board_draws_score_against_cost_with_its_frontier(built_site: Path) -> None:
    html = (built_site / f"boards/{TB}/index.html").read_text()
    svg = html[html.index('<svg class="chart"') : html.index("</svg>")]
    assert "<title" in svg and "<desc" in svg
    assert 'class="frontier"' in svg
    # openhands costs the most and scores below terminus-2: the one point off the frontier.
    assert svg.count('class="point frontier-point"') == 3
    assert svg.count('class="point"') == 1
    rows = page_json(built_site, f"boards/{TB}/index.json")["rows"]
    assert all(row["costPerTaskUsd"] > 0 for row in rows)


def test_an_entry_page_lists_its_runs_over_time(built_site: Path) -> None:
    name = entry("octocat", "oracle").name
    data = page_json(built_site, f"boards/{DEMO}/entries/{name}.json")
    assert [r["id"] for r in data["runs"]] == ["demo-1", "demo-2"]
    assert data["row"]["runsPublic"] == 2
    html = (built_site / f"boards/{DEMO}/entries/{name}.html").read_text()
    assert 'aria-labelledby="over-time-title over-time-desc"' in html
    assert "demo-1 on 2026-09-28: 80" in html  # the chart's description says what it shows


def test_a_run_page_shows_per_task_rewards_and_where_it_ran(built_site: Path) -> None:
    html = (built_site / f"boards/{DEMO}/runs/demo-5.html").read_text()
    for task in DEMO_TASKS:
        assert f'<th scope="row">{task}</th>' in html
    assert "<td>error</td>" in html  # the last task's trial errored
    assert ACTIONS.commit is not None and ACTIONS.commit in html
    assert "github-hosted" in html
    withdrawn = (built_site / f"boards/{DEMO}/runs/demo-4.html").read_text()
    assert "Withdrawn by its owner" in withdrawn
    taken = (built_site / f"boards/{DEMO}/runs/demo-6.html").read_text()
    assert "score-cannot-be-right" in taken


def test_a_run_page_shows_timings_config_manifest_redactions_and_the_download(
    built_site: Path,
) -> None:
    html = (built_site / f"boards/{DEMO}/runs/demo-5.html").read_text()
    shown = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", html.split("</dl>", 1)[0]))
    # Five tasks, a minute and a half each, one after another.
    assert shown["Ran"].startswith("from <time") and shown["Ran"].endswith(", 7 min 30 s")
    assert '<td data-sort="90.0">1 min 30 s</td></tr>' in html  # each task's time
    assert '<th scope="col" data-type="number">Time</th>' in html
    assert shown["Manifest digest"].startswith(f"<code>{b'demo-5'.hex()}0000")
    assert shown["Redactions"].startswith(
        "3 values replaced with <code>[REDACTED]</code> in 2 files"
    )
    for path, n in REDACTIONS.items():
        assert f'<tr><td><code>{path}</code></td><td data-sort="{n}">{n}</td></tr>' in html
    assert shown["Download"].startswith(
        f'<a href="{SERVICE}/api/bench/jobs/demo-5/download">the redacted job</a>'
    )
    # The settings that differ from Harbor's defaults, escaped.
    shown_config = html.split('<pre class="config"><code>', 1)[1].split("</code></pre>", 1)[0]
    assert "&lt;ci&gt;" in shown_config and json.loads(unescape(shown_config)) == CONFIG
    assert page_json(built_site, f"boards/{DEMO}/runs/demo-5.json")["config"] == CONFIG
    # A run off the board no longer offers its files; an older record says what it lacks.
    withdrawn = (built_site / f"boards/{DEMO}/runs/demo-4.html").read_text()
    assert "<dt>Download</dt><dd>no longer offered: the run is off the board</dd>" in withdrawn
    older = (built_site / "boards/hbench-demo-quick/runs/quick-1.html").read_text()
    assert "<dt>Ran</dt><dd>no trial's times were recorded</dd>" in older
    assert "<dt>Manifest digest</dt><dd>not recorded</dd>" in older
    assert "<dt>Download</dt><dd>not offered for this run</dd>" in older
    assert "<dt>Redactions</dt><dd>none: " in older and "Harbor's defaults" in older
    assert f'<td data-sort="">{NONE}</td></tr>' in older


def test_without_a_service_address_the_download_is_named_not_linked(
    data_repo: Path, tmp_path: Path
) -> None:
    build_site(data_repo, tmp_path / "site")
    html = (tmp_path / "site" / f"boards/{DEMO}/runs/demo-5.html").read_text()
    assert "<code>/api/bench/jobs/demo-5/download</code> on the service that published it" in html


def facts(html: str, heading: str) -> dict[str, str]:
    """The `<dt>`/`<dd>` pairs of the page's section under `heading`."""
    section = html.split(f">{heading}</h2>", 1)[1].split("</section>", 1)[0]
    return dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", section))


def test_a_run_from_actions_shows_its_full_provenance(built_site: Path) -> None:
    html = (built_site / f"boards/{DEMO}/runs/demo-5.html").read_text()
    shown = facts(html, "Where it ran")
    repo = f"https://github.com/{ACTIONS.repository}"
    assert shown["Repository"] == f'<a href="{repo}">{ACTIONS.repository}</a>'
    assert shown["Workflow"] == f"<code>{ACTIONS.workflow}</code>"
    assert shown["Job's workflow"].startswith(f"<code>{ACTIONS.job_workflow_ref}</code>")
    assert shown["Ref"] == "<code>refs/heads/main</code>"
    assert (
        shown["Commit"]
        == f'<a href="{repo}/commit/{ACTIONS.commit}"><code>{ACTIONS.commit}</code></a>'
    )
    assert shown["Actions run"] == f'<a href="{repo}/actions/runs/9876543210">9876543210</a>'
    assert shown["Runner"] == "GitHub-hosted runner (<code>github-hosted</code>)"
    # The run's JSON beside the page is its record, every provenance field included.
    record = page_json(built_site, f"boards/{DEMO}/runs/demo-5.json")
    assert record["provenance"] == ACTIONS.to_json_dict()
    assert record["provenance"]["runId"] == 9876543210
    # The board page keeps the badge on the entry's row, naming the repository.
    board = (built_site / f"boards/{DEMO}/index.html").read_text()
    assert f'title="Issued from GitHub Actions in {ACTIONS.repository}"' in board


def test_a_run_from_before_the_run_id_was_kept_shows_what_it_has(built_site: Path) -> None:
    html = (built_site / f"boards/{DEMO}/runs/demo-1.html").read_text()
    assert "On its owner's machine." in html
    older = ACTIONS.model_copy(update={"run_id": None, "job_workflow_ref": None})
    assert "runId" not in older.to_json_dict() and "jobWorkflowRef" not in older.to_json_dict()


def test_the_static_registry_is_inside_the_site(built_site: Path) -> None:
    root = built_site / "registry"
    files = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.json")}
    assert "index.json" in files and "b/hbench-demo.json" in files
    assert validate_export(files) == []


def test_benchmark_pages_carry_known_scores_and_the_reproduced_panel(built_site: Path) -> None:
    demo = page_json(built_site, "benchmarks/hbench-demo/index.json")
    panel = {(r["modelSlug"], r["harness"]): r for r in demo["reproduced"]}
    # Public oracle runs: demo-1, demo-2, demo-5 on the full board and quick-1 on the quick one.
    oracle = panel[("none", "oracle")]
    assert oracle["runCount"] == 4
    assert (oracle["min"], oracle["max"]) == (60.0, 100.0)
    assert panel[("none", "nop")]["runCount"] == 1
    swe = page_json(built_site, "benchmarks/swe-bench-verified/index.json")
    assert {k["sourceType"] for k in swe["benchmark"]["knownScores"]} == {
        "self_reported", "independent",
    }  # fmt: skip
    html = (built_site / "benchmarks/swe-bench-verified/index.html").read_text()
    assert "https://arxiv.org/abs/2310.06770" in html  # the paper
    assert "self-reported" in html and "https://openai.com/index/introducing-gpt-5/" in html
    assert "Reproduced by the community" in html


def test_the_leaderboard_marks_reproduced_cells(built_site: Path) -> None:
    matrix = page_json(built_site, "leaderboard/index.json")
    cells = {(c["benchmark"], c["model"]): c for c in matrix["cells"]}
    assert cells[("hbench-demo", "none")]["reproduced"]["runCount"] == 5
    assert cells[("terminal-bench-2", "claude-sonnet-4-5")]["reproduced"]["runCount"] == 4
    gpt5 = cells[("swe-bench-verified", "gpt-5")]
    assert gpt5["reproduced"] is None and gpt5["known"]["value"] == 74.9
    html = (built_site / "leaderboard/index.html").read_text()
    assert html.count('<td class="reproduced">') == 2


def test_the_audit_log_shows_take_downs_with_reason_and_note(built_site: Path) -> None:
    months = {m["month"] for m in page_json(built_site, "audit/index.json")["months"]}
    assert months == {"2026-09", "2026-10"}
    events = page_json(built_site, "audit/2026-10.json")["events"]
    take_down = next(e for e in events if e["action"] == "take_down")
    assert take_down["reason"] == "score-cannot-be-right"
    html = (built_site / "audit/2026-10.html").read_text()
    assert "every task passed in under a second" in html
    assert f'href="../boards/{DEMO}/runs/demo-6.html"' in html


def test_limits_and_take_part_pages(built_site: Path) -> None:
    limits = page_json(built_site, "limits/index.json")
    demo = next(b for b in limits["boards"] if b["slug"] == DEMO)
    assert (demo["runsPerDay"], demo["runsWaiting"]) == (20, 5)
    assert limits["general"]["runTokenHours"] == 48
    take_part = (built_site / "take-part/index.html").read_text()
    assert f"{SERVICE}/api/bench/uploads" in take_part
    assert "id-token: write" in take_part


def test_no_page_holds_a_secret_or_names_a_reporter(built_site: Path) -> None:
    for path in built_site.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert not re.search(r"hp[gr]_[A-Za-z0-9]", text), path
            assert "reporter" not in text.lower(), path


def test_links_are_relative_and_land_on_built_files(built_site: Path) -> None:
    for html in built_site.rglob("*.html"):
        for target in re.findall(r'(?:href|src)="([^"]+)"', html.read_text()):
            if target.startswith(("https://", "http://")):
                continue
            assert not target.startswith("/"), f"{html}: absolute link {target}"
            local = target.split("#", 1)[0]
            if local:
                assert (html.parent / local).resolve().is_file(), f"{html}: broken {target}"


def copy_repo(data_repo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(data_repo, tmp_path / "data"))


def apply(repo: Path, change: Any, *args: Any) -> None:
    """Apply one of the registry's state changes to the checkout, as the writer does."""
    before = RepoState(read_data_repo(repo))
    after = change(before, *args)
    for path, text in after.diff(before).items():
        target = repo / path
        if text is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)


def test_a_rebuild_after_one_run_renders_its_board_and_the_global_pages(
    data_repo: Path, tmp_path: Path
) -> None:
    repo, out = copy_repo(data_repo, tmp_path), tmp_path / "site"
    first = build_site(repo, out)
    assert first.full
    untouched = out / f"boards/{TB}/runs/tb-1.html"
    stamp = untouched.stat().st_mtime_ns
    assert build_site(repo, out).units_rendered == 0  # nothing changed: nothing rendered

    run = make_run("demo-7", DEMO, entry("lisa", "oracle"), {t: [1.0] for t in DEMO_TASKS},
                   T0.replace(month=10, day=20))  # fmt: skip
    apply(repo, publish_run, run, Change("c-new", run.published_at))
    again = build_site(repo, out)
    assert (again.full, again.units_rendered, again.files_removed) == (False, 2, 0)
    assert (out / f"boards/{DEMO}/runs/demo-7.html").is_file()
    assert untouched.stat().st_mtime_ns == stamp
    rows = page_json(out, f"boards/{DEMO}/index.json")["rows"]
    assert rows[0]["owner"] == "lisa" and rows[0]["score"] == 1.0
    assert "demo-7" in (out / "audit/2026-10.html").read_text()

    apply(repo, withdraw_run, DEMO, "demo-7", Change("c-withdraw", run.published_at))
    build_site(repo, out)
    assert "lisa" not in {r["owner"] for r in page_json(out, f"boards/{DEMO}/index.json")["rows"]}
    assert "Withdrawn by its owner" in (out / f"boards/{DEMO}/runs/demo-7.html").read_text()


def test_files_of_pages_that_no_longer_exist_are_removed(data_repo: Path, tmp_path: Path) -> None:
    repo, out = copy_repo(data_repo, tmp_path), tmp_path / "site"
    build_site(repo, out)
    # Published runs are never deleted; a board folder removed by hand still must not
    # leave pages behind.
    shutil.rmtree(repo / layout.board_dir(OPEN_BOARD))
    # A successor a stopped build left beside one of them goes with it.
    (out / f"boards/{OPEN_BOARD}/index.html.next").write_text("half a page")
    report = build_site(repo, out)
    assert report.files_removed == 6  # board, entry and run pages, each with its JSON
    assert not [p for p in (out / f"boards/{OPEN_BOARD}").rglob("*") if p.is_file()]


def test_a_change_of_configuration_renders_everything(data_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(data_repo, out)
    report = build_site(data_repo, out, SiteConfig(service_url="https://elsewhere.example"))
    assert report.full and report.units_rendered == len(
        json.loads((out / STATE_FILE).read_text())["units"]
    )
    assert (
        "https://elsewhere.example/api/bench/uploads" in (out / "take-part/index.html").read_text()
    )


def test_a_build_that_stops_half_way_is_redone(data_repo: Path, tmp_path: Path) -> None:
    repo, out = copy_repo(data_repo, tmp_path), tmp_path / "site"
    build_site(repo, out)
    run = make_run("demo-8", DEMO, entry("lisa", "oracle"), {t: [0.0] for t in DEMO_TASKS},
                   T0.replace(month=10, day=21))  # fmt: skip
    apply(repo, publish_run, run, Change("c-8", run.published_at))

    class DiskFull(Writer):
        def write(self, path: str, text: str | bytes) -> None:
            if path.endswith("demo-8.html"):
                raise OSError("disk full")
            super().write(path, text)

    with pytest.raises(OSError, match="disk full"):
        Builder(writer=DiskFull).build(repo, out)
    assert build_site(repo, out).units_rendered == 2
    assert (out / f"boards/{DEMO}/runs/demo-8.html").is_file()


class CountedFiles(DataFiles):
    """The data repository's files, noting each run file read."""

    runs_read: ClassVar[list[str]] = []

    def raw(self, path: str) -> bytes:
        if "/runs/" in path:
            self.runs_read.append(path)
        return super().raw(path)


def test_a_rebuild_reads_only_the_boards_whose_files_changed(
    data_repo: Path, tmp_path: Path
) -> None:
    builder = Builder(settled_ns=0)  # trust every stat at once
    repo, out = copy_repo(data_repo, tmp_path), tmp_path / "site"
    builder.build(repo, out)
    run = make_run("demo-9", DEMO, entry("lisa", "oracle"), {t: [1.0] for t in DEMO_TASKS},
                   T0.replace(month=10, day=22))  # fmt: skip
    apply(repo, publish_run, run, Change("c-9", run.published_at))
    counted = replace(builder, files=CountedFiles)
    read = CountedFiles.runs_read
    read.clear()
    assert counted.build(repo, out).units_rendered == 2
    assert read and {path.rpartition("/")[0] for path in read} == {layout.runs_dir(DEMO)}
    read.clear()
    assert counted.build(repo, out).units_rendered == 0
    assert read == []
    # A record changed in place, its size the same: its modification time tells.
    record = repo / layout.run_file(DEMO, "demo-1")
    with record.open("r+b") as rewritten:
        text = rewritten.read()
        rewritten.seek(0)
        rewritten.write(text.replace(b'"harborVersion": "0.25.0"', b'"harborVersion": "0.25.1"'))
    read.clear()
    assert counted.build(repo, out).units_rendered == 2
    assert {path.rpartition("/")[0] for path in read} == {layout.runs_dir(DEMO)}
    assert "0.25.1" in (out / f"boards/{DEMO}/runs/demo-1.html").read_text()


def test_files_changed_lately_are_read_again_whatever_their_stat(
    data_repo: Path, tmp_path: Path
) -> None:
    builder = Builder(settled_ns=600 * 10**9)  # however slow the machine
    repo, out = copy_repo(data_repo, tmp_path), tmp_path / "site"
    for record in run_files(repo):
        record.touch()
    builder.build(repo, out)
    read = CountedFiles.runs_read
    read.clear()
    assert replace(builder, files=CountedFiles).build(repo, out).units_rendered == 0
    # Written a moment ago: a change within the clock's tick could keep size and time.
    assert sorted(read) == sorted(str(p.relative_to(repo)) for p in run_files(repo))
    path = layout.run_file(DEMO, "demo-1")
    changed = (repo / path).stat().st_mtime_ns
    files = DataFiles(repo, [path])
    assert files.stat_digest([path], settled_before_ns=changed) is None
    settled = files.stat_digest([path], settled_before_ns=changed + 1)
    assert settled is not None and settled == files.stat_digest([path], changed + 1)
    assert files.stat_digest([f"{path}.gone"], changed + 1) is None


def test_the_parallel_build_writes_the_same_site(data_repo: Path, tmp_path: Path) -> None:
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    build_site(data_repo, serial)
    # The test site has only 8 boards: one per process and task, to use the pool.
    report = Builder(workers=2, parallel_min=1, chunk=1).build(data_repo, parallel)
    assert report.units_rendered == len(json.loads((parallel / STATE_FILE).read_text())["units"])
    files = sorted(p.relative_to(serial) for p in serial.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(parallel) for p in parallel.rglob("*") if p.is_file())
    for path in files:
        if path.name != STATE_FILE:
            assert (serial / path).read_bytes() == (parallel / path).read_bytes(), path


def test_run_records_are_linked_and_never_written_through(data_repo: Path, tmp_path: Path) -> None:
    repo, out = copy_repo(data_repo, tmp_path), tmp_path / "site"
    build_site(repo, out)
    record = repo / layout.run_file(DEMO, "demo-1")
    copied = out / f"boards/{DEMO}/runs/demo-1.json"
    assert copied.stat().st_ino == record.stat().st_ino  # one file, no second inode
    before = record.read_bytes()
    # A build without links (the service's) replaces the linked file with a new one: the
    # record stays.
    config = SiteConfig(service_url="https://elsewhere.example")
    assert build_site(repo, out, config, link=False).full
    assert copied.stat().st_ino != record.stat().st_ino
    assert record.read_bytes() == before == copied.read_bytes()


def test_a_rebuild_replaces_each_file_whole(data_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(data_repo, out)
    board = out / f"boards/{DEMO}/index.html"
    fresh = board.read_text()
    stale = "a longer page than the board's own " * 2000
    board.write_text(stale)
    # A symbolic link where a page goes is replaced; what it pointed at is left alone.
    elsewhere = tmp_path / "elsewhere.html"
    elsewhere.write_text("not the site's")
    home = out / "index.html"
    home.unlink()
    home.symlink_to(elsewhere)
    with board.open() as reader:  # a request being served while the site is rebuilt
        build_site(data_repo, out, full=True)
        assert reader.read() == stale  # the old page, whole
    assert board.read_text() == fresh
    assert not home.is_symlink() and home.read_text().startswith("<!DOCTYPE html>")
    assert elsewhere.read_text() == "not the site's"
    assert not list(out.rglob("*.next"))  # no successor left beside its file


def test_a_new_page_appears_whole(data_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html.next").write_text("left by a build that stopped half-way")
    written: list[str] = []

    class Noted(Writer):
        def put(self, target: str, data: bytes) -> None:
            written.append(target)
            super().put(target, data)

    Builder(writer=Noted).build(data_repo, out)
    # Written under the spare name and renamed: the page's own name shows no half page.
    assert written and all(target.endswith(SPARE_SUFFIX) for target in written)
    assert (out / "index.html").read_text().startswith("<!DOCTYPE html>")
    assert not list(out.rglob("*.next"))


def test_a_folder_that_is_not_a_data_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HbenchError) as refused:
        build_site(tmp_path, tmp_path / "site")
    assert refused.value.code == "site-data-invalid"


def test_a_run_file_that_does_not_parse_is_named(data_repo: Path, tmp_path: Path) -> None:
    repo = copy_repo(data_repo, tmp_path)
    broken = repo / layout.run_file(DEMO, "demo-3")
    broken.write_text(broken.read_text().replace('"nAttempts": 1', '"nAttempts": 0'))
    with pytest.raises(HbenchError) as refused:
        build_site(repo, tmp_path / "site")
    assert refused.value.code == "site-data-invalid"
    assert refused.value.problems[0].path == layout.run_file(DEMO, "demo-3")


@pytest.mark.parametrize(
    ("path", "damage"),
    [
        (layout.run_file(DEMO, "demo-2"), b'"jobId": "job-\xff'),  # not UTF-8
        (layout.run_file(DEMO, "demo-2"), b'"jobId": ['),  # not JSON
        (layout.rows_file(DEMO), b'"\xfe'),
    ],
)
def test_a_file_that_is_not_json_text_is_named(
    data_repo: Path, tmp_path: Path, path: str, damage: bytes
) -> None:
    repo = copy_repo(data_repo, tmp_path)
    broken = repo / path
    data = broken.read_bytes()
    broken.write_bytes(data[: len(data) // 2] + damage + data[len(data) // 2 :])
    with pytest.raises(HbenchError) as refused:
        build_site(repo, tmp_path / "site")
    assert refused.value.code == "site-data-invalid"
    assert refused.value.problems[0].path == path


def test_a_file_gone_since_it_was_listed_is_named(data_repo: Path, tmp_path: Path) -> None:
    repo = copy_repo(data_repo, tmp_path)
    files = read_data_repo(repo)
    gone = layout.run_file(DEMO, "demo-2")
    (repo / gone).unlink()
    with pytest.raises(HbenchError) as refused:
        files.raw(gone)
    assert refused.value.code == "site-data-invalid"
    assert refused.value.problems[0].path == gone
