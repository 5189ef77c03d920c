"""Cells, boards and entries: which boards a job fits, when it opens a new one, and the
entry it joins.

A board's *cell* is what makes scores comparable: the dataset at one version, the exact
set of tasks, the model, and the comparability settings (`registry.settings`). A job fits
a board when all four agree and the board's benchmark allows the job's environment.
The rules are spelled out in `docs/registry.md` ("Cells and boards").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field, JsonValue

from hbench.errors import Problem
from registry.jsonfile import canonical
from registry.loader import Registry
from registry.pins import differing_tasks
from registry.pins import mismatch as pin_mismatch
from registry.schema import NO_MODEL, AgentName, Benchmark, DatasetRef, Digest, Record, Slug

MAX_ATTEMPTS = 5
"""Uploads may use 1 to 5 attempts per task; issued runs 1 or 3 (the board's `attempts`)."""


class TrialFacts(Record):
    """One trial of a job, as scoring needs it."""

    task: str
    reward: float | None = Field(description="The primary reward; null when the trial errored.")
    input_tokens: int | None = Field(default=None, ge=0, description="Cached tokens included.")
    cached_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)


class JobFacts(Record):
    """A Harbor job reduced to what placement and scoring read."""

    job_id: str
    dataset: DatasetRef | None = Field(description="`name@version`; null for tasks from a folder.")
    task_names: list[str] = Field(min_length=1)
    model: str | None = Field(description="The model as Harbor records it; null for none.")
    n_attempts: int = Field(ge=1)
    agent: AgentName
    agent_version: str | None = None
    kwargs: dict[str, JsonValue] = Field(default_factory=dict)
    prompt_template_digest: Digest | None = None
    extra_instruction_digests: list[Digest] = Field(default_factory=list)
    environment: str = Field(description="The environment type, or its `module:Class`.")
    settings: dict[str, JsonValue] = Field(default_factory=dict)
    trials: list[TrialFacts] = Field(default_factory=list)
    harbor_version: str | None = None
    task_digests: dict[str, Digest] = Field(
        default_factory=dict,
        description="Each task's digest from the job's lock.json: which task files ran.",
    )


class EntrySettings(Record):
    """What an entry stands for: the agent and its options, not its version."""

    agent: AgentName
    options: dict[str, JsonValue] = Field(default_factory=dict)
    prompt_template_digest: Digest | None = None
    extra_instruction_digests: list[Digest] = Field(default_factory=list)

    @classmethod
    def of(cls, facts: JobFacts) -> EntrySettings:
        return cls(
            agent=facts.agent,
            options=facts.kwargs,
            prompt_template_digest=facts.prompt_template_digest,
            extra_instruction_digests=facts.extra_instruction_digests,
        )

    def digest(self) -> str:
        """sha256 of the settings alone, the same for every owner."""
        return hashlib.sha256(canonical(self.to_json_dict()).encode()).hexdigest()


def entry_name(owner: str, settings: EntrySettings) -> str:
    """The entry's name: the agent, a dash and 6 hex characters, such as `terminus-2-a3f9c1`.

    The digest covers the owner's GitHub handle (lowercased) and the settings, so each
    owner's entries have names of their own on a board, and the same owner with the same
    settings always gets the same name, whatever the agent's version.
    """
    payload = canonical({"owner": owner.lower(), "settings": settings.to_json_dict()})
    return f"{settings.agent}-{hashlib.sha256(payload.encode()).hexdigest()[:6]}"


class OpenBoard(Record):
    """A board a published job opened because no board had its cell (data repository)."""

    slug: Slug
    dataset: DatasetRef
    benchmark: str | None = Field(description="The registry benchmark of that dataset, if any.")
    tasks: list[str] = Field(min_length=1, description="The exact tasks, sorted.")
    model: str = Field(description="The registry model slug, or the model's slugified name.")
    settings: dict[str, JsonValue] = Field(default_factory=dict)
    custom_environments: list[str] = Field(default_factory=list)
    opened_by_job: str = Field(description="The job id of the run that opened it.")
    # Added later: left out of the file while empty, so earlier records keep their bytes.
    task_digests: dict[str, Digest] = Field(
        default_factory=dict,
        exclude_if=lambda value: not value,
        description="The task files of the run that opened it, by task: the board takes "
        "only runs of the same files (unless its benchmark pins its own).",
    )


@dataclass(frozen=True)
class BoardCell:
    """One board's cell, whether the registry names the board or a job opened it."""

    slug: str
    dataset: str
    tasks: frozenset[str] | None  # None: every task of the dataset, `task_count` of them
    task_count: int
    model: str
    settings: dict[str, JsonValue]
    custom_environments: tuple[str, ...]
    named: bool
    pins: dict[str, str] | None = None
    """The task digests the board takes: its benchmark's pins, or an open board's first
    run's; None when nothing pins them."""
    pinned_by: str | None = None
    """Who pinned them, for messages: the benchmark, or the board's first run."""

    def fits_tasks(self, tasks: frozenset[str]) -> bool:
        if self.tasks is not None:
            return tasks == self.tasks
        return len(tasks) == self.task_count

    def allows(self, environment: str) -> bool:
        """Harbor's built-in types everywhere; a custom class only where listed."""
        return ":" not in environment or environment in self.custom_environments


@dataclass(frozen=True)
class Placement:
    """Where a job may go: the boards it fits, or the board it opens, or why neither."""

    fits: tuple[str, ...] = ()
    opens: OpenBoard | None = None
    problems: tuple[Problem, ...] = ()


def board_cells(registry: Registry, open_boards: Sequence[OpenBoard] = ()) -> list[BoardCell]:
    """The cells of every runnable named board and every open board."""
    cells = []
    for board in registry.boards.values():
        benchmark = registry.benchmarks.get(board.benchmark)
        task_set = benchmark.task_set(board.task_set) if benchmark else None
        if benchmark is None or task_set is None or benchmark.harbor.dataset is None:
            continue
        listed = frozenset(task_set.tasks) if task_set.tasks is not None else None
        pins = benchmark.harbor.task_digests
        cells.append(
            BoardCell(board.slug, benchmark.harbor.dataset, listed, task_set.task_count,
                      board.model, board.settings, tuple(benchmark.custom_environments), True,
                      pins, f"the tasks pinned for {benchmark.slug}" if pins else None)
        )  # fmt: skip
    for opened in open_boards:
        open_pins, pinned_by = _open_board_pins(registry, opened)
        cells.append(
            BoardCell(opened.slug, opened.dataset, frozenset(opened.tasks), len(opened.tasks),
                      opened.model, opened.settings, tuple(opened.custom_environments), False,
                      open_pins, pinned_by)
        )  # fmt: skip
    return cells


def _open_board_pins(
    registry: Registry, opened: OpenBoard
) -> tuple[dict[str, str] | None, str | None]:
    benchmark = registry.benchmarks.get(opened.benchmark or "")
    if benchmark is not None and benchmark.harbor.task_digests:
        return benchmark.harbor.task_digests, f"the tasks pinned for {benchmark.slug}"
    if opened.task_digests:
        return opened.task_digests, f"the tasks the first run on {opened.slug} ran"
    return None, None


def pinned_digests(registry: Registry, dataset: str | None) -> tuple[dict[str, str], str] | None:
    """The task digests a registry pins for a dataset version, and whose they are."""
    for benchmark in registry.benchmarks_for_dataset(dataset or ""):
        if benchmark.harbor.task_digests:
            return benchmark.harbor.task_digests, f"the tasks pinned for {benchmark.slug}"
    return None


def model_key(registry: Registry, model: str | None) -> str:
    """The model as boards name it: the registry's slug, else the slugified Harbor name."""
    known = registry.model_named(model)
    if known is not None:
        return known.slug
    return NO_MODEL if model is None else slugify(model)


def place(facts: JobFacts, registry: Registry, open_boards: Sequence[OpenBoard] = ()) -> Placement:
    """The boards a self-reported job fits; failing that, the board it opens; else why not."""
    problems = _refusals(facts)
    if problems or facts.dataset is None:
        return Placement(problems=tuple(problems))
    model = model_key(registry, facts.model)
    tasks = frozenset(facts.task_names)
    same_cell = [
        cell
        for cell in board_cells(registry, open_boards)
        if cell.dataset == facts.dataset
        and cell.model == model
        and cell.settings == facts.settings
        and cell.fits_tasks(tasks)
    ]
    # A board never mixes task files: a job of other files than the board's fits none of
    # them, and opens no board beside them (registry/pins.py).
    differing = [(cell, _differing(cell, facts)) for cell in same_cell]
    if any(tasks_ for _, tasks_ in differing):
        cell, tasks_ = next((c, t) for c, t in differing if t)
        pins = cell.pins or {}
        problem = pin_mismatch(cell.pinned_by or cell.slug, pins, facts.task_digests, tasks_)
        return Placement(problems=(problem,))
    pinned = pinned_digests(registry, facts.dataset)
    if pinned is not None:
        tasks_ = differing_tasks(pinned[0], facts.task_digests, facts.task_names)
        if tasks_:
            problem = pin_mismatch(pinned[1], pinned[0], facts.task_digests, tasks_)
            return Placement(problems=(problem,))
    fits = tuple(sorted(cell.slug for cell in same_cell if cell.allows(facts.environment)))
    if fits:
        return Placement(fits=fits)
    benchmarks = registry.benchmarks_for_dataset(facts.dataset)
    allowed = sorted({env for b in benchmarks for env in b.custom_environments})
    if same_cell or (":" in facts.environment and facts.environment not in allowed):
        message = _environment_refused(facts, [c.slug for c in same_cell], benchmarks)
        return Placement(problems=(Problem("board-environment-refused", message),))
    benchmark = benchmarks[0].slug if benchmarks else None
    return Placement(opens=new_board(facts, model, allowed, benchmark))


def _environment_refused(
    facts: JobFacts, cells: Sequence[str], benchmarks: Sequence[Benchmark]
) -> str:
    """Why no board takes the job's environment: the boards of its cell don't allow it, its
    benchmark lists other custom environments, or no board covers its dataset at all."""
    if cells:
        where = f"the boards of its tasks, model and settings ({', '.join(cells)}) don't allow it"
    elif benchmarks:
        where = f"the boards of {', '.join(b.slug for b in benchmarks)} don't allow it"
    else:
        where = (
            f"no board covers {facts.dataset}, and a new board takes only Harbor's built-in "
            "environments"
        )
    return (
        f"the job ran in the environment {facts.environment}, and {where}; it fits no board. "
        "Run it with Harbor's docker environment (or another built-in type) to publish it"
    )


def _differing(cell: BoardCell, facts: JobFacts) -> list[str]:
    if cell.pins is None:
        return []
    return differing_tasks(cell.pins, facts.task_digests, facts.task_names)


def new_board(
    facts: JobFacts, model: str, custom_environments: list[str], benchmark: str | None
) -> OpenBoard:
    """The board a job opens; its slug is the same for every job of the same cell."""
    if facts.dataset is None:
        raise ValueError("a job of tasks from a folder opens no board")
    tasks = sorted(set(facts.task_names))
    cell = canonical(
        {"dataset": facts.dataset, "tasks": tasks, "model": model, "settings": facts.settings}
    )
    digest = hashlib.sha256(cell.encode()).hexdigest()[:6]
    return OpenBoard(
        slug=f"{slugify(facts.dataset)}-{model}-{digest}"[-100:].lstrip(".-"),
        dataset=facts.dataset,
        benchmark=benchmark,
        tasks=tasks,
        model=model,
        settings=facts.settings,
        custom_environments=custom_environments,
        opened_by_job=facts.job_id,
        task_digests=facts.task_digests,
    )


def slugify(text: str) -> str:
    """Lowercase; a run of other characters becomes one dash, or one dot if only dots."""
    text = re.sub(r"[^a-z0-9]*[^a-z0-9.][^a-z0-9]*", "-", text.lower())
    return re.sub(r"\.{2,}", ".", text).strip("-.") or "x"


def _refusals(facts: JobFacts) -> list[Problem]:
    problems = []
    if facts.dataset is None:
        message = "the job ran tasks from a folder (--path), not a dataset from a registry"
        problems.append(Problem("board-local-tasks", message))
    if facts.n_attempts > MAX_ATTEMPTS:
        message = f"the job ran {facts.n_attempts} attempts per task; boards take 1 to 5"
        problems.append(Problem("board-attempts-refused", message))
    if facts.prompt_template_digest is not None or facts.extra_instruction_digests:
        message = (
            "the job used a prompt template or extra instructions, which only an issued run may use"
        )
        problems.append(Problem("board-prompt-needs-issued-run", message))
    return problems
