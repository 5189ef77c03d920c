"""What the service keeps of an accepted job: its summary, and the fingerprint that outlives it.

The summary is what Your bench shows and what publishing builds the public run record
from (`registry.datarepo.models.PublishedRun`): the job's identity, what ran, its score
and per-task rewards, usage, versions and digests, its settings, and the boards it fits.
`facts` is placement's own input (`registry.placement.JobFacts`), so publishing can place
the job again against the boards open by then. It is a `JobSummary`, stored as its JSON
(`stored()`, with key-like values replaced as in the stored files) and read back through
the model (`JobSummary.of(row)`), so every reader names its keys as fields; `format` says
which meaning the keys have, and keys added later have defaults, so older rows read too.
A deleted job keeps a `KeptSummary`.

The fingerprint is the part kept when the job is deleted (DESIGN.md, flow 5): the job's
id and each trial's task, start, finish and token counts, enough to recognise the same
job uploaded again (`bench-published-before`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.checks.boards import Boards
from app.checks.evidence import IssuedSpec
from app.uploads.redact import redact_text
from hbench.jobs.consistency import task_digests
from hbench.jobs.manifest import Manifest
from hbench.jobs.models import Job, Trial
from registry.placement import EntrySettings, JobFacts
from registry.settings import agent_options, settings_from_config

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


def job_summary(
    job: Job,
    manifest: Manifest,
    boards: Boards,
    issued: IssuedSpec | None,
    size: UploadSize,
    *,
    tasks_pinned: bool = False,
    redaction_rules: Mapping[str, int] | None = None,
    ci: SummaryCi | None = None,
    signature: SummarySignature | None = None,
) -> JobSummary:
    """The stored summary of an accepted job (the module docstring lists what it holds).

    Everything read from the job is redacted (`redacted`); the redaction counts and the
    CI binding are the service's own, added after.
    """
    agent = job.config.agents[0]
    facts = boards.facts
    entry = EntrySettings.of(facts) if facts is not None else None
    built = JobSummary(
        format=SUMMARY_FORMAT,
        job_id=job.job_id,
        job_name=job.job_name,
        dataset=facts.dataset if facts is not None else None,
        datasets=job.dataset_refs,
        task_names=sorted({t.task_name for t in job.results if t.task_name}),
        agent=SummaryAgent(
            name=agent.label,
            version=_first(t.agent_version for t in job.results),
            arguments=dict(agent.kwargs),
            options=agent_options(agent.model_dump(mode="json")),
        ),
        model=_first(t.model for t in job.results) or agent.model_name,
        n_attempts=job.n_attempts,
        n_trials=len(job.results),
        n_errored_trials=sum(t.errored for t in job.results),
        n_retries=job.n_retries,
        score=job.score,
        pass_at_k={str(k): value for k, value in sorted(job.pass_at_k.items())},
        results=task_rewards(job),
        usage=SummaryUsage(
            input_tokens=job.n_input_tokens,
            cached_tokens=job.n_cache_tokens,
            output_tokens=job.n_output_tokens,
            cost_usd=job.cost_usd,
        ),
        started_at=_iso(job.started_at),
        finished_at=_iso(job.finished_at),
        harbor_version=job.harbor_version,
        hbench_version=manifest.hbench_version,
        manifest_digest=manifest.digest,
        spec_digest=manifest.spec_digest,
        environment=SummaryEnvironment(
            type=job.environment.type, import_path=job.environment.import_path
        ),
        comparability=settings_from_config(job.config.model_dump(mode="json")),
        entry_settings=entry.to_json_dict() if entry is not None else None,
        issued_run=(
            SummaryIssuedRun(id=issued.run_id, board=issued.board, entry=issued.entry)
            if issued is not None
            else None
        ),
        boards=boards_json(boards),
        facts=facts.to_json_dict() if facts is not None else None,
        task_digests=task_digests(job),
        tasks_pinned=tasks_pinned,
        upload=size,
    )
    summary = JobSummary.model_validate(redacted(built.stored()))
    # The digest of the settings as stored, so publishing computes the same one again.
    settings = summary.entry_settings
    summary.entry_settings_digest = (
        EntrySettings.model_validate(settings).digest() if settings is not None else None
    )
    summary.redaction_rules = dict(redaction_rules or {})
    summary.ci = ci
    summary.signature = signature
    return summary


def redacted(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary with key-like values replaced, as the stored files have them: it is read
    from the job as it arrived, so an agent option such as `api_key` would otherwise be kept.

    The JSON text is redacted whole, so `"api_key": "…"` is seen as the assignment it is;
    should that ever leave text that is not JSON, each string is redacted on its own.
    """
    text = json.dumps(summary, ensure_ascii=False)
    cleaned = redact_text(text)
    if not cleaned.count:
        return summary
    try:
        value: dict[str, Any] = json.loads(cleaned.text)
    except ValueError:
        value = _strings_redacted(summary)
    return value


def _strings_redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value).text
    if isinstance(value, dict):
        return {key: _strings_redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_strings_redacted(item) for item in value]
    return value


def boards_json(boards: Boards) -> SummaryBoards:
    """The boards a job fits, the one it would open, and why it fits none."""
    return SummaryBoards(
        fits=list(boards.fits),
        opens=boards.opens.to_json_dict() if boards.opens is not None else None,
        notes=[SummaryBoardNote(code=p.code, message=p.message) for p in boards.notes],
    )


def task_rewards(job: Job) -> dict[str, list[float | None]]:
    """Each task's primary rewards in attempt order; None for a trial without one (counts 0)."""
    rewards: dict[str, list[float | None]] = defaultdict(list)
    for trial in sorted(job.results, key=lambda t: (t.task_name or "", t.attempt or 0)):
        rewards[trial.task_name or trial.trial_name].append(trial.reward)
    return dict(rewards)


def fingerprint(job: Job) -> dict[str, Any]:
    """What recognises this job after it is deleted: its id and each trial's traces."""
    ordered = sorted(job.results, key=lambda t: (t.task_name or "", _utc(t.started_at) or ""))
    trials: list[Any] = [_trial_print(t) for t in ordered]
    return {"job_id": job.job_id, "trials": trials}


def _trial_print(trial: Trial) -> dict[str, Any]:
    # The task's name redacted as the rest of the job is: the row keeps the print after the
    # job is deleted, and a copy's print, redacted alike, still matches it.
    task = redact_text(trial.task_name).text if trial.task_name is not None else None
    return {
        "task": task,
        "started_at": _utc(trial.started_at),
        "finished_at": _utc(trial.finished_at),
        "input_tokens": trial.n_input_tokens,
        "cached_tokens": trial.n_cache_tokens,
        "output_tokens": trial.n_output_tokens,
    }


def _first[T](values: Iterable[T | None]) -> T | None:
    return next((value for value in values if value is not None), None)


def _utc(moment: datetime | None) -> str | None:
    """A trial's moment in UTC, as Harbor writes it (`Z`, kept as `+00:00`): the same moment
    spelled in another offset (`+01:00`) is the same trial, so a copy respelled so is still
    recognised (`bench-published-before`). A moment without an offset is taken as UTC."""
    if moment is None:
        return None
    return (moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
