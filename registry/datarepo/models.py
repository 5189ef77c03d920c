"""The records the data repository holds: published runs, issued-run counts, board rows
and audit events. All are public; none names a reporter or holds a secret."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, JsonValue, StringConstraints
from pydantic.dataclasses import dataclass

from registry.evidence import Level, RunEvidence, run_levels
from registry.placement import EntrySettings
from registry.schema import DatasetRef, Digest, MetricScale, Record, Slug
from registry.signature import RunSignature

RunId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")]
GitHubHandle = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}$")]
EntryName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9._-]+-[0-9a-f]{6}$")]
RunStatus = Literal["public", "withdrawn", "taken_down"]
TakeDownReason = Literal[
    "score-cannot-be-right", "breaks-terms", "imitates-known-dataset", "owner-request"
]
AuditAction = Literal[
    "publish", "withdraw", "take_down", "open_board", "count_issued", "delete_files"
]


class RunEntry(Record):
    """The entry a run belongs to: its owner, its generated name and what it stands for."""

    owner: GitHubHandle
    name: EntryName
    settings: EntrySettings

    @property
    def key(self) -> str:
        return f"{self.owner.lower()}/{self.name}"


class RunUsage(Record):
    """The job's token totals and reported cost; null where the job reported none."""

    input_tokens: int | None = Field(default=None, ge=0, description="Cached tokens included.")
    cached_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(
        default=None, ge=0, description="Only when every trial reported its cost."
    )


class Provenance(Record):
    """Where the run ran: on someone's machine, or on GitHub Actions with verified claims."""

    kind: Literal["local", "actions"]
    repository: str | None = None
    workflow: str | None = None
    ref: str | None = None
    commit: str | None = None
    runner: str | None = Field(default=None, description="`github-hosted` or `self-hosted`.")
    # Added later: left out of the file while unknown, so earlier records keep their bytes.
    job_workflow_ref: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The workflow file the job ran, when a reusable workflow ran it.",
    )
    run_id: int | None = Field(
        default=None,
        gt=0,
        exclude_if=lambda value: value is None,
        description="The Actions run: github.com/<repository>/actions/runs/<run_id>.",
    )
    job_workflow_sha: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The commit of the workflow file the job ran.",
    )


@dataclass(config=Record.model_config)
class TrialTiming:
    """One trial of a published run, for its page: when it ran and what it used.

    Written in a run's file as a `Record` is (camelCase keys, nothing else allowed), but a
    pydantic dataclass: a large site reads close to a million of them, and pydantic makes
    a dataclass in half the time of a model.
    """

    task: str
    attempt: int = Field(ge=1, description="The trial's attempt at its task, by start time.")
    started_at: datetime | None = None
    finished_at: datetime | None = None
    input_tokens: int | None = Field(default=None, ge=0)
    cached_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)


class PublishedRun(Record):
    """One published run, in `boards/<board>/runs/<id>.json`.

    The fields after `take_down_reason` came later, for the run's page; they have
    defaults, so files written before them still parse.
    """

    id: RunId
    board: Slug
    entry: RunEntry
    job_id: str
    issued: bool = Field(description="Issued before it ran, so its board counted it.")
    model: str | None = Field(description="The model as Harbor recorded it.")
    agent_version: str | None = None
    n_attempts: int = Field(ge=1)
    results: dict[str, list[float | None]] = Field(
        min_length=1,
        description="Task name to its trials' rewards; null for an errored trial (counts 0).",
    )
    usage: RunUsage = Field(default_factory=RunUsage)
    harbor_version: str | None = None
    hbench_version: str | None = None
    provenance: Provenance
    published_at: datetime
    status: RunStatus = "public"
    status_changed_at: datetime | None = None
    take_down_reason: TakeDownReason | None = None
    manifest_digest: str | None = Field(
        default=None, description="The sealed manifest's digest: which exact files ran."
    )
    redactions: dict[str, int] = Field(
        default_factory=dict, description="File path to values replaced with [REDACTED]."
    )
    trials: list[TrialTiming] = Field(default_factory=list)
    config: dict[str, JsonValue] = Field(
        default_factory=dict, description="The job's settings that differ from Harbor's defaults."
    )
    download: str | None = Field(
        default=None, description="The service path of the redacted job's archive."
    )
    # Added later: left out of the file while unknown, so earlier records keep their bytes.
    task_digests: dict[str, Digest] = Field(
        default_factory=dict,
        exclude_if=lambda value: not value,
        description="Each task's digest from the job's lock.json: which task files ran.",
    )
    evidence: RunEvidence | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="What the service established about the job (registry/evidence.py).",
    )
    redaction_rules: dict[str, int] = Field(
        default_factory=dict,
        exclude_if=lambda value: not value,
        description="Rule id to values it replaced with [REDACTED], over the whole job.",
    )
    files_deleted_at: datetime | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="When its owner deleted the job, and its files with it: the score stays "
        "as it is, and `download` is gone.",
    )
    signature: RunSignature | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Who signed the manifest's digest, when the upload carried a Sigstore "
        "bundle the service took; the bundle is the file `signature.bundle` names.",
    )

    def levels(self) -> list[Level]:
        """What the run proves (registry/evidence.py)."""
        return run_levels(self.evidence, issued=self.issued)


class IssuedRuns(Record):
    """`boards/<board>/issued.json`: per entry key (`owner/name`), the issued runs that
    count (uploaded or expired), by their issue id."""

    entries: dict[str, list[str]] = Field(default_factory=dict)


class AuditEvent(Record):
    """One line of the audit log. It names the run and the reason, never a reporter."""

    change: str = Field(min_length=1, max_length=100, description="The change's id.")
    time: datetime
    action: AuditAction
    board: Slug | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The board; left out for a pushed run's take-down, which is on none.",
    )
    run: RunId | None = None
    reason: TakeDownReason | None = None
    note: str | None = Field(default=None, max_length=500)


class TokensPerTask(Record):
    input: float | None
    cached: float | None
    output: float | None


class RunRef(Record):
    """A run as its board row lists it."""

    id: RunId
    issued: bool
    score: float
    agent_version: str | None
    published_at: datetime
    provenance: Provenance
    evidence: list[Level] = Field(description="What the run proves (registry/evidence.py).")


class BoardRow(Record):
    """One entry on a board, recomputed from its public runs."""

    rank_group: int = Field(ge=1)
    entry: EntryName
    owner: GitHubHandle
    agent: str
    options: dict[str, JsonValue]
    prompt_template_digest: str | None
    extra_instruction_digests: list[str]
    settings_digest: str = Field(description="sha256 of the entry's settings, owner left out.")
    score: float = Field(description="Mean reward over trials, errored ones counted 0.")
    stderr: float | None
    ci_low: float | None
    ci_high: float | None
    pass_at_k: dict[str, float]
    n_tasks: int
    n_trials: int
    runs_public: int
    runs_issued: int
    runs_issued_public: int
    tokens_per_task: TokensPerTask
    cost_per_task_usd: float | None
    runs: list[RunRef]
    evidence: list[Level] = Field(description="The levels every public run of the entry holds.")


class BoardRows(Record):
    """`boards/<board>/rows.json`: the board as the site shows it."""

    board: Slug
    dataset: DatasetRef
    benchmark: str | None
    model: str
    task_count: int
    metric: str
    metric_scale: MetricScale
    settings: dict[str, JsonValue]
    rows: list[BoardRow]
    runs_withdrawn: int
    runs_taken_down: int
    tasks_pinned: bool = Field(
        description="The registry pins the digests of the board's task files; when it does "
        "not, every run on the board ran the task files of its first run."
    )


class PushedReward(Record):
    """One task's reward in a pushed summary."""

    task: str = Field(min_length=1, max_length=200)
    reward: float


class PushedRun(Record):
    """`pushed-runs/<id>.json`: a run summary pushed to `POST /v1/runs`, as the runs API
    stored it. No job backs it: it proves nothing about the score, and the site says so.
    Its free text (model, harness, notes, task names) was redacted before it was stored."""

    id: RunId
    benchmark: Slug
    model: str = Field(min_length=1, max_length=200, description="As pushed.")
    model_slug: Slug | None = Field(default=None, description="The registry's model, if named.")
    harness: str = Field(min_length=1, max_length=100)
    task_count: int = Field(ge=1)
    n_attempts: int = Field(ge=1)
    score: float = Field(ge=0, description="On the metric's scale, as pushed.")
    metric: str = Field(min_length=1, max_length=50)
    tokens_used: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)
    harbor_version: str | None = Field(default=None, max_length=50)
    cli_version: str | None = Field(default=None, max_length=50)
    results_hash: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    task_rewards: list[PushedReward] | None = None
    notes: str | None = Field(default=None, max_length=2000)
    pushed_by: GitHubHandle | None = Field(default=None, description="None when anonymous.")
    pushed_at: datetime
    # Set when a maintainer takes the run down; left out of the file until then.
    status: Literal["public", "taken_down"] = Field(
        default="public", exclude_if=lambda value: value == "public"
    )
    status_changed_at: datetime | None = Field(default=None, exclude_if=lambda v: v is None)
    take_down_reason: TakeDownReason | None = Field(default=None, exclude_if=lambda v: v is None)
    take_down_note: str | None = Field(default=None, max_length=500, exclude_if=lambda v: v is None)
