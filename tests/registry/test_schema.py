"""The schema refuses what the registry must not hold."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from registry.schema import Benchmark, Board, HarborAccess, Limits, TaskSet


def benchmark(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "slug": "toy",
        "name": "Toy",
        "harbor": {"status": "native", "dataset": "toy@1.0", "reach": "registry"},
        "taskSets": [{"name": "full", "taskCount": 2, "tasks": ["a", "b"]}],
        "license": {"name": "MIT", "allowsRedistribution": True},
        "metric": "accuracy",
        "metricScale": "percent",
    }
    data.update(changes)
    return data


def test_a_valid_benchmark_parses_with_camel_case_keys() -> None:
    parsed = Benchmark.model_validate(benchmark())
    assert parsed.full.tasks == ["a", "b"]
    assert '"taskCount":2' in parsed.model_dump_json(by_alias=True)


@pytest.mark.parametrize("slug", ["Toy", "toy_1", "-toy", "toy.1", ""])
def test_benchmark_slugs_are_lowercase_letters_digits_and_dashes(slug: str) -> None:
    with pytest.raises(ValidationError):
        Benchmark.model_validate(benchmark(slug=slug))


def test_board_and_model_slugs_may_hold_dots() -> None:
    board = Board.model_validate(
        {
            "slug": "humanevalfix-qwen2.5-coder-7b",
            "benchmark": "humanevalfix",
            "model": "qwen2.5-coder-7b",
        }
    )
    assert board.task_set == "full"
    assert board.attempts == [1, 3]
    assert board.limits == Limits(runs_per_day=5, runs_waiting=2)


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(ValidationError, match="allowsRedistrbution"):
        Benchmark.model_validate(benchmark(license={"name": "MIT", "allowsRedistrbution": True}))


def test_the_first_task_set_is_full_and_names_are_unique() -> None:
    subset = {"name": "quick", "taskCount": 1, "tasks": ["a"]}
    with pytest.raises(ValidationError, match="full"):
        Benchmark.model_validate(benchmark(taskSets=[subset]))
    full = {"name": "full", "taskCount": 2}
    with pytest.raises(ValidationError, match="unique"):
        Benchmark.model_validate(benchmark(taskSets=[full, subset, subset]))


def test_subsets_list_their_tasks_sorted_and_counted() -> None:
    with pytest.raises(ValidationError, match="must list"):
        TaskSet.model_validate({"name": "quick", "taskCount": 1})
    with pytest.raises(ValidationError, match="sorted"):
        TaskSet.model_validate({"name": "quick", "taskCount": 2, "tasks": ["b", "a"]})
    with pytest.raises(ValidationError, match="says 3"):
        TaskSet.model_validate({"name": "quick", "taskCount": 3, "tasks": ["a", "b"]})
    assert TaskSet.model_validate({"name": "full", "taskCount": 500}).tasks is None


def test_harbor_status_and_dataset_agree() -> None:
    with pytest.raises(ValidationError, match="needs"):
        HarborAccess.model_validate({"status": "adapter"})
    with pytest.raises(ValidationError, match="drop"):
        HarborAccess.model_validate({"status": "none", "dataset": "x@1", "reach": "registry"})
    with pytest.raises(ValidationError, match="package"):
        HarborAccess.model_validate({"status": "native", "dataset": "org/x@1", "reach": "registry"})
    assert HarborAccess.model_validate({"status": "none"}).dataset is None


def test_issued_attempts_are_one_or_three() -> None:
    with pytest.raises(ValidationError):
        Board.model_validate({"slug": "b", "benchmark": "x", "model": "m", "attempts": [2]})
