"""Is a job finished and complete? Every gap, each with its rule code, not only the first.

A job counts only when Harbor reached the end of the run and every planned
trial (tasks x agents x attempts) ran to the end in this job. Harbor's resume
fills each gap found here (`reference/harbor.md` §4), which is what the
messages say to do.
"""

from __future__ import annotations

from collections import Counter

from hbench.errors import HbenchError, Problem
from hbench.jobs.models import Job

CANCELLED = "CancelledError"
"""What Harbor records for a trial stopped by Ctrl-C or a cancelled run."""

MAX_NAMED = 5
"""How many trials or tasks a message names before it says "and N more"."""


def completeness_problems(job: Job) -> list[Problem]:
    """Every reason the job is not a finished, complete run; empty when it is."""
    checks = (_unfinished, _results_missing, _cancelled, _foreign, _incomplete, _extra)
    return [problem for check in checks for problem in check(job)]


def require_complete(job: Job) -> Job:
    """The job itself when complete; otherwise `HbenchError` carrying every problem."""
    problems = completeness_problems(job)
    if problems:
        raise HbenchError.from_problems(problems)
    return job


def _resume(job: Job) -> str:
    return f"`hbench jobs resume -p {job.path}`"


def _unfinished(job: Job) -> list[Problem]:
    if job.finished:
        return []
    return [
        Problem(
            "job-unfinished",
            f"the job {job.job_name} did not finish: its result.json has no finished_at, so "
            f"the run was stopped (a crash, Ctrl-C or a stopped runner). Continue it with "
            f"{_resume(job)}",
            str(job.path / "result.json"),
        )
    ]


def _results_missing(job: Job) -> list[Problem]:
    return [
        Problem(
            "trial-result-missing",
            f"the trial {trial.trial_name} has no result.json: it was interrupted before it "
            f"ended. Continue the job with {_resume(job)}; Harbor deletes the folder and "
            "runs the trial again",
            str(trial.path),
        )
        for trial in job.trials
        if not trial.has_result
    ]


def _cancelled(job: Job) -> list[Problem]:
    return [
        Problem(
            "trial-cancelled",
            f"the trial {trial.trial_name} was cancelled ({CANCELLED}) when its run was "
            f"stopped, so it never ran to the end. Continue the job with {_resume(job)}, "
            "which runs cancelled trials again",
            str(trial.path),
        )
        for trial in job.results
        if trial.exception_type == CANCELLED
    ]


def _foreign(job: Job) -> list[Problem]:
    return [
        Problem(
            "trial-job-mismatch",
            f"the trial {trial.trial_name} belongs to the job {trial.job_id}, not to this "
            f"job ({job.job_id}): its folder was copied in from another run. Remove "
            f"{trial.path}, then continue the job with {_resume(job)}",
            str(trial.path),
        )
        for trial in job.trials
        if trial.job_id is not None and trial.job_id != job.job_id
    ]


def _per_task(job: Job) -> Counter[tuple[str, str]]:
    return Counter((t.evals_key or "?", t.task_name or "?") for t in job.results)


def _incomplete(job: Job) -> list[Problem]:
    ended = len(job.results)
    short = {key: n for key, n in _per_task(job).items() if n < job.n_attempts}
    if ended >= job.n_total_trials and not short:
        return []
    gaps = [
        f"{task} ({group}) has {n} of {job.n_attempts} attempts"
        for (group, task), n in sorted(short.items())
    ]
    detail = f"; {_named(gaps)}" if gaps else ""
    return [
        Problem(
            "job-incomplete",
            f"{ended} of the {job.n_total_trials} planned trials have a result{detail}. "
            f"Continue the job with {_resume(job)}; Harbor runs the missing trials",
            str(job.path),
        )
    ]


def _extra(job: Job) -> list[Problem]:
    ended = len(job.results)
    over = {key: n for key, n in _per_task(job).items() if n > job.n_attempts}
    if ended <= job.n_total_trials and not over:
        return []
    excess = [
        f"{task} ({group}) has {n} attempts, {job.n_attempts} planned"
        for (group, task), n in sorted(over.items())
    ]
    detail = f"; {_named(excess)}" if excess else ""
    return [
        Problem(
            "job-trials-extra",
            f"the job has {ended} trials with a result but planned {job.n_total_trials}"
            f"{detail}. Trial folders were added or kept from another attempt; a job can't "
            "be trimmed to its plan, so run it again in a new folder",
            str(job.path),
        )
    ]


def _named(items: list[str]) -> str:
    more = len(items) - MAX_NAMED
    return ", ".join(items[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "")
