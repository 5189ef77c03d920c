"""`registry.check`: the default registry passes; each broken rule is reported with its code."""

from __future__ import annotations

import json
from pathlib import Path

from registry.check import check_folder, datasets_from_harbor_registry
from registry.demo import task_names
from registry.loader import DEFAULT_DIR, load_registry

from .helpers import copy_default_registry


def codes(root: Path, **kwargs: dict[str, list[str]]) -> list[str]:
    return sorted({p.code for p in check_folder(root, kwargs.get("datasets"))})


def edit(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def test_the_default_registry_has_no_problems() -> None:
    assert check_folder(DEFAULT_DIR) == []


def test_the_default_registry_has_the_promised_content() -> None:
    registry = load_registry()
    assert len(registry.benchmarks) >= 10
    for slug in ("terminal-bench-2", "swe-bench-verified", "humanevalfix", "gpqa-diamond",
                 "mmlu-pro", "livecodebench-v6", "hbench-demo"):  # fmt: skip
        assert slug in registry.benchmarks
    assert "humanevalfix-qwen2.5-coder-7b" in registry.boards
    demo = registry.benchmarks["hbench-demo"]
    assert demo.full.tasks == task_names()
    for benchmark in registry.benchmarks.values():
        for score in benchmark.known_scores:
            assert score.source.startswith("https://")


def test_broken_json_and_schema_are_reported(tmp_path: Path) -> None:
    root = copy_default_registry(tmp_path / "reg")
    (root / "models" / "gpt-5.json").write_text("{not json")
    edit(root / "benchmarks" / "aime.json", metricScale="percentage")
    problems = check_folder(root)
    assert {p.code for p in problems} >= {"registry-json-invalid", "registry-schema-invalid"}
    schema = next(p for p in problems if p.code == "registry-schema-invalid")
    assert schema.path == "benchmarks/aime.json"
    assert "metricScale" in schema.message


def test_duplicate_and_mismatched_slugs(tmp_path: Path) -> None:
    root = copy_default_registry(tmp_path / "reg")
    data = json.loads((root / "benchmarks" / "aime.json").read_text())
    (root / "benchmarks" / "aime-copy.json").write_text(json.dumps(data))
    assert codes(root) == ["registry-duplicate-slug", "registry-slug-mismatch"]


def test_boards_must_name_known_benchmarks_models_and_task_sets(tmp_path: Path) -> None:
    root = copy_default_registry(tmp_path / "reg")
    edit(root / "boards" / "hbench-demo.json", benchmark="no-such-bench")
    edit(root / "boards" / "swe-bench-verified-gpt-5.json", model="gpt-99")
    edit(root / "boards" / "hbench-demo-quick.json", taskSet="slow")
    edit(root / "boards" / "gpqa-diamond-claude-haiku-4-5.json", benchmark="mmlu-pro")
    assert codes(root) == [
        "registry-board-not-runnable",
        "registry-unknown-benchmark",
        "registry-unknown-model",
        "registry-unknown-task-set",
    ]


def test_subsets_must_name_real_tasks(tmp_path: Path) -> None:
    root = copy_default_registry(tmp_path / "reg")
    path = root / "benchmarks" / "hbench-demo.json"
    data = json.loads(path.read_text())
    data["taskSets"][1]["tasks"] = ["hello-file", "no-such-task"]
    path.write_text(json.dumps(data))
    problems = check_folder(root)
    assert [p.code for p in problems] == ["registry-unknown-task"]
    assert "no-such-task" in problems[0].message


def test_a_dataset_at_hand_checks_the_full_count_and_subsets(tmp_path: Path) -> None:
    harbor_registry = json.dumps(
        [{"name": "aime", "version": "1.0", "tasks": [{"name": f"aime-{i}"} for i in range(59)]}]
    )
    datasets = datasets_from_harbor_registry(harbor_registry)
    assert codes(DEFAULT_DIR, datasets=datasets) == ["registry-task-count-mismatch"]


def test_an_empty_folder_is_a_problem(tmp_path: Path) -> None:
    assert codes(tmp_path) == ["registry-empty"]


def test_prices_must_name_known_models(tmp_path: Path) -> None:
    root = copy_default_registry(tmp_path / "reg")
    prices = json.loads((root / "prices.json").read_text())
    prices["prices"][0]["model"] = "gpt-99"
    (root / "prices.json").write_text(json.dumps(prices))
    assert codes(root) == ["registry-unknown-model"]
