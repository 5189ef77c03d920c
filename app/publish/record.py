"""The public run record a published job becomes: pure, from what its upload stored.

`published_run` builds the `PublishedRun` the data repository keeps
(`registry.datarepo.models`), from the job's stored summary (`app.checks.summarize`), its
fingerprint and redaction counts (per file, and per rule from the summary), the board and
entry publishing chose, and where the run came from. Nothing secret is in it: the summary
was built from the redacted files.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from app.db.summary import JobSummary, SummarySignature
from registry.datarepo import layout
from registry.datarepo.models import (
    Provenance,
    PublishedRun,
    RunEntry,
    RunUsage,
    TrialTiming,
)
from registry.evidence import RunEvidence
from registry.signature import RunSignature

DOWNLOAD_PATH = "/api/bench/jobs/{id}/download"
RUNNER_KINDS = {"github-hosted", "self-hosted"}


def run_id_of(job_row_id: object) -> str:
    """A published run's id: its job's id on hbench, so Your bench and the board agree."""
    return str(job_row_id)


def download_path(job_row_id: object) -> str:
    return DOWNLOAD_PATH.format(id=job_row_id)


def published_run(
    summary: JobSummary,
    *,
    run_id: str,
    board: str,
    entry: RunEntry,
    issued: bool,
    provenance: Provenance,
    published_at: datetime,
    fingerprint: Mapping[str, Any] | None,
    redactions: Mapping[str, int],
    evidence: RunEvidence | None = None,
) -> PublishedRun:
    """The job as its board and its run page show it, with what the service established."""
    usage = summary.usage
    return PublishedRun(
        id=run_id,
        board=board,
        entry=entry,
        job_id=summary.job_id,
        issued=issued,
        model=summary.model,
        agent_version=summary.agent.version,
        n_attempts=summary.n_attempts,
        results=summary.results,
        usage=RunUsage(
            input_tokens=usage.input_tokens,
            cached_tokens=usage.cached_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=usage.cost_usd,
        ),
        harbor_version=summary.harbor_version,
        hbench_version=summary.hbench_version,
        provenance=provenance,
        published_at=published_at,
        manifest_digest=summary.manifest_digest,
        redactions=dict(redactions),
        trials=trial_timings(fingerprint),
        config=dict(summary.comparability),
        download=download_path(run_id),
        task_digests=dict(summary.task_digests),
        evidence=evidence,
        # Counted by the upload (app/bench/service.py); empty for jobs uploaded before.
        redaction_rules=dict(summary.redaction_rules),
        signature=run_signature(summary.signature, board, run_id),
    )


def run_signature(kept: SummarySignature | None, board: str, run_id: str) -> RunSignature | None:
    """Who signed the run's manifest digest, as the upload's `signature` check found it;
    the bundle is written at the path it names (`PublishRunChange.bundle`)."""
    if kept is None:
        return None
    return RunSignature(
        digest=kept.digest,
        issuer=kept.issuer,
        workflow_ref=kept.workflow_ref,
        workflow_sha=kept.workflow_sha,
        repository=kept.repository,
        repository_sha=kept.repository_sha,
        run_url=kept.run_url,
        runner=kept.runner,
        log_index=kept.log_index,
        logged_at=kept.logged_at,
        bundle=layout.signature_file(board, run_id),
    )


def trial_timings(fingerprint: Mapping[str, Any] | None) -> list[TrialTiming]:
    """Each trial's start, finish and tokens, numbered by start within its task."""
    trials = [t for t in (fingerprint or {}).get("trials") or [] if isinstance(t, dict)]
    ordered = sorted(trials, key=lambda t: (str(t.get("task")), str(t.get("started_at") or "")))
    attempts: dict[str, int] = {}
    timings = []
    for trial in ordered:
        task = str(trial.get("task") or "?")
        attempts[task] = attempts.get(task, 0) + 1
        timings.append(
            TrialTiming(
                task=task,
                attempt=attempts[task],
                started_at=trial.get("started_at"),
                finished_at=trial.get("finished_at"),
                input_tokens=trial.get("input_tokens"),
                cached_tokens=trial.get("cached_tokens"),
                output_tokens=trial.get("output_tokens"),
            )
        )
    return timings


def provenance_of(stored: Mapping[str, Any] | None) -> Provenance:
    """Where the run ran: `actions` with the verified OIDC claims the issued run kept
    (`app.auth.claims.ActionsClaims.provenance`), else `local`.

    The claims may sit at the top of the run's provenance or under `oidc`, beside what
    the issuer declared (`hardware`), which is not verified and is not published here.
    """
    claims = _claims(stored or {})
    if claims is None:
        return Provenance(kind="local")
    runner = claims.get("runner_environment")
    return Provenance(
        kind="actions",
        repository=claims.get("repository"),
        workflow=claims.get("workflow_ref") or claims.get("job_workflow_ref"),
        ref=claims.get("ref"),
        commit=claims.get("sha"),
        runner=runner if runner in RUNNER_KINDS else None,
        job_workflow_ref=claims.get("job_workflow_ref"),
        run_id=_run_id(claims.get("run_id")),
        job_workflow_sha=claims.get("job_workflow_sha"),
    )


def _run_id(value: object) -> int | None:
    """The Actions run id: a decimal string in the OIDC claims, kept as a number."""
    text = str(value) if isinstance(value, int | str) else ""
    return int(text) if text.isdecimal() and int(text) > 0 else None


def _claims(stored: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for candidate in (stored, stored.get("oidc"), stored.get("actions")):
        if isinstance(candidate, Mapping) and candidate.get("repository") and candidate.get("sha"):
            return candidate
    return None
