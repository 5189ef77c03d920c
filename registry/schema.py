"""The registry's schema: benchmarks, models, boards and the price table, as pydantic models.

Registry files are JSON with camelCase keys (the shape `docs/registry.md` documents and
the static registry exports); Python code uses the snake_case attribute names. Every
model refuses unknown keys, so a typo in a registry pull request is a check failure
rather than a silently ignored field.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    StringConstraints,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel


class Record(BaseModel):
    """Base of every registry and data-repository record: frozen, strict about keys, camelCase."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
    )

    def to_json_dict(self) -> dict[str, JsonValue]:
        """The record as its file holds it: camelCase keys, JSON values."""
        return self.model_dump(mode="json", by_alias=True)


# A benchmark's slug is `[a-z0-9-]` (the RunSubmission's `benchmarkSlug` rule).
BenchmarkSlug = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$", min_length=1, max_length=100)
]
# Model and board slugs may hold dots too: `qwen2.5-coder-7b`, `humanevalfix-qwen2.5-coder-7b`.
Slug = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$", min_length=1, max_length=100)
]
AgentName = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$", min_length=1, max_length=100)
]
# `name@version`, where a name holding `/` is a Harbor package (`org/name`).
DatasetRef = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]*@[A-Za-z0-9][A-Za-z0-9._:-]*$"),
]
Url = Annotated[str, StringConstraints(pattern=r"^https://[^\s]+$", max_length=500)]
Digest = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]

HarborStatus = Literal["native", "adapter", "external_harness", "none"]
AdapterKind = Literal["harbor_native", "hf_rows", "external_harness"]
Reach = Literal["registry", "package"]
MetricScale = Literal["percent", "fraction", "elo"]
SourceType = Literal["self_reported", "independent", "reproduced"]

NO_MODEL = "none"
"""The model slug of boards whose agents use no model (the demo's oracle and nop)."""

FULL = "full"
"""The task set every benchmark has: all of its dataset's tasks."""


Grading = Literal["exact_match", "numeric", "multiple_choice", "code_tests"]
FieldName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=100)]


class HubDataset(Record):
    """Where an `hf_rows` benchmark's rows are on the Hugging Face Hub."""

    repo: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")] = Field(
        description="The dataset's repository, `org/name`."
    )
    config: str | None = Field(default=None, max_length=100, description="The subset, if any.")
    split: str = Field(min_length=1, max_length=100, description="The split tasks come from.")
    revision: str | None = Field(
        default=None, max_length=100, description="A commit or tag; the default branch if absent."
    )


class PackagedCopy(Record):
    """A copy of the rows shipped inside a Python package, read without the network."""

    package: str = Field(min_length=1, max_length=100, description="The PyPI distribution.")
    module: FieldName = Field(description="The module its data sits under.")
    path: str = Field(pattern=r"^[\w.-]+(?:/[\w.-]+)*$", description="The file inside that module.")
    revision: str = Field(min_length=1, max_length=100, description="The package's version.")


class RowMapping(Record):
    """How one dataset row becomes a task: its instruction, its expected answer, its grading.

    `instruction` is a template whose `{field}` names are the row's fields (`{choices}`
    lists a multiple-choice row's options as `A. …`)."""

    id: FieldName | None = Field(default=None, description="The row's id field, if it has one.")
    instruction: str = Field(min_length=1, max_length=4000)
    grading: Grading = Field(
        description="`exact_match`, `numeric`, `multiple_choice` (the option's letter) or "
        "`code_tests` (the row's tests run against the agent's code)."
    )
    answer: list[FieldName] = Field(
        min_length=1,
        description="The field holding the expected answer; for `code_tests`, the fields "
        "whose text, joined, is the reference solution.",
    )
    answer_pattern: str | None = Field(
        default=None,
        max_length=200,
        description="A regular expression whose first group is the answer inside the field "
        "(`#### (.+)$` for GSM8K).",
    )
    choices: FieldName | None = Field(
        default=None, description="For `multiple_choice`: the field listing the options."
    )
    tests: FieldName | None = Field(default=None, description="For `code_tests`: the tests.")
    entry_point: FieldName | None = Field(
        default=None, description="For `code_tests`: the field naming the function to check."
    )

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if self.grading == "code_tests" and (self.tests is None or self.entry_point is None):
            raise ValueError("`code_tests` needs `tests` and `entryPoint`")
        if self.grading == "multiple_choice" and self.choices is None:
            raise ValueError("`multiple_choice` needs `choices`")
        if self.grading != "code_tests" and len(self.answer) != 1:
            raise ValueError(f"`{self.grading}` takes one `answer` field")
        return self


class Adapter(Record):
    """How the benchmark's tasks become Harbor tasks (the skill document's `harbor.adapter`)."""

    kind: AdapterKind = Field(
        description="`harbor_native`: run the Harbor dataset directly; `hf_rows`: tasks are "
        "generated from dataset rows; `external_harness`: the benchmark runs outside Harbor."
    )
    dataset: DatasetRef | None = Field(
        default=None, description="For `harbor_native`: the dataset reference to run."
    )
    repo_url: Url | None = Field(
        default=None, description="A repository holding the tasks or the external harness."
    )
    subdir: str | None = Field(
        default=None,
        pattern=r"^[\w.-]+(?:/[\w.-]+)*$",
        description="For a repository: the folder of tasks inside it.",
    )
    hub: HubDataset | None = Field(default=None, description="For `hf_rows`: the Hub dataset.")
    packaged: PackagedCopy | None = Field(
        default=None, description="For `hf_rows`: a copy of the rows that needs no network."
    )
    rows: RowMapping | None = Field(default=None, description="For `hf_rows`: row to task.")
    instructions: str | None = Field(
        default=None, max_length=2000, description="For `external_harness`: how to run it."
    )

    @model_validator(mode="after")
    def _kind_fields(self) -> Self:
        if self.kind == "hf_rows" and (self.hub is None or self.rows is None):
            raise ValueError("an `hf_rows` adapter needs `hub` and `rows`")
        if self.kind != "hf_rows" and (self.rows or self.hub or self.packaged):
            raise ValueError("only an `hf_rows` adapter has `hub`, `packaged` and `rows`")
        return self


class HarborAccess(Record):
    """Whether and how Harbor runs the benchmark."""

    status: HarborStatus = Field(
        description="`native`: written as Harbor tasks; `adapter`: converted into Harbor tasks "
        "by an adapter; `external_harness`: needs another harness; `none`: not runnable."
    )
    dataset: DatasetRef | None = Field(
        default=None, description="The Harbor dataset as `name@version`; null when not runnable."
    )
    reach: Reach | None = Field(
        default=None,
        description="How Harbor finds the dataset: `registry` (a name without `/` in a "
        "registry.json) or `package` (an `org/name` package).",
    )
    registry_url: Url | None = Field(
        default=None, description="The registry.json to use, when not Harbor's default one."
    )
    adapter: Adapter | None = Field(default=None, description="How the tasks are produced.")
    source: Url | None = Field(default=None, description="Where these Harbor facts come from.")
    note: str | None = Field(default=None, max_length=500, description="What a runner must know.")
    task_digests: dict[str, Digest] | None = Field(
        default=None,
        description="Each task's digest as Harbor records it in lock.json (`task.digest`), by "
        "task name, for this version of the dataset: a board of it takes only jobs of exactly "
        "these task files. Null when not pinned; written by `hbench registry pin`.",
    )
    pinned_from: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        description="What the digests were computed from: the dataset checkout and its revision.",
    )
    task_seconds: dict[str, Annotated[float, Field(gt=0)]] | None = Field(
        default=None,
        description="Each task's expected run time in seconds, by task name, where known: a "
        "sharded run's split deals the longest first to the least-loaded shard; tasks not "
        "listed count alike. Never part of what a board compares.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if (self.task_digests is None) != (self.pinned_from is None):
            raise ValueError("`taskDigests` and `pinnedFrom` are given together or not at all")
        runnable = self.status in ("native", "adapter")
        rows = self.adapter is not None and self.adapter.kind == "hf_rows"
        # A repository of task folders is cloned and run from the folder, like pulled rows.
        cloned = (
            self.adapter is not None
            and self.adapter.kind == "harbor_native"
            and self.adapter.repo_url is not None
            and self.dataset is None
        )
        if self.task_digests is not None and not runnable:
            raise ValueError(f"status {self.status!r} runs no Harbor dataset to pin")
        if rows and (self.status != "adapter" or self.source is None):
            # Tasks made from rows are pulled, not found in a Harbor registry.
            raise ValueError("an `hf_rows` adapter goes with status `adapter` and a `source`")
        if runnable and not (rows or cloned) and (self.dataset is None or self.reach is None):
            raise ValueError(f"status {self.status!r} needs `dataset` and `reach`")
        if not runnable and self.dataset is not None:
            raise ValueError(f"status {self.status!r} runs no Harbor dataset; drop `dataset`")
        if self.dataset is not None and self.reach is not None:
            is_package = "/" in self.dataset.split("@", 1)[0]
            if is_package != (self.reach == "package"):
                raise ValueError("`reach` is `package` exactly when the dataset name holds `/`")
        return self


class TaskSet(Record):
    """A set of the dataset's tasks a board is run on: `full` or a named subset."""

    name: BenchmarkSlug = Field(description="`full`, or the subset's name.")
    description: str = Field(default="", max_length=500)
    tasks: list[str] | None = Field(
        default=None,
        description="The task names, sorted. Subsets must list them; `full` may leave them "
        "out, and then means every task of the dataset.",
    )
    task_count: int = Field(ge=1, le=100_000, description="How many tasks the set holds.")

    @model_validator(mode="after")
    def _listed(self) -> Self:
        if self.tasks is None:
            if self.name != FULL:
                raise ValueError(f"subset {self.name!r} must list its tasks")
            return self
        if len(set(self.tasks)) != len(self.tasks):
            raise ValueError(f"task set {self.name!r} names a task twice")
        if self.tasks != sorted(self.tasks):
            raise ValueError(f"task set {self.name!r} must list its tasks sorted")
        if len(self.tasks) != self.task_count:
            raise ValueError(
                f"task set {self.name!r} lists {len(self.tasks)} tasks but says {self.task_count}"
            )
        return self


class License(Record):
    """The data's license, as far as it can be sourced."""

    spdx: str | None = Field(default=None, description="SPDX identifier, when there is one.")
    name: str = Field(description="The license as people name it, or where to read it.")
    url: Url | None = Field(default=None, description="Where the license is stated.")
    allows_redistribution: bool = Field(
        description="Whether task files may be published; false when unsure."
    )
    note: str | None = Field(default=None, max_length=500)


class KnownScore(Record):
    """A score published elsewhere, with the kind of source and a link to it."""

    value: float = Field(description="The score, on the benchmark's metric scale.")
    model: str = Field(min_length=1, max_length=200, description="The model, as the source says.")
    harness: str | None = Field(default=None, max_length=100, description="Agent or scaffold.")
    source_type: SourceType = Field(
        description="`self_reported` (by the model's makers), `independent` (by a third party) "
        "or `reproduced` (from runs pushed to this registry)."
    )
    source: Url = Field(description="The page the value is read from.")
    as_of: date | None = Field(default=None, description="When the source published it.")
    note: str | None = Field(default=None, max_length=500)


class Benchmark(Record):
    """A benchmark: what it measures, where its tasks come from, how it is scored."""

    slug: BenchmarkSlug
    name: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=1000)
    axes: list[BenchmarkSlug] = Field(
        default_factory=list, description="What it measures: `coding`, `math`, `science`, …"
    )
    paper: Url | None = Field(default=None, description="The paper, when there is one.")
    homepage: Url | None = Field(default=None)
    harbor: HarborAccess
    task_sets: list[TaskSet] = Field(min_length=1, description="`full` first, then named subsets.")
    license: License
    metric: str = Field(min_length=1, max_length=50, description="`accuracy`, `pass@1`, …")
    metric_scale: MetricScale = Field(
        description="How scores are written: `percent` (0-100), `fraction` (0-1) or `elo`."
    )
    custom_environments: list[str] = Field(
        default_factory=list,
        description="Harbor environment classes (`module:Class`) allowed for this benchmark "
        "besides Harbor's built-in environment types.",
    )
    known_scores: list[KnownScore] = Field(default_factory=list)

    @field_validator("task_sets")
    @classmethod
    def _full_first(cls, sets: list[TaskSet]) -> list[TaskSet]:
        if sets[0].name != FULL:
            raise ValueError("the first task set must be `full`")
        names = [s.name for s in sets]
        if len(set(names)) != len(names):
            raise ValueError("task set names must be unique")
        return sets

    @model_validator(mode="after")
    def _pins_cover_the_task_sets(self) -> Self:
        pins = self.harbor.task_digests
        if pins is None:
            return self
        if len(pins) != self.full.task_count:
            raise ValueError(
                f"`harbor.taskDigests` pins {len(pins)} tasks, but the full set has "
                f"{self.full.task_count}"
            )
        listed = self.full.tasks
        if listed is not None and set(listed) != pins.keys():
            raise ValueError("`harbor.taskDigests` must pin exactly the full set's tasks")
        return self

    def task_set(self, name: str) -> TaskSet | None:
        return next((s for s in self.task_sets if s.name == name), None)

    @property
    def full(self) -> TaskSet:
        return self.task_sets[0]


class Model(Record):
    """A model boards are run with, and the agents that may be issued for it."""

    slug: Slug
    name: str = Field(min_length=1, max_length=200, description="The display name.")
    provider: str = Field(min_length=1, max_length=100)
    harbor_names: list[str] = Field(
        default_factory=list,
        description="The names Harbor records for it (`-m`, `model_name`); empty for `none`.",
    )
    aliases: list[str] = Field(
        default_factory=list,
        description="Other names people push it as (`Claude Sonnet 4.5`), matched ignoring case.",
    )
    agents: list[AgentName] = Field(
        min_length=1, description="The agents a run may be issued with for this model."
    )
    homepage: Url | None = Field(default=None)


ISSUED_ATTEMPTS: tuple[Literal[1, 3], ...] = (1, 3)
"""Attempts per task a run may be issued with."""

DEFAULT_RUNS_PER_DAY = 5
DEFAULT_RUNS_WAITING = 2

HARBOR_ENVIRONMENT_TYPES: tuple[str, ...] = (
    "docker", "sbx", "podman", "daytona", "e2b", "modal", "runloop", "langsmith", "ec2",
    "gke", "ack", "openshift", "novita", "apple-container", "singularity", "islo",
    "tensorlake", "cwsandbox", "use-computer", "cua-cloud", "blaxel", "opensandbox", "beam",
    "skypilot", "hf-sandbox", "hyperbrowser", "vercel", "runta", "prime", "kata", "mosaic",
    "smol", "sail", "kernel",
)  # fmt: skip
"""Harbor 0.25's built-in environment types (`harbor.models.environment_type`), the names a
board's `environments` may list; a test holds the two together."""
DEFAULT_ENVIRONMENTS: tuple[str, ...] = ("docker",)
"""Where an issued run's trials run unless its board allows more: Harbor's docker one."""
HARBOR_CONCURRENT_TRIALS = 4
"""Harbor's `n_concurrent_trials` default, and a board's `maxConcurrentTrials` unless set."""
MAX_CONCURRENT_TRIALS = 256
DEFAULT_MAX_SHARDS = 8
"""The most shards a board lets an issued run split into, unless it says otherwise."""
MAX_SHARDS = 64
"""The most shards any board may allow: each is a runner job and a row of its own."""


class Limits(Record):
    """What one owner may be issued on a board."""

    runs_per_day: int = Field(
        default=DEFAULT_RUNS_PER_DAY, ge=1, le=1000, description="Runs issued per 24 hours."
    )
    runs_waiting: int = Field(
        default=DEFAULT_RUNS_WAITING, ge=1, le=100, description="Runs waiting for upload at once."
    )


class Board(Record):
    """A named board: one benchmark's task set, one model, Harbor's default settings."""

    slug: Slug
    title: str | None = Field(default=None, max_length=200)
    benchmark: BenchmarkSlug
    task_set: BenchmarkSlug = Field(default=FULL)
    model: Slug
    attempts: list[Literal[1, 3]] = Field(
        default_factory=lambda: list(ISSUED_ATTEMPTS),
        min_length=1,
        description="Attempts per task an issued run may use.",
    )
    limits: Limits = Field(default_factory=Limits)
    settings: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="Comparability settings that differ from Harbor's defaults (usually none).",
    )
    runner: Literal["any", "github-hosted"] = Field(
        default="any",
        description="`github-hosted`: runs are issued only to GitHub Actions workflows on "
        "runners GitHub hosts (by their OIDC token), never for a machine of the submitter's.",
    )
    environments: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ENVIRONMENTS),
        min_length=1,
        description="Harbor environment types an issued run may ask for (such as `docker`, "
        "`daytona`, `modal`); a run that asks for none runs in the first. Where trials run "
        "never changes which board a job fits.",
    )
    max_concurrent_trials: int = Field(
        default=HARBOR_CONCURRENT_TRIALS,
        ge=1,
        le=MAX_CONCURRENT_TRIALS,
        description="The most trials an issued run may run at once (Harbor's "
        "`n_concurrent_trials`); it never changes which board a job fits.",
    )
    upload_max_bytes: int | None = Field(
        default=None,
        ge=1024 * 1024,
        description="The most an issued run's job may be as sent, in bytes; above one "
        "request's cap it is sent in parts. Unset: the service's default (95 MiB). The "
        "service's `HBENCH_JOB_MAX_BYTES` is the ceiling.",
    )
    unpacked_max_bytes: int | None = Field(
        default=None,
        ge=1024 * 1024,
        description="The most an issued run's job may hold once unpacked, in bytes. Unset: "
        "the service's default (512 MiB). The service's `HBENCH_JOB_UNPACKED_MAX_BYTES` is "
        "the ceiling.",
    )
    max_shards: int = Field(
        default=DEFAULT_MAX_SHARDS,
        ge=1,
        le=MAX_SHARDS,
        description="The most shards an issued run may split its tasks into, each run and "
        "uploaded on its own; the run counts once, whatever its shards.",
    )

    @field_validator("environments")
    @classmethod
    def _harbor_types(cls, names: list[str]) -> list[str]:
        unknown = [name for name in names if name not in HARBOR_ENVIRONMENT_TYPES]
        if unknown:
            raise ValueError(
                f"{', '.join(unknown)}: not Harbor environment types; the types: "
                f"{', '.join(HARBOR_ENVIRONMENT_TYPES)}"
            )
        if len(set(names)) != len(names):
            raise ValueError("each environment is listed once")
        return names


class Price(Record):
    """A model's list price in US dollars per million tokens."""

    model: Slug
    input_per_mtok: float = Field(ge=0, description="Uncached input tokens.")
    cached_input_per_mtok: float = Field(ge=0, description="Input tokens read from the cache.")
    output_per_mtok: float = Field(ge=0)
    source: Url
    as_of: date


class PriceTable(Record):
    """Every priced model; a model missing here has no computed cost."""

    currency: Literal["USD"] = "USD"
    prices: list[Price] = Field(default_factory=list)

    def for_model(self, slug: str) -> Price | None:
        return next((p for p in self.prices if p.model == slug), None)
