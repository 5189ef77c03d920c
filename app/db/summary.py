"""A job's stored summary: what the service keeps of an accepted job, as a typed model.

The summary is what Your bench shows and what publishing builds the public run record
from (`registry.datarepo.models.PublishedRun`): the job's identity, what ran, its score
and per-task rewards, usage, versions and digests, its settings, and the boards it fits.
`facts` is placement's own input (`registry.placement.JobFacts`), so publishing can place
the job again against the boards open by then. It is a `JobSummary`, stored as its JSON
(`stored()`) in the job's row (`app.db.models.Job.summary`) and read back through the
model (`JobSummary.of(row)`), so every reader names its keys as fields; `format` says which
meaning the keys have, and keys added later have defaults, so older rows read too. A
deleted job keeps a `KeptSummary`. The upload's checks make it (`app.checks.summarize`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from registry.placement import EntrySettings, JobFacts

if TYPE_CHECKING:
    from hbench.provenance import SignedDigest

SUMMARY_FORMAT = 1
"""Bumped when a key changes meaning, so readers of older rows can tell."""


@dataclass(frozen=True)
class UploadSize:
    """The upload as it arrived."""

    compressed_bytes: int
    unpacked_bytes: int
    files: int


class _Part(BaseModel):
    """A part of the stored summary: keys the model does not know are left out, and a key
    stored as null where the field has a default of another kind reads as that default (a
    job deleted before jobs had task digests kept `"task_digests": null`)."""

    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _nulls_as_defaults(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        defaulted = _defaulted_keys(cls)
        return {
            key: value for key, value in data.items() if value is not None or key not in defaulted
        }


@cache
def _defaulted_keys(part: type[_Part]) -> frozenset[str]:
    """The keys of a part whose fields default to something other than null: worked out
    once per class (asking a field for its default inspects its factory's signature, and
    a job's summary is read part by part many times an upload)."""
    fields = {field.alias or name: field for name, field in part.model_fields.items()}
    return frozenset(
        key
        for key, field in fields.items()
        if not field.is_required()
        and field.get_default(call_default_factory=True, validated_data={}) is not None
    )


class SummaryAgent(_Part):
    """The agent that ran, as the job's config and trials name it."""

    model_config = ConfigDict(validate_by_name=True, serialize_by_alias=True)

    name: str
    version: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict, alias="kwargs")
    """The agent's kwargs in the job's config (stored as `kwargs`)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """The options that make its entry (`registry.settings.agent_options`)."""


class SummaryUsage(_Part):
    """The job's tokens and cost, as Harbor counted them; None where it counted none."""

    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


class SummaryEnvironment(_Part):
    """Where the trials ran: Harbor's environment type, or its `module:Class`."""

    type: str | None = None
    import_path: str | None = None


class SummaryIssuedRun(_Part):
    """The issued run the job was uploaded as."""

    id: str
    board: str
    entry: str


class SummaryBoardNote(_Part):
    """Why the job fits no board: the code publishing it is refused with."""

    code: str
    message: str


class SummaryBoards(_Part):
    """The boards the job fits, the one it would open, and why it fits none."""

    fits: list[str] = Field(default_factory=list)
    opens: dict[str, Any] | None = None
    """The board publishing would open (`registry.placement.OpenBoard`, as its file)."""
    notes: list[SummaryBoardNote] = Field(default_factory=list)

    @property
    def opens_slug(self) -> str | None:
        slug = self.opens.get("slug") if self.opens is not None else None
        return str(slug) if slug is not None else None


class SummaryCi(_Part):
    """The workflow run an issued run's upload was bound to by its OIDC token."""

    bound: bool = True
    run_on_ci: bool = False
    runner_environment: str | None = None
    run_id: int | None = None
    run_attempt: int | None = None


class SummarySignature(_Part):
    """A Sigstore bundle the upload carried that passed the `signature` check
    (`app.checks.signature`): who signed the manifest's digest, and the bundle itself, which
    publishing writes beside the run in the data repository."""

    digest: str
    issuer: str
    workflow_ref: str
    workflow_sha: str
    repository: str | None = None
    repository_sha: str | None = None
    run_url: str | None = None
    runner: str | None = None
    log_index: int
    logged_at: datetime
    bundle_json: str

    @classmethod
    def of(cls, signed: SignedDigest, bundle_json: str) -> SummarySignature:
        signer = signed.signer
        return cls(
            digest=signed.digest,
            issuer=signer.issuer or "",
            workflow_ref=signer.workflow_ref or "",
            workflow_sha=signer.workflow_sha or "",
            repository=signer.repository,
            repository_sha=signer.repository_sha,
            run_url=signer.run_url,
            runner=signer.runner,
            log_index=signed.log_index,
            logged_at=signed.logged_at,
            bundle_json=bundle_json,
        )


class SummaryShard(_Part):
    """One shard of a merged sharded run: its stored job and what it ran."""

    index: int
    """From 1."""
    job: str
    """The shard's job row id on Your bench."""
    job_id: str
    job_name: str
    manifest_digest: str | None = None
    tasks: list[str] = Field(default_factory=list)
    score: float = 0.0


class KeptSummary(_Part):
    """What a deleted job's summary keeps: its identity, and which task files it ran (so
    its board keeps one set of them); results and usage go with its files."""

    format: int = SUMMARY_FORMAT
    job_id: str
    job_name: str
    task_digests: dict[str, str] = Field(default_factory=dict)
    """Each task's digest from the job's lock.json (added later: empty in older rows)."""

    @classmethod
    def of(cls, row: Stored) -> Self:
        """The summary a stored job row holds."""
        return cls.model_validate(row.summary)

    def stored(self) -> dict[str, Any]:
        """The summary as the row stores it: JSON, one key per field."""
        return self.model_dump(mode="json")


class JobSummary(KeptSummary):
    """The stored summary of an accepted job (the module docstring lists what it holds).

    Keys added after the first rows were written have defaults, so every stored row reads.
    """

    dataset: str | None = None
    datasets: list[str] = Field(default_factory=list)
    task_names: list[str] = Field(default_factory=list)
    agent: SummaryAgent
    model: str | None = None
    n_attempts: int
    n_trials: int = 0
    n_errored_trials: int = 0
    n_retries: int = 0
    score: float
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    results: dict[str, list[float | None]]
    """Each task's primary rewards in attempt order (`task_rewards`)."""
    usage: SummaryUsage = Field(default_factory=SummaryUsage)
    started_at: str | None = None
    finished_at: str | None = None
    harbor_version: str | None = None
    hbench_version: str | None = None
    manifest_digest: str | None = None
    spec_digest: str | None = None
    environment: SummaryEnvironment = Field(default_factory=SummaryEnvironment)
    comparability: dict[str, Any] = Field(default_factory=dict)
    """The comparable settings of the job's config (`registry.settings`)."""
    entry_settings: dict[str, Any] | None = None
    """What the job's entry stands for (`registry.placement.EntrySettings`, as its file)."""
    entry_settings_digest: str | None = None
    issued_run: SummaryIssuedRun | None = None
    boards: SummaryBoards
    facts: dict[str, Any] | None = None
    """Placement's own input (`registry.placement.JobFacts`, as its file)."""
    tasks_pinned: bool = False
    """Every task's digest is the one its benchmark pins (added later: False before)."""
    upload: UploadSize | None = None
    redaction_rules: dict[str, int] = Field(default_factory=dict)
    """Values redaction replaced over the whole job, by rule id (added later: empty)."""
    ci: SummaryCi | None = None
    """The workflow run the upload was bound to; None for an unbound upload."""
    signature: SummarySignature | None = None
    """The signature of the manifest's digest the upload carried, when it passed."""
    shards: list[SummaryShard] = Field(default_factory=list)
    """For the merged job of a sharded run, its shards' jobs (app/bench/merge.py); empty
    for any other job."""

    def job_facts(self) -> JobFacts | None:
        """The facts placement reads, as the upload recorded them."""
        return JobFacts.model_validate(self.facts) if self.facts else None

    def settings(self) -> EntrySettings:
        """What the job's entry stands for; for a row without them, the agent alone."""
        if self.entry_settings:
            return EntrySettings.model_validate(self.entry_settings)
        return EntrySettings(agent=self.agent.name, options=self.agent.options)


class Stored(Protocol):
    """A stored job row (`app.db.models.Job`): its summary is JSON."""

    @property
    def summary(self) -> Mapping[str, Any]: ...
