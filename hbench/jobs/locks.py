"""The locks: `lock.json`'s planned trials and task digests against `result.json`, the trial
folders and each trial's own `lock.json`."""

from __future__ import annotations

from collections import Counter, defaultdict

from hbench.errors import Problem
from hbench.jobs.agreement import MAX_NAMED, RERUN
from hbench.jobs.models import Job


def plan_problems(job: Job) -> list[Problem]:
    """`job-plan-mismatch` when the trials, `result.json` and `lock.json` plan different runs."""
    if job.n_locked_trials is None:
        return []
    problems = []
    if job.n_total_trials != job.n_locked_trials:
        problems.append(
            f"result.json plans {job.n_total_trials} trials, but lock.json {job.n_locked_trials}"
        )
    planned = Counter(t.task_name for t in job.locked_tasks)
    per_task = job.n_attempts * max(len(job.config.agents), 1)
    uneven = sorted(task for task, n in planned.items() if n != per_task)
    if uneven:
        problems.append(
            f"lock.json plans other than {per_task} trials (attempts x agents) for {_named(uneven)}"
        )
    ran = Counter(t.task_name or "?" for t in job.results)
    unplanned = sorted(task for task, n in ran.items() if n > planned.get(task, 0))
    if unplanned:
        problems.append(f"trials ran that lock.json never planned, of {_named(unplanned)}")
    return [
        Problem(
            "job-plan-mismatch",
            f"{what}: trials or lock entries were added or removed. {RERUN}",
            str(job.path / "lock.json"),
        )
        for what in problems
    ]


def digest_problems(job: Job) -> list[Problem]:
    """`task-digest-inconsistent` when a task's digest differs between the job's lock, its
    entries, and its trials' locks."""
    if not job.locked_tasks:
        return []
    locked: dict[str, set[str]] = defaultdict(set)
    for entry in job.locked_tasks:
        locked[entry.task_name].add(entry.digest)
    problems = [
        f"lock.json gives the task {task} {len(digests)} different digests"
        for task, digests in sorted(locked.items())
        if len(digests) > 1
    ]
    for trial in job.results:
        digests = locked.get(trial.task_name or "", set())
        if trial.task_digest is None:
            problems.append(f"{trial.trial_name} has no lock.json with its task's digest")
        elif trial.task_digest not in digests:
            problems.append(
                f"{trial.trial_name}/lock.json gives its task {trial.task_name} the digest "
                f"{trial.task_digest[:19]}…, which the job's lock.json does not plan"
            )
    return [
        Problem(
            "task-digest-inconsistent",
            f"{what}: the locks were edited, or trials of other task files were copied in. {RERUN}",
            str(job.path / "lock.json"),
        )
        for what in problems
    ]


def task_digests(job: Job) -> dict[str, str]:
    """Each task's digest, as the job's `lock.json` records it (one per task when the job is
    consistent; the first one read otherwise)."""
    digests: dict[str, str] = {}
    for entry in job.locked_tasks:
        digests.setdefault(entry.task_name, entry.digest)
    return digests


def _named(items: list[str]) -> str:
    more = len(items) - MAX_NAMED
    return ", ".join(items[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "")
