"""The summary of an accepted job made from its checked files, and the fingerprint that
outlives it.

`job_summary` makes the stored summary (`app.db.summary.JobSummary`) from the job, its
manifest, the boards it fits and its issued run, every value read from the job redacted
as the stored files are. The fingerprint is the part kept when the job is deleted
(DESIGN.md, flow 5): the job's id and each trial's task, start, finish and token counts,
enough to recognise the same job uploaded again (`bench-published-before`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from app.checks.boards import Boards
from app.checks.evidence import IssuedSpec
from app.db.summary import (
    SUMMARY_FORMAT,
    JobSummary,
    SummaryAgent,
    SummaryBoardNote,
    SummaryBoards,
    SummaryCi,
    SummaryEnvironment,
    SummaryIssuedRun,
    SummarySignature,
    SummaryUsage,
    UploadSize,
)
from app.uploads.redact import redact_text
from hbench.jobs.locks import task_digests
from hbench.jobs.manifest import Manifest
from hbench.jobs.models import Job, Trial
from registry.placement import EntrySettings
from registry.settings import agent_options, settings_from_config


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
