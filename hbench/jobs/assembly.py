"""Assemble a `Job` from the files read: its trials numbered by attempt, the plan its lock
records, the retries its log names, and its scores and usage recomputed from the trials."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path

from hbench.jobs.config import JobConfig
from hbench.jobs.files import JobLockFile, JobResultFile, sum_reported
from hbench.jobs.models import EvalScore, Job, LockedTask, LoggedRetry, Trial
from hbench.jobs.scoring import mean_rewards, mean_score, pass_at_k

LOG = "job.log"

RETRY_LINE = re.compile(r"^Trial (\S+) failed with exception (\S+)\. Retrying in ")
"""The line Harbor 0.25's `TrialQueue` logs (at debug level, which job.log keeps) per retry."""


def _locked_tasks(lock: JobLockFile, trials: list[Trial]) -> tuple[LockedTask, ...]:
    """The job's planned trials, each task named as its trials' results name it: Harbor's
    locks name a task from a folder by the folder, `name`, where its results give the
    task's `[task].name`, `org/name` (as every task `harbor tasks init` makes has one), and
    a plan is matched to the trials by name. Only that is read as the same task: a result
    naming another task is still one the lock never planned."""
    named = {
        t.locked_task_name: t.task_name
        for t in trials
        if t.locked_task_name and t.task_name and t.task_name.endswith(f"/{t.locked_task_name}")
    }
    return tuple(
        LockedTask(task_name=named.get(t.task.name, t.task.name), digest=t.task.digest)
        for t in lock.trials
    )


def assemble(
    path: Path,
    config: JobConfig,
    result: JobResultFile,
    lock: JobLockFile | None,
    trials: list[Trial],
) -> Job:
    """The job at `path`, from its files as read and its trials."""
    numbered = _number_attempts(trials)
    ended = [t for t in numbered if t.has_result]
    evals = _evals(ended)
    return Job(
        path=path,
        job_id=str(result.id),
        job_name=config.job_name or path.name,
        config=config,
        harbor_version=lock.harbor.version if lock else None,
        started_at=result.started_at,
        updated_at=result.updated_at,
        finished_at=result.finished_at,
        n_total_trials=result.n_total_trials,
        n_locked_trials=len(lock.trials) if lock else None,
        locked_tasks=_locked_tasks(lock, ended) if lock else (),
        lock_created_at=lock.created_at if lock else None,
        trials=tuple(numbered),
        reported=result.stats,
        logged_retries=_logged_retries(path / LOG),
        score=mean_score([t.rewards for t in ended]),
        pass_at_k=next(iter(evals.values())).pass_at_k if len(evals) == 1 else {},
        evals=evals,
        n_input_tokens=sum_reported([t.n_input_tokens for t in ended]),
        n_cache_tokens=sum_reported([t.n_cache_tokens for t in ended]),
        n_output_tokens=sum_reported([t.n_output_tokens for t in ended]),
        cost_usd=sum_reported([t.cost_usd for t in ended]),
    )


def _logged_retries(log: Path) -> tuple[LoggedRetry, ...]:
    if not log.is_file():
        return ()
    with log.open(encoding="utf-8", errors="replace") as lines:
        matches = (RETRY_LINE.match(line) for line in lines)
        return tuple(LoggedRetry(trial_name=m[1], exception_type=m[2]) for m in matches if m)


def _number_attempts(trials: list[Trial]) -> list[Trial]:
    """Number each task's trials 1..n per agent and model group, in the order they started."""
    groups: dict[tuple[str, str], list[Trial]] = defaultdict(list)
    for trial in trials:
        if trial.has_result:
            groups[(trial.evals_key or "", trial.task_name or "")].append(trial)
    numbered = {
        trial.trial_name: trial.model_copy(update={"attempt": index})
        for group in groups.values()
        for index, trial in enumerate(sorted(group, key=_start_order), start=1)
    }
    ordered = [numbered.get(t.trial_name, t) for t in trials]
    return sorted(
        ordered,
        key=lambda t: (
            not t.has_result,
            t.evals_key or "",
            t.task_name or "",
            t.attempt or 0,
            t.trial_name,
        ),
    )


def _start_order(trial: Trial) -> tuple[float, str]:
    started = trial.started_at.timestamp() if trial.started_at else math.inf
    return started, trial.trial_name


def _evals(ended: list[Trial]) -> dict[str, EvalScore]:
    groups: dict[str, list[Trial]] = defaultdict(list)
    for trial in ended:
        groups[trial.evals_key or ""].append(trial)
    return {
        key: EvalScore(
            key=key,
            n_trials=len(group),
            n_errors=sum(t.errored for t in group),
            mean=mean_score([t.rewards for t in group]),
            metrics=mean_rewards([t.rewards for t in group]),
            pass_at_k=pass_at_k((t.task_name or "", t.rewards) for t in group),
        )
        for key, group in sorted(groups.items())
    }
