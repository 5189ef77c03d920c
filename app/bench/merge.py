"""A sharded run's one result, from its shards' stored jobs: pure functions over their
summaries, fingerprints, checks and redaction counts (docs/runs-api.md, "Sharded runs").

The shards ran disjoint tasks of one spec, so the merged job is their union: every
task's rewards, the trials' traces, the tokens spent, the checks' worst outcome. The
score is computed again over all trials, as one job of the whole task set scores; the
run is then published and counted once, as its merged job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.db.summary import (
    JobSummary,
    SummaryBoardNote,
    SummaryBoards,
    SummaryCi,
    SummaryIssuedRun,
    SummaryShard,
    SummaryUsage,
    UploadSize,
)
from hbench.jobs.scoring import pass_at_k
from registry.evidence import RegradeOutcome, RunEvidence

STATUS_ORDER = ("failed", "skipped", "passed")
"""A check's outcomes, worst first: the merged check takes its shards' worst."""
REGRADE_ORDER: tuple[RegradeOutcome, ...] = ("failed", "not-regradable", "agreed")
WAITING = ("running", "queued")
"""A regrade's statuses before it ends: the merged job waits while any shard's does."""
ENDED_ORDER = ("disagreed", "failed", "not_regradable", "agreed")
"""A regrade's statuses once it ended, worst first: the merged job shows its worst shard's."""


@dataclass(frozen=True)
class Shard:
    """One shard's stored job, as the merge reads it."""

    index: int  # from 0
    row_id: str
    summary: JobSummary
    fingerprint: Mapping[str, Any] | None
    checks: Sequence[Mapping[str, Any]]
    redactions: Mapping[str, int]


@dataclass(frozen=True)
class RunOf:
    """The sharded run the merged job stands for."""

    run_id: str
    job_name: str
    board: str
    entry: str
    spec_digest: str


def merged_summary(run: RunOf, shards: Sequence[Shard]) -> JobSummary:
    """The summary of the run's one job: its shards' union, scored once over all trials."""
    if not shards:
        raise ValueError("a merged job has at least one shard")
    summaries = [shard.summary for shard in sorted(shards, key=lambda s: s.index)]
    first = summaries[0]
    results: dict[str, list[float | None]] = {}
    for summary in summaries:
        results.update(summary.results)
    rewards = [reward for values in results.values() for reward in values]
    n_trials = sum(summary.n_trials for summary in summaries)
    merged = first.model_copy(deep=True)
    merged.job_id, merged.job_name = run.run_id, run.job_name
    merged.task_names = sorted({task for summary in summaries for task in summary.task_names})
    merged.task_digests = {k: v for summary in summaries for k, v in summary.task_digests.items()}
    merged.n_trials = n_trials
    merged.n_errored_trials = sum(summary.n_errored_trials for summary in summaries)
    merged.n_retries = sum(summary.n_retries for summary in summaries)
    merged.results = dict(sorted(results.items()))
    merged.score = sum(reward or 0.0 for reward in rewards) / len(rewards) if rewards else 0.0
    merged.pass_at_k = merged_pass_at_k(summaries, results)
    merged.usage = merged_usage([summary.usage for summary in summaries])
    merged.started_at = min((s.started_at for s in summaries if s.started_at), default=None)
    merged.finished_at = max((s.finished_at for s in summaries if s.finished_at), default=None)
    merged.manifest_digest = digest_of([s.manifest_digest or "" for s in summaries])
    merged.spec_digest = run.spec_digest
    merged.issued_run = SummaryIssuedRun(id=run.run_id, board=run.board, entry=run.entry)
    merged.boards = merged_boards(run.board, [summary.boards for summary in summaries])
    merged.facts = merged_facts(run.run_id, [summary.facts for summary in summaries])
    merged.tasks_pinned = all(summary.tasks_pinned for summary in summaries)
    merged.upload = merged_size([summary.upload for summary in summaries])
    merged.redaction_rules = summed([summary.redaction_rules for summary in summaries])
    merged.ci = merged_ci([summary.ci for summary in summaries])
    merged.shards = [
        SummaryShard(
            index=shard.index + 1,
            job=shard.row_id,
            job_id=shard.summary.job_id,
            job_name=shard.summary.job_name,
            manifest_digest=shard.summary.manifest_digest,
            tasks=list(shard.summary.task_names),
            score=shard.summary.score,
        )
        for shard in sorted(shards, key=lambda s: s.index)
    ]
    return merged


def merged_pass_at_k(
    summaries: Sequence[JobSummary], results: Mapping[str, Sequence[float | None]]
) -> dict[str, float]:
    """pass@k over every task, where each shard had it (every trial a plain pass or fail)."""
    if not all(summary.pass_at_k for summary in summaries):
        return {}
    outcomes = [
        (task, {"reward": reward} if reward is not None else None)
        for task, values in results.items()
        for reward in values
    ]
    return {str(k): value for k, value in sorted(pass_at_k(outcomes).items())}


def merged_usage(usages: Sequence[SummaryUsage]) -> SummaryUsage:
    def total(values: list[int | None]) -> int | None:
        known = [value for value in values if value is not None]
        return sum(known) if known else None

    costs = [usage.cost_usd for usage in usages if usage.cost_usd is not None]
    return SummaryUsage(
        input_tokens=total([usage.input_tokens for usage in usages]),
        cached_tokens=total([usage.cached_tokens for usage in usages]),
        output_tokens=total([usage.output_tokens for usage in usages]),
        cost_usd=sum(costs) if costs else None,
    )


def merged_boards(board: str, boards: Sequence[SummaryBoards]) -> SummaryBoards:
    """The run's board, unless a shard's upload found it can't keep it (its notes)."""
    notes = [
        SummaryBoardNote(code=note.code, message=f"shard {index + 1}: {note.message}")
        for index, shard in enumerate(boards)
        for note in shard.notes
    ]
    fits = [] if notes or any(board not in shard.fits for shard in boards) else [board]
    return SummaryBoards(fits=fits, opens=None, notes=notes)


def merged_facts(run_id: str, facts: Sequence[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """Placement's facts of the whole run: the shards' tasks, digests and trials together."""
    if not facts or any(fact is None for fact in facts):
        return None
    known = [fact for fact in facts if fact is not None]
    merged = dict(known[0])
    merged["job_id"] = run_id
    merged["task_names"] = sorted({task for fact in known for task in fact.get("task_names", [])})
    merged["trials"] = [trial for fact in known for trial in fact.get("trials", [])]
    merged["task_digests"] = {
        task: digest for fact in known for task, digest in (fact.get("task_digests") or {}).items()
    }
    return merged


def merged_size(sizes: Sequence[UploadSize | None]) -> UploadSize | None:
    known = [size for size in sizes if size is not None]
    if not known:
        return None
    return UploadSize(
        compressed_bytes=sum(size.compressed_bytes for size in known),
        unpacked_bytes=sum(size.unpacked_bytes for size in known),
        files=sum(size.files for size in known),
    )


def merged_ci(bindings: Sequence[SummaryCi | None]) -> SummaryCi | None:
    """The run's one workflow run, when every shard was bound to it; else None (the
    upload refuses mixed shards, `run-shard-mixed`, so this is all or none)."""
    if not bindings or any(binding is None for binding in bindings):
        return None
    known = [binding for binding in bindings if binding is not None]
    if mixed_workflow_runs(known):
        return None
    first = known[0]
    return SummaryCi(
        bound=True,
        run_on_ci=all(binding.run_on_ci for binding in known),
        runner_environment=first.runner_environment,
        run_id=first.run_id,
        run_attempt=first.run_attempt,
    )


def workflow_run_of(binding: SummaryCi | None) -> tuple[int | None, int | None] | None:
    """Which workflow run (id, attempt) an upload was bound to; None when unbound."""
    return None if binding is None else (binding.run_id, binding.run_attempt)


def mixed_workflow_runs(bindings: Sequence[SummaryCi | None]) -> bool:
    """Whether the shards' uploads came from more than one workflow run (or some bound to
    one and some not)."""
    return len({workflow_run_of(binding) for binding in bindings}) > 1


def merged_checks(shards: Sequence[Shard]) -> list[dict[str, Any]]:
    """Each rule once, with its shards' worst outcome and their notes, shard by shard."""
    rules: dict[str, dict[str, Any]] = {}
    for shard in sorted(shards, key=lambda s: s.index):
        for check in shard.checks:
            rule = str(check.get("rule"))
            merged = rules.setdefault(rule, {**check, "note": None})
            status = str(check.get("status"))
            if rank(status) < rank(str(merged.get("status"))):
                merged["status"] = status
            if check.get("note"):
                note = f"shard {shard.index + 1}: {check['note']}"
                merged["note"] = f"{merged['note']}; {note}" if merged["note"] else note
    return list(rules.values())


def rank(status: str) -> int:
    return STATUS_ORDER.index(status) if status in STATUS_ORDER else len(STATUS_ORDER)


def merged_redactions(shards: Sequence[Shard]) -> dict[str, int]:
    """Values redacted per file, each file named under its shard's job folder."""
    return {
        f"{shard.summary.job_name}/{path}": count
        for shard in sorted(shards, key=lambda s: s.index)
        for path, count in shard.redactions.items()
    }


def merged_fingerprint(run_id: str, shards: Sequence[Shard]) -> dict[str, Any]:
    """The run's fingerprint: its id, and every shard's trials, so a copy of any shard's
    job is recognised once the run counts (`bench-published-before`)."""
    trials = [
        trial
        for shard in sorted(shards, key=lambda s: s.index)
        for trial in (shard.fingerprint or {}).get("trials") or []
    ]
    ordered = sorted(trials, key=lambda t: (str(t.get("task")), str(t.get("started_at") or "")))
    return {"job_id": run_id, "trials": ordered}


def summed(counts: Sequence[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for count in counts:
        for key, value in count.items():
            total[key] = total.get(key, 0) + value
    return dict(sorted(total.items()))


def digest_of(parts: Sequence[str]) -> str:
    """`sha256:` of the shards' manifest digests, one a line, in shard order."""
    return "sha256:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def merged_evidence(shards: Sequence[RunEvidence], ci: bool) -> RunEvidence:
    """What the service established about the run: what it established about every shard
    (the worst regrade, and its note), with the run on CI when every shard was."""
    if not shards:
        raise ValueError("a merged job has at least one shard")
    worst = min(shards, key=lambda e: REGRADE_ORDER.index(e.regrade))
    return RunEvidence(
        consistent=all(e.consistent for e in shards),
        tasks_pinned=all(e.tasks_pinned for e in shards),
        regrade=worst.regrade,
        regrade_note=worst.regrade_note,
        ci=ci and all(e.ci for e in shards),
    )


def merged_regrade(shards: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's regrade as Your bench and the API show it (`regrade_json` of each shard's,
    in shard order): a shard still waiting, else the worst shard's outcome, with the shard
    named in the note and every shard's differing trials; agreed only when every one did."""
    if not shards:
        raise ValueError("a merged job has at least one shard")
    total = len(shards)
    for status in WAITING:
        for index, regrade in enumerate(shards, 1):
            if regrade["status"] == status:
                note = f"shard {index} of {total} is {status} for its regrade"
                return {"status": status, "note": note, "differences": []}
    index, worst = min(enumerate(shards, 1), key=lambda pair: ENDED_ORDER.index(pair[1]["status"]))
    if worst["status"] == "agreed":
        note = f"each of its {total} shards was regraded, and every graded trial agreed"
        return {"status": "agreed", "note": note, "differences": []}
    said = worst["note"] or "no reason was recorded"
    return {
        "status": worst["status"],
        "note": f"shard {index} of {total}: {said}",
        "differences": [d for regrade in shards for d in regrade["differences"]],
    }
