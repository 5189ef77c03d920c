"""The store checks of the job itself: Harbor wrote it, it finished and its files agree;
it ran one dataset, one agent and one model, 1 to 5 attempts per task; its retries reran
only crashes. Listed in `app.checks.store_checks`."""

from __future__ import annotations

from app.checks.evidence import Evidence
from app.checks.table import Outcome, failed, failed_one, passed, skipped
from hbench.errors import Problem
from hbench.jobs.completeness import completeness_problems
from hbench.jobs.config import DEFAULT_RETRY_EXCLUSIONS
from hbench.jobs.consistency import consistency_problems
from hbench.jobs.models import Job
from registry.placement import MAX_ATTEMPTS

# The job: readable, finished and complete.


def job_readable(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return failed(evidence.job_problems or [_not_a_job()])
    return passed(f"a Harbor {job.harbor_version or '(unknown)'} job of {len(job.trials)} trials")


def job_complete(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return skipped("the job can't be read")
    problems = completeness_problems(job)
    if not problems and not job.results:
        problems = [
            Problem(
                "job-no-trials",
                f"the job {job.job_name} ran no trial: its datasets and task filters matched "
                "no task. Check the dataset's name and version and any task_names, then run "
                "the benchmark again",
            )
        ]
    if problems:
        return failed(problems)
    return passed(f"finished, with a result for all {job.n_total_trials} planned trials")


def job_consistent(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return skipped("the job can't be read")
    problems = consistency_problems(job)
    if problems:
        return failed(problems)
    return passed(
        f"the {len(job.results)} trials' rewards, times and task digests agree with what "
        "their verifiers wrote, the job's totals and its lock.json"
    )


# What ran: one dataset, one agent, one model, 1 to 5 attempts.


def one_dataset(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return skipped("the job can't be read")
    sources = [d.ref_label for d in job.datasets]
    if job.config.tasks:
        sources.append(f"{len(job.config.tasks)} tasks named on their own (`tasks`)")
    if len(sources) > 1:
        return failed_one(
            "job-several-datasets",
            f"the job ran {len(sources)} sets of tasks ({', '.join(sources)}); a job "
            "counts for one dataset. Run each dataset as a job of its own "
            "(`-d name@version`) and upload each",
            "config.json",
        )
    if not sources:
        return skipped("config.json names no dataset and no task")
    local = job.config.tasks or any(d.name is None for d in job.datasets)
    if local:
        return passed(f"one set of tasks from a folder ({sources[0]}): it fits no board")
    return passed(f"one dataset, {sources[0]}")


def one_agent(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return skipped("the job can't be read")
    labels = job.agent_names
    repeated = len(job.config.agents) > 1 and len(labels) == 1 and len(job.model_names) <= 1
    if len(labels) > 1 or repeated:
        named = ", ".join(labels) if len(labels) > 1 else f"{labels[0]}, listed twice or more"
        return failed_one(
            "job-several-agents",
            f"the job ran {len(job.config.agents)} agent entries ({named}); a job "
            "counts for one agent. Run each agent as a job of its own (one `-a`) "
            "and upload each",
            "config.json",
        )
    return passed(f"one agent, {labels[0]}")


def one_model(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return skipped("the job can't be read")
    models = job.model_names
    if len(models) > 1:
        return failed_one(
            "job-several-models",
            f"the job ran {len(models)} models ({', '.join(models)}); a job counts "
            "for one model. Run each model as a job of its own (one `-m`) and "
            "upload each",
            "config.json",
        )
    return passed(f"one model, {models[0]}" if models else "no model")


def attempts_in_range(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return skipped("the job can't be read")
    n = job.n_attempts
    if not 1 <= n <= MAX_ATTEMPTS:
        return failed_one(
            "job-attempts-out-of-range",
            f"the job ran {n} attempts per task; uploads take 1 to {MAX_ATTEMPTS}. "
            f"Run the benchmark again with `-k {MAX_ATTEMPTS}` or fewer",
            "config.json",
        )
    return passed(f"{n} attempt{'s' if n > 1 else ''} per task")


# How it ran: retries of crashes only.


def retries_only_crashes(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return skipped("the job can't be read")
    problems = _retry_setting_problems(job) + _retried_failures(job)
    if problems:
        return failed(problems)
    if not job.logged_retries:
        return passed("no trial was retried")
    return passed(f"{len(job.logged_retries)} retries, each of a crash")


def _retry_setting_problems(job: Job) -> list[Problem]:
    retry = job.retry
    if retry.max_retries == 0:
        return []  # nothing is retried, whatever the lists say
    fix = (
        "Run the benchmark again with only --max-retries (`hbench run -r N`), which keeps "
        "Harbor's default exclusions"
    )
    problems = []
    dropped = sorted(DEFAULT_RETRY_EXCLUSIONS - (retry.exclude_exceptions or frozenset()))
    if dropped:
        problems.append(
            Problem(
                "job-retries-not-crashes",
                f"retry.exclude_exceptions leaves out {', '.join(dropped)}, so Harbor retried "
                f"failures that count against the agent, not only crashes. {fix}",
                "config.json",
            )
        )
    if retry.include_exceptions:
        problems.append(
            Problem(
                "job-retries-not-crashes",
                "retry.include_exceptions is set "
                f"({', '.join(sorted(retry.include_exceptions))}); retries must follow "
                f"Harbor's defaults, so the same crashes rerun for everyone. {fix}",
                "config.json",
            )
        )
    return problems


def _retried_failures(job: Job) -> list[Problem]:
    return [
        Problem(
            "job-retries-not-crashes",
            f"job.log shows the trial {retry.trial_name} retried after "
            f"{retry.exception_type}, a failure that counts against the agent, not a crash; "
            "a retry may not replace it. Run the benchmark again with Harbor's default "
            "exclusions (`hbench run -r N`)",
            "job.log",
        )
        for retry in job.logged_retries
        if retry.exception_type in DEFAULT_RETRY_EXCLUSIONS
    ]


def _not_a_job() -> Problem:
    return Problem("job-not-harbor", "the upload holds no Harbor job folder")
