"""`hbench registry check`: every problem of a registry folder, each with its rule code.

The checks are a table of functions over the parsed registry; each returns all of its
failures. The App runs the same checks on registry pull requests.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from hbench.errors import Problem
from registry import demo
from registry.loader import PRICES, Registry, parse_registry, read_folder

Datasets = Mapping[str, Sequence[str]]
"""Datasets at hand: `name@version` to its task names."""

Check = Callable[[Registry, Mapping[str, str], Datasets], list[Problem]]


def bundled_datasets() -> dict[str, list[str]]:
    """The datasets the registry ships, always at hand: the demo (`registry.demo`)."""
    return {demo.DATASET_REF: demo.task_names()}


def datasets_from_harbor_registry(text: str) -> dict[str, list[str]]:
    """Task names per `name@version` from a Harbor registry.json (the legacy list format)."""
    found: dict[str, list[str]] = {}
    for spec in json.loads(text):
        ref = f"{spec['name']}@{spec['version']}"
        found[ref] = sorted(str(task["name"]) for task in spec.get("tasks", []))
    return found


def check_folder(root: Path, datasets: Datasets | None = None) -> list[Problem]:
    """Every problem of the registry folder `root`, in a stable order."""
    return check_files(read_folder(root), datasets)


def check_files(files: Mapping[str, str], datasets: Datasets | None = None) -> list[Problem]:
    """Every problem of a registry given as relative path to text."""
    at_hand: dict[str, Sequence[str]] = {**bundled_datasets(), **(datasets or {})}
    registry, problems = parse_registry(files)
    for check in CHECKS:
        problems.extend(check(registry, files, at_hand))
    return sorted(problems, key=lambda p: (p.path or "", p.code, p.message))


def _not_empty(registry: Registry, files: Mapping[str, str], _: Datasets) -> list[Problem]:
    if any(path.startswith("benchmarks/") for path in files):
        return []
    return [Problem("registry-empty", "the registry has no benchmarks/*.json file")]


def _file_names(registry: Registry, files: Mapping[str, str], _: Datasets) -> list[Problem]:
    problems = []
    for path, text in files.items():
        if path == PRICES:
            continue
        slug = _slug_in(text)
        stem = Path(path).stem
        if slug is not None and slug != stem:
            message = f"{path} holds slug {slug!r}; name the file {slug}.json"
            problems.append(Problem("registry-slug-mismatch", message, path))
    return problems


def _duplicates(registry: Registry, files: Mapping[str, str], _: Datasets) -> list[Problem]:
    problems = []
    for kind in ("benchmarks", "models", "boards"):
        slugs = Counter(
            slug
            for path, text in files.items()
            if path.startswith(f"{kind}/") and (slug := _slug_in(text)) is not None
        )
        for slug, count in sorted(slugs.items()):
            if count > 1:
                message = f"{count} {kind} files use the slug {slug!r}"
                problems.append(Problem("registry-duplicate-slug", message, f"{kind}/{slug}.json"))
    names = Counter(name.lower() for m in registry.models.values() for name in m.harbor_names)
    for name, count in sorted(names.items()):
        if count > 1:
            message = f"{count} models claim the Harbor model name {name!r}"
            problems.append(Problem("registry-duplicate-model-name", message, "models/"))
    # A pushed run's model text must name one model (registry.naming).
    spoken = Counter(
        name.lower()
        for m in registry.models.values()
        for name in {m.slug, m.name.lower(), *(a.lower() for a in m.aliases)}
    )
    for name, count in sorted(spoken.items()):
        if count > 1:
            message = f"{count} models are named or aliased {name!r}"
            problems.append(Problem("registry-duplicate-model-name", message, "models/"))
    return problems


def _board_references(registry: Registry, _: Mapping[str, str], __: Datasets) -> list[Problem]:
    problems = []
    for board in registry.boards.values():
        path = f"boards/{board.slug}.json"
        benchmark = registry.benchmarks.get(board.benchmark)
        if benchmark is None:
            message = f"board {board.slug} names unknown benchmark {board.benchmark!r}"
            problems.append(Problem("registry-unknown-benchmark", message, path))
        elif benchmark.task_set(board.task_set) is None:
            known = ", ".join(s.name for s in benchmark.task_sets)
            message = (
                f"board {board.slug}: {board.benchmark} has no task set "
                f"{board.task_set!r} (it has {known})"
            )
            problems.append(Problem("registry-unknown-task-set", message, path))
        elif benchmark.harbor.dataset is None:
            message = f"board {board.slug}: {board.benchmark} has no Harbor dataset to run"
            problems.append(Problem("registry-board-not-runnable", message, path))
        if board.model not in registry.models:
            message = f"board {board.slug} names unknown model {board.model!r}"
            problems.append(Problem("registry-unknown-model", message, path))
    for price in registry.prices.prices:
        if price.model not in registry.models:
            message = f"prices.json prices unknown model {price.model!r}"
            problems.append(Problem("registry-unknown-model", message, PRICES))
    return problems


def _task_sets(registry: Registry, _: Mapping[str, str], datasets: Datasets) -> list[Problem]:
    problems = []
    for benchmark in registry.benchmarks.values():
        path = f"benchmarks/{benchmark.slug}.json"
        dataset = benchmark.harbor.dataset
        real = datasets.get(dataset) if dataset is not None else None
        if real is not None and benchmark.full.task_count != len(real):
            message = (
                f"{benchmark.slug}: `full` says {benchmark.full.task_count} tasks but "
                f"{dataset} has {len(real)}"
            )
            problems.append(Problem("registry-task-count-mismatch", message, path))
        known = set(real) if real is not None else None
        if known is None and benchmark.full.tasks is not None:
            known = set(benchmark.full.tasks)
        if known is None:
            continue
        for task_set in benchmark.task_sets:
            for task in sorted(set(task_set.tasks or ()) - known):
                message = (
                    f"{benchmark.slug}: task set {task_set.name!r} names {task!r}, "
                    f"which is not a task of {dataset or 'the full set'}"
                )
                problems.append(Problem("registry-unknown-task", message, path))
    return problems


def _slug_in(text: str) -> str | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    slug = data.get("slug") if isinstance(data, dict) else None
    return slug if isinstance(slug, str) else None


CHECKS: tuple[Check, ...] = (_not_empty, _file_names, _duplicates, _board_references, _task_sets)
