"""What the service keeps of an accepted job: its summary, and the fingerprint that outlives it.

The summary is what Your bench shows and what publishing builds the public run record
from (`registry.datarepo.models.PublishedRun`): the job's identity, what ran, its score
and per-task rewards, usage, versions and digests, its settings, and the boards it fits.
`facts` is placement's own input (`registry.placement.JobFacts`), so publishing can place
the job again against the boards open by then. Everything is JSON: it is stored as is,
with key-like values replaced as in the stored files.

The fingerprint is the part kept when the job is deleted (DESIGN.md, flow 5): the job's
id and each trial's task, start, finish and token counts, enough to recognise the same
job uploaded again (`bench-published-before`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.checks.boards import Boards
from app.checks.evidence import IssuedSpec
from app.uploads.redact import redact_text
from hbench.jobs.consistency import task_digests
from hbench.jobs.manifest import Manifest
from hbench.jobs.models import Job, Trial
from registry.placement import EntrySettings
from registry.settings import agent_options, settings_from_config

SUMMARY_FORMAT = 1
"""Bumped when a key changes meaning, so readers of older rows can tell."""


@dataclass(frozen=True)
class UploadSize:
    """The upload as it arrived."""

    compressed_bytes: int
    unpacked_bytes: int
    files: int


def job_summary(
    job: Job,
    manifest: Manifest,
    boards: Boards,
    issued: IssuedSpec | None,
    size: UploadSize,
    *,
    tasks_pinned: bool = False,
) -> dict[str, Any]:
    """The stored summary of an accepted job (the module docstring lists what it holds)."""
    agent = job.config.agents[0]
    facts = boards.facts
    entry = EntrySettings.of(facts) if facts is not None else None
    summary = redacted(
        {
            "format": SUMMARY_FORMAT,
            "job_id": job.job_id,
            "job_name": job.job_name,
            "dataset": facts.dataset if facts is not None else None,
            "datasets": job.dataset_refs,
            "task_names": sorted({t.task_name for t in job.results if t.task_name}),
            "agent": {
                "name": agent.label,
                "version": _first(t.agent_version for t in job.results),
                "kwargs": dict(agent.kwargs),
                "options": agent_options(agent.model_dump(mode="json")),
            },
            "model": _first(t.model for t in job.results) or agent.model_name,
            "n_attempts": job.n_attempts,
            "n_trials": len(job.results),
            "n_errored_trials": sum(t.errored for t in job.results),
            "n_retries": job.n_retries,
            "score": job.score,
            "pass_at_k": {str(k): value for k, value in sorted(job.pass_at_k.items())},
            "results": task_rewards(job),
            "usage": {
                "input_tokens": job.n_input_tokens,
                "cached_tokens": job.n_cache_tokens,
                "output_tokens": job.n_output_tokens,
                "cost_usd": job.cost_usd,
            },
            "started_at": _iso(job.started_at),
            "finished_at": _iso(job.finished_at),
            "harbor_version": job.harbor_version,
            "hbench_version": manifest.hbench_version,
            "manifest_digest": manifest.digest,
            "spec_digest": manifest.spec_digest,
            "environment": {
                "type": job.environment.type,
                "import_path": job.environment.import_path,
            },
            "comparability": settings_from_config(job.config.model_dump(mode="json")),
            "entry_settings": entry.to_json_dict() if entry is not None else None,
            "issued_run": (
                {"id": issued.run_id, "board": issued.board, "entry": issued.entry}
                if issued is not None
                else None
            ),
            "boards": boards_json(boards),
            "facts": facts.to_json_dict() if facts is not None else None,
            "task_digests": task_digests(job),
            "tasks_pinned": tasks_pinned,
            "upload": {
                "compressed_bytes": size.compressed_bytes,
                "unpacked_bytes": size.unpacked_bytes,
                "files": size.files,
            },
        }
    )
    # The digest of the settings as stored, so publishing computes the same one again.
    settings = summary["entry_settings"]
    summary["entry_settings_digest"] = (
        EntrySettings.model_validate(settings).digest() if settings is not None else None
    )
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


def boards_json(boards: Boards) -> dict[str, Any]:
    """The boards a job fits, the one it would open, and why it fits none."""
    return {
        "fits": list(boards.fits),
        "opens": boards.opens.to_json_dict() if boards.opens is not None else None,
        "notes": [{"code": p.code, "message": p.message} for p in boards.notes],
    }


def task_rewards(job: Job) -> dict[str, list[float | None]]:
    """Each task's primary rewards in attempt order; None for a trial without one (counts 0)."""
    rewards: dict[str, list[float | None]] = defaultdict(list)
    for trial in sorted(job.results, key=lambda t: (t.task_name or "", t.attempt or 0)):
        rewards[trial.task_name or trial.trial_name].append(trial.reward)
    return dict(rewards)


def fingerprint(job: Job) -> dict[str, Any]:
    """What recognises this job after it is deleted: its id and each trial's traces."""
    ordered = sorted(job.results, key=lambda t: (t.task_name or "", _iso(t.started_at) or ""))
    trials: list[Any] = [_trial_print(t) for t in ordered]
    return {"job_id": job.job_id, "trials": trials}


def _trial_print(trial: Trial) -> dict[str, Any]:
    return {
        "task": trial.task_name,
        "started_at": _iso(trial.started_at),
        "finished_at": _iso(trial.finished_at),
        "input_tokens": trial.n_input_tokens,
        "cached_tokens": trial.n_cache_tokens,
        "output_tokens": trial.n_output_tokens,
    }


def _first[T](values: Iterable[T | None]) -> T | None:
    return next((value for value in values if value is not None), None)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
