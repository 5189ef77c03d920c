"""What an issue request names, looked up in the registry: its board, or its benchmark,
task set and model (a cell), each part found or a problem saying what was not (with the
names there are, `listing`); the target a sound request runs (`Target`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.runs.schemas import IssueRequest
from hbench.errors import Problem
from registry import naming
from registry.loader import Registry
from registry.schema import FULL, Benchmark, Board, Model, TaskSet

# How many names a refusal lists before it says "and N more".
LISTED = 12


@dataclass(frozen=True)
class Lookup:
    """What the request names, as far as the registry knows it."""

    board: Board | None = None
    benchmark: Benchmark | None = None
    task_set: TaskSet | None = None
    model: Model | None = None

    def target(self) -> Target | None:
        """The target, when every part was found."""
        board, benchmark, task_set, model = self.board, self.benchmark, self.task_set, self.model
        if board is None or benchmark is None or task_set is None or model is None:
            return None
        if benchmark.harbor.dataset is None:
            return None
        return Target(board, benchmark, task_set, model, benchmark.harbor.dataset)


@dataclass(frozen=True)
class Target:
    """A request the policy allows: the board it counts on and what that board runs."""

    board: Board
    benchmark: Benchmark
    task_set: TaskSet
    model: Model
    dataset: str  # `name@version`


def look_up(request: IssueRequest, registry: Registry) -> tuple[Lookup, list[Problem]]:
    """Find the board, benchmark, task set and model, by `arena` or by the other fields."""
    if request.arena is not None:
        return by_board(request, registry)
    return by_cell(request, registry)


def by_board(request: IssueRequest, registry: Registry) -> tuple[Lookup, list[Problem]]:
    slug = request.arena or ""
    board = registry.boards.get(slug)
    benchmark = registry.benchmarks.get(board.benchmark) if board else None
    task_set = benchmark.task_set(board.task_set) if board and benchmark else None
    model = registry.models.get(board.model) if board else None
    if board is None or benchmark is None or benchmark.harbor.dataset is None:
        runnable = sorted(b.slug for b in registry.boards.values() if is_runnable(b, registry))
        message = f"there is no board {slug!r} to issue runs on; the boards: {listing(runnable)}"
        return Lookup(), [Problem("run-board-unknown", message, "body.arena")]
    lookup = Lookup(board, benchmark, task_set, model)
    given = {"dataset": request.dataset, "task_set": request.task_set, "model": request.model}
    actual = {"dataset": benchmark.harbor.dataset, "task_set": board.task_set, "model": board.model}
    problems = [
        Problem(
            "run-board-mismatch",
            f"the board {board.slug} runs {field} {actual[field]}, not {value}; "
            f"leave {field} out, or give the board that runs {value}",
            f"body.{field}",
        )
        for field, value in given.items()
        if value is not None and value != actual[field] and not _same_model(field, value, model)
    ]
    return lookup, problems


def by_cell(request: IssueRequest, registry: Registry) -> tuple[Lookup, list[Problem]]:
    problems: list[Problem] = []
    if request.dataset is None or request.model is None:
        message = (
            "name the board with arena, or the benchmark with dataset (name@version) and "
            "model; `hbench registry search` lists them"
        )
        problems.append(Problem("run-target-missing", message, "body"))
    benchmark = _benchmark(request.dataset, registry, problems)
    task_set = _task_set(benchmark, request.task_set or FULL, problems)
    model = _model(request.model, registry, problems)
    if benchmark is None or task_set is None or model is None:
        return Lookup(None, benchmark, task_set, model), problems
    boards = sorted(
        (b for b in registry.boards.values() if b.benchmark == benchmark.slug
         and b.task_set == task_set.name and b.model == model.slug),
        key=lambda b: b.slug,
    )  # fmt: skip
    if len(boards) == 1:
        return Lookup(boards[0], benchmark, task_set, model), problems
    if boards:
        message = (
            f"several boards run this: {listing([b.slug for b in boards])}; name one with arena"
        )
        problems.append(Problem("run-board-ambiguous", message, "body"))
    else:
        others = sorted(b.slug for b in registry.boards.values() if b.benchmark == benchmark.slug)
        message = (
            f"no board runs {benchmark.slug} ({task_set.name}) with {model.slug}; "
            f"this benchmark's boards: {listing(others)}"
        )
        problems.append(Problem("run-no-board", message, "body"))
    return Lookup(None, benchmark, task_set, model), problems


def _benchmark(
    dataset: str | None, registry: Registry, problems: list[Problem]
) -> Benchmark | None:
    if dataset is None:
        return None
    found = registry.benchmarks_for_dataset(dataset)
    if found:
        return found[0]
    known = sorted(b.harbor.dataset for b in registry.benchmarks.values() if b.harbor.dataset)
    message = (
        f"no benchmark of this service runs the dataset {dataset!r}; the datasets: "
        f"{listing(known)}. To score another dataset, run it and upload the job"
    )
    problems.append(Problem("run-dataset-unknown", message, "body.dataset"))
    return None


def _task_set(benchmark: Benchmark | None, name: str, problems: list[Problem]) -> TaskSet | None:
    if benchmark is None:
        return None
    task_set = benchmark.task_set(name)
    if task_set is None:
        names = [s.name for s in benchmark.task_sets]
        message = f"{benchmark.slug} has no task set {name!r}; its sets: {listing(names)}"
        problems.append(Problem("run-task-set-unknown", message, "body.task_set"))
    return task_set


def _model(slug: str | None, registry: Registry, problems: list[Problem]) -> Model | None:
    if slug is None:
        return None
    # Any spelling of a registry model (`Qwen2.5-Coder 7B`, a provider prefix), as pushed
    # runs take them (registry.naming).
    named = naming.model_slug(registry, slug)
    model = registry.models.get(slug) or registry.model_named(slug)
    model = model or (registry.models.get(named) if named else None)
    if model is None:
        message = (
            f"the registry names no model {slug!r}; the models: "
            f"{listing(sorted(registry.models))}. To score another model, run it and upload the job"
        )
        problems.append(Problem("run-model-unknown", message, "body.model"))
    return model


def _same_model(field: str, value: str, model: Model | None) -> bool:
    """A model may be named by one of its Harbor names, or any spelling of its slug or name
    (registry.naming), as well as its slug."""
    if field != "model" or model is None:
        return False
    if value.lower() in {name.lower() for name in model.harbor_names}:
        return True
    return naming.model_slug(Registry(models={model.slug: model}), value) == model.slug


def is_runnable(board: Board, registry: Registry) -> bool:
    benchmark = registry.benchmarks.get(board.benchmark)
    return benchmark is not None and benchmark.harbor.dataset is not None


def listing(names: Sequence[str]) -> str:
    """Names for a message: all of them, or the first few and how many more."""
    if not names:
        return "none"
    shown = ", ".join(names[:LISTED])
    return shown if len(names) <= LISTED else f"{shown} and {len(names) - LISTED} more"
