"""The bodies `/api/local-runs` takes and answers with (../shared/spec/hbench-issue-a-run.txt).

Sizes and shapes are checked here, as `request-invalid` with the field's place; what the
registry allows (boards, models, agents, attempts) is `policy`'s business, with codes of
its own.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    StringConstraints,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from app.db.models import IssuedRunStatus
from hbench.digest import canonical_json
from registry.schema import MAX_CONCURRENT_TRIALS, MAX_SHARDS

MAX_PROMPT_TEMPLATE_CHARS = 20_000
MAX_EXTRA_INSTRUCTIONS = 8
MAX_EXTRA_INSTRUCTION_CHARS = 4_000
MAX_HARDWARE_FIELDS = 8
# Agent options are a handful of settings; a bound keeps a spec (and its row) small.
MAX_KWARGS_CHARS = 20_000

ShortName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
Passage = Annotated[str, StringConstraints(min_length=1, max_length=MAX_EXTRA_INSTRUCTION_CHARS)]
HardwareKey = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,40}$")]
HardwareValue = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)]
HttpsUrl = Annotated[str, StringConstraints(pattern=r"^https://\S+$", max_length=500)]


class Declarative(BaseModel):
    """The agent and everything it is given besides the task: its entry's settings."""

    model_config = ConfigDict(extra="forbid")

    agent: ShortName = Field(description="The agent, such as `mini-swe-agent`.")
    kwargs: dict[str, JsonValue] = Field(
        default_factory=dict, description="The agent's options, by name, as Harbor takes them."
    )
    prompt_template: str | None = Field(
        default=None,
        max_length=MAX_PROMPT_TEMPLATE_CHARS,
        description="A Jinja2 prompt template using `{{ instruction }}`; the spec names it "
        "`prompt.j2`.",
    )
    extra_instructions: list[Passage] = Field(
        default_factory=list,
        max_length=MAX_EXTRA_INSTRUCTIONS,
        description="Passages appended to every task's instruction.",
    )

    @field_validator("kwargs")
    @classmethod
    def _small_kwargs(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        size = len(canonical_json(value))
        if size > MAX_KWARGS_CHARS:
            raise ValueError(f"the options take {size} bytes as JSON; at most {MAX_KWARGS_CHARS}")
        return value


class RegistrySource(BaseModel):
    """A mirror to read the tasks from: a registry.json by URL, or by path on your machine."""

    model_config = ConfigDict(extra="forbid")

    url: HttpsUrl | None = Field(default=None, description="A registry.json at an https URL.")
    path: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = Field(
        default=None, description="A registry.json (or its folder) where the run happens."
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        if (self.url is None) == (self.path is None):
            raise ValueError('give exactly one of "url" and "path"')
        return self


class IssueRequest(BaseModel):
    """What to issue: a board, or a benchmark, task set and model; and the agent's settings."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"arena": "hbench-demo", "declarative": {"agent": "oracle"}},
                {
                    "dataset": "humanevalfix@1.0",
                    "model": "qwen2.5-coder-7b",
                    "n_attempts": 3,
                    "declarative": {"agent": "mini-swe-agent", "kwargs": {"temperature": 0}},
                    "hardware": {"gpu": "1x A100 80GB"},
                },
            ]
        },
    )

    arena: ShortName | None = Field(
        default=None,
        description="The board's slug, the last part of its address. Leave it out to choose "
        "with `dataset`, `task_set` and `model` instead.",
    )
    dataset: ShortName | None = Field(default=None, description="The benchmark as `name@version`.")
    task_set: ShortName | None = Field(
        default=None, description="The benchmark's task set; `full` when left out."
    )
    model: ShortName | None = Field(default=None, description="The model's registry slug.")
    n_attempts: int = Field(default=1, description="Attempts per task: 1 or 3.")
    declarative: Declarative
    registry: RegistrySource | None = Field(
        default=None, description="Read the tasks from this mirror instead of the usual registry."
    )
    environment: ShortName | None = Field(
        default=None,
        description="Where the trials run: a Harbor environment type the board's policy "
        "allows (its `environments`: `docker`, the default, and remote sandboxes such as "
        "`daytona` or `modal` where the board lists them), or an environment class the "
        "benchmark allows besides, such as hbench's sandbox for the demo "
        "(`hbench.sandbox.environment:BubblewrapEnvironment`), for a machine without Docker. "
        "It never changes which board the run counts on.",
    )
    n_concurrent_trials: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CONCURRENT_TRIALS,
        description="Trials run at once (Harbor's `n_concurrent_trials`, 4 when left out), "
        "up to the board's `maxConcurrentTrials`. It never changes which board the run "
        "counts on.",
    )
    shards: int = Field(
        default=1,
        ge=1,
        le=MAX_SHARDS,
        description="Split the run's tasks into this many shards, each with its own spec and "
        "run token, run and uploaded on its own (up to the board's `maxShards`); the run is "
        "scored, published and counted once, when every shard has arrived. 1, the default, "
        "issues one spec and one token, as ever.",
    )
    hardware: dict[HardwareKey, HardwareValue] = Field(
        default_factory=dict,
        max_length=MAX_HARDWARE_FIELDS,
        description='Up to 8 short fields about your machine, such as `{"gpu": "…"}`.',
    )
    # Accepted only to be refused with its own code (`entry-name-generated`) rather than
    # as an unknown field; left out of the API page, since no value is ever right.
    name: SkipJsonSchema[JsonValue] = None

    @property
    def names_entry(self) -> bool:
        """Whether the body tried to name the entry (any value, null included)."""
        return "name" in self.model_fields_set


class EnvironmentVariable(BaseModel):
    """A variable the run needs. Secrets are named, never given: `value` is null for them."""

    model_config = ConfigDict(from_attributes=True)

    name: str = Field(examples=["HARBOR_TELEMETRY"])
    value: str | None = Field(description="The value to set; null when you supply it.")
    secret: bool = Field(description="Whether the value is a secret of yours, such as a key.")
    description: str


class Execution(BaseModel):
    """How the run's trials run, as its spec sets it: never part of what it is compared by."""

    environment: str = Field(
        description="The Harbor environment type, such as `docker` or `daytona`, or the "
        "environment class (`module:Class`) the trials run in."
    )
    n_concurrent_trials: int = Field(description="Trials run at once.")


class IssuedShard(BaseModel):
    """One shard of a sharded run: its own run id, spec and run token (shown once)."""

    index: int = Field(description="The shard's place, from 1.")
    run_id: uuid.UUID = Field(description="The shard's own id; its upload is bound to it.")
    job_name: str
    tasks: list[str] = Field(description="The tasks the shard runs, sorted.")
    spec: dict[str, JsonValue] = Field(description="The shard's Harbor job config.")
    spec_digest: str
    token: str = Field(description="The shard's run token (`hpr_…`), shown here only.")


class ShardsInfo(BaseModel):
    """How far a sharded run is: its shards, and those uploaded."""

    count: int
    uploaded: int
    missing: list[int] = Field(description="The shards not uploaded yet, by place from 1.")


class IssuedRunCreated(BaseModel):
    """An issued run: where it counts, the spec to run, and its run token (shown once)."""

    run_id: uuid.UUID
    board: str = Field(description="The board the run counts on.")
    submission: str = Field(
        description="The entry the run joins, named by the service, such as `oracle-a3f9c1`."
    )
    job_name: str = Field(description="The job folder `hbench run` writes, under `jobs/`.")
    spec: dict[str, JsonValue] = Field(
        description="The Harbor job config to write to `spec.json` and run as it is."
    )
    spec_digest: str = Field(description="sha256 of the spec's canonical JSON.")
    prompt_template: str | None = Field(
        description="The text to write to `prompt.j2` beside `spec.json`, or null."
    )
    token: str | None = Field(
        description="The run token (`hpr_…`), shown in this answer only; null for a sharded "
        "run, whose shards have a token each."
    )
    issued_at: datetime
    expires_at: datetime = Field(description="When the run token stops working.")
    environment: list[EnvironmentVariable] = Field(
        description="The variables the run needs; secrets are named, never given."
    )
    execution: Execution = Field(description="Where the trials run, and how many at once.")
    shards: list[IssuedShard] = Field(
        default_factory=list,
        description="For a run issued with `shards` above 1, each shard's spec and token: "
        "run and upload each one; `spec` and `token` above are then the whole run's, and "
        "the token uploads nothing.",
    )


class IssuedRunInfo(BaseModel):
    """An issued run as lists show it: never its token."""

    run_id: uuid.UUID
    board: str
    submission: str
    job_name: str
    n_attempts: int
    status: IssuedRunStatus = Field(
        description="`issued` (waiting for upload), `uploaded`, `expired` or `abandoned`."
    )
    issued_at: datetime
    expires_at: datetime
    spec_digest: str
    hardware: dict[str, str]
    execution: Execution
    shards: ShardsInfo | None = Field(
        default=None, description="For a sharded run, how many of its shards are uploaded."
    )
    problem: str | None = Field(
        default=None,
        description="Why a run that stopped waiting has no job: `run-shards-missing` for a "
        "sharded run that expired with a shard not uploaded.",
    )


class IssuedRunResult(IssuedRunInfo):
    """A run and its job, once it has one: for a sharded run, the merged job."""

    job_id: uuid.UUID | None = Field(
        default=None, description="The run's job on Your bench (`/api/bench/jobs/{id}`)."
    )
    score: float | None = Field(default=None, description="The job's score.")


class IssuedRunList(BaseModel):
    runs: list[IssuedRunInfo] = Field(description="Your issued runs, newest first.")
