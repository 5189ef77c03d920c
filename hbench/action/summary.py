"""The step summary of a run: its entry, its score, one row per trial, and the job's link."""

from __future__ import annotations

from typing import Any

from hbench.jobs.models import Job


def cell(value: object) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return " ".join(str(value).split()).replace("|", "\\|")


def job_summary(
    job: Job,
    details: dict[str, Any],
    job_id: str | None,
    job_url: str | None,
    *,
    runner: str | None = None,
    evidence: list[str] | None = None,
) -> str:
    lines = [f"### hbench: {cell(job.job_name)}", "", "| | |", "|---|---|"]
    if details.get("submission"):
        lines.append(
            f"| entry | `{cell(details['submission'])}` on board `{cell(details.get('board'))}` |"
        )
    if runner is not None:
        lines.append(f"| runner | {cell(runner)} |")
    execution = details.get("execution")
    if isinstance(execution, dict):
        where, at_once = execution.get("environment"), execution.get("n_concurrent_trials")
        lines.append(f"| trials | in {cell(where)}, {cell(at_once)} at once |")
    lines.append(f"| score | {job.score:.3f} over {len(job.trials)} trials |")
    for k, value in sorted(job.pass_at_k.items()):
        lines.append(f"| pass@{k} | {value:.3f} |")
    if job_id is not None and job_url is not None:
        lines.append(f"| job | [{cell(job_id)}]({job_url}), private until you publish it |")
    else:
        lines.append("| job | not uploaded |")
    if evidence is not None:
        lines.append(f"| evidence | {cell(', '.join(evidence) or 'none stated')} |")
    lines += ["", "| task | attempt | reward | error |", "|---|---|---|---|"]
    for trial in sorted(job.trials, key=lambda t: (t.task_name or "", t.attempt or 0)):
        reward = "-" if trial.reward is None else f"{trial.reward:g}"
        lines.append(
            f"| {cell(trial.task_name or trial.trial_name)} | {trial.attempt or '-'} | "
            f"{reward} | {cell(trial.exception_type or '')} |"
        )
    return "\n".join(lines) + "\n"
