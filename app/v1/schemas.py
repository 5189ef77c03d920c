"""The runs API's bodies, field for field as the skill document lists them
(`../shared/spec/benchhub-skill.md`, "`POST /v1/runs` schema (`RunSubmission`)").

Names are camelCase on the wire. Every rule of the schema's table is checked here and
refused as `validation_error` with the field's path; whether `benchmarkSlug` names a
benchmark of the registry is `policy`'s check, since it needs the registry.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
)
from pydantic.alias_generators import to_camel

from registry.naming import shown_name, shown_prose

MAX_TASK_REWARDS = 5000
MAX_PERCENT_SCORE = 100.0
MAX_ELO_SCORE = 10_000.0
ELO = "elo"
MAX_TOKENS = 2**63 - 1  # what the database's BIGINT holds

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+$", min_length=1, max_length=100)]
Version = Annotated[str, StringConstraints(max_length=50)]
ResultsHash = Annotated[
    str, StringConstraints(pattern=r"^[0-9a-fA-F]{64}$", min_length=64, max_length=64)
]
Count = Annotated[int, Field(strict=True)]  # a JSON true is not 1 task
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]  # a JSON number, not "84"


class Camel(BaseModel):
    """camelCase on the wire, snake_case in Python; unknown fields refused."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class TaskReward(Camel):
    """One trial's reward. Nothing else: a summary carries no outputs."""

    task: str = Field(min_length=1, max_length=200)
    reward: Number

    @field_validator("task")
    @classmethod
    def _task_shows(cls, task: str) -> str:
        return shown_name(task)


class RunSubmission(Camel):
    """A run summary as `POST /v1/runs` takes it (`score = mean(reward) * 100`)."""

    benchmark_slug: Slug = Field(description="A benchmark of the registry, by its slug.")
    model: str = Field(min_length=1, max_length=200, description="The model, as typed.")
    harness: str = Field(min_length=1, max_length=100, description="The agent scaffold.")
    task_count: Count = Field(ge=1, le=100_000)
    n_attempts: Count = Field(ge=1, le=1000)
    # `metric` comes before `score`: the score's range depends on it.
    metric: str = Field(min_length=1, max_length=50, examples=["accuracy", "pass@1", "elo"])
    score: Number = Field(ge=0, le=MAX_ELO_SCORE, description="0-100; 0-10000 for `elo`.")
    tokens_used: Count | None = Field(default=None, ge=0, le=MAX_TOKENS)
    cost_usd: Number | None = Field(default=None, ge=0)
    harbor_version: Version | None = None
    cli_version: Version | None = None
    results_hash: ResultsHash | None = Field(
        default=None, description="sha256 (hex) of the Harbor job's result.json."
    )
    task_rewards: list[TaskReward] | None = Field(default=None, max_length=MAX_TASK_REWARDS)
    notes: str | None = Field(default=None, max_length=2000)

    @field_validator("model", "harness", "metric")
    @classmethod
    def _names_show(cls, name: str) -> str:
        return shown_name(name)

    @field_validator("notes", "harbor_version", "cli_version")
    @classmethod
    def _text_shows(cls, text: str | None) -> str | None:
        return shown_prose(text)

    @field_validator("score")
    @classmethod
    def _score_on_its_scale(cls, score: float, info: ValidationInfo) -> float:
        # Percentage-like metrics top out at 100; only an Elo rating goes higher. (A metric
        # that failed its own rules is not in `info.data`; its error is reported already.)
        metric = info.data.get("metric")
        if isinstance(metric, str) and not is_elo(metric) and score > MAX_PERCENT_SCORE:
            raise ValueError(
                f"score must be at most {MAX_PERCENT_SCORE:g} unless metric is `elo` "
                f"(then at most {MAX_ELO_SCORE:g})"
            )
        return score


def is_elo(metric: str) -> bool:
    return metric.strip().lower() == ELO


class RunEvidence(Camel):
    """What a run proves, as data and in words (docs/trust.md)."""

    levels: list[Literal["self-reported", "regraded", "issued", "run-on-ci"]] = Field(
        description="For a run published on a board, the evidence its job holds: "
        "`self-reported`, and `regraded`, `issued` and `run-on-ci` where they apply. Empty "
        "for a pushed summary, which no job backs."
    )
    description: str = Field(description="What the levels prove, in plain words.")


class RunRecord(Camel):
    """A stored run, as the read endpoints and `POST /v1/runs` answer with it."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(examples=["run_01JB7ZQ7Y0A4M2D3F5G6H7J8K9"])
    benchmark_slug: str
    model: str
    model_slug: str | None = Field(description="The registry's model, when the text names one.")
    harness: str
    task_count: int
    n_attempts: int
    score: float
    metric: str
    tokens_used: int | None
    cost_usd: float | None
    harbor_version: str | None
    cli_version: str | None
    results_hash: str | None
    task_rewards: list[TaskReward] | None
    notes: str | None
    user_id: str | None = Field(description="The login of the account that pushed it.")
    status: Literal["uploaded", "validated", "rejected"] = Field(
        description="`uploaded` when pushed, `validated` for a run published on a board, "
        "`rejected` when taken down."
    )
    created_at: str = Field(examples=["2026-10-01T12:00:00.000Z"])
    evidence: RunEvidence


class RunCreated(Camel):
    data: RunRecord
    url: str


class Pagination(Camel):
    page: int
    limit: int
    total: int
    total_pages: int


class RunList(Camel):
    data: list[RunRecord]
    pagination: Pagination


class ReproducedAggregate(Camel):
    """The runs of one benchmark, model and harness, summarised."""

    benchmark_slug: str
    model_slug: str
    harness: str
    run_count: int
    median: float
    mean: float
    min: float
    max: float
    last_run_at: str


class ReproducedList(Camel):
    data: list[ReproducedAggregate]
    cached_at: str


def timestamp(at: datetime) -> str:
    """A time as the skill writes it: UTC, milliseconds, `Z`."""
    at = at.astimezone(UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
