"""The check tables an uploaded job goes through. Each check is a small function of the evidence.

Two tables. `STORE_CHECKS` decide whether the job may be stored at all: its seal, that it
finished, what ran, its retries and attempts, and for an issued run that it ran its spec.
`BOARD_CHECKS` (`app.checks.board_checks`) decide which boards it fits: tasks from a
registry, no prompt unless issued, its environment, a board's cell. A job that passes the
first is kept privately on Your bench whatever the second says; each board check's failure
becomes a note saying why it fits no board, and publishing it is refused with that code.

Every check runs, and every failure is kept, not only the first: a refusal lists them all
(STYLE.md, "verification as tables of checks"). A check that can't run because what it
reads could not be read is *skipped*, and the check that reads that part reports why.
The checks are on the bytes as they arrived, before redaction touched them. Each entry
names the codes it can give; `docs/rule-codes.md` ("Upload checks") explains each code.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.checks.board_checks import BOARD_CHECKS, PROMPT_NOT_ISSUED, prompt_outcome
from app.checks.evidence import Evidence
from app.checks.spec_match import spec_differences
from app.checks.table import (
    Check,
    CheckResult,
    Outcome,
    Report,
    failed,
    passed,
    run_table,
    skipped,
)
from hbench.codes import named
from hbench.errors import Problem
from hbench.jobs.completeness import completeness_problems
from hbench.jobs.config import DEFAULT_RETRY_EXCLUSIONS
from hbench.jobs.consistency import consistency_problems
from hbench.jobs.identity import identity_problems
from hbench.jobs.manifest import MANIFEST_NAME
from hbench.jobs.models import Job
from hbench.jobs.verification import check_hbench_version, compare
from registry.placement import MAX_ATTEMPTS

# The manifest: present, matching the bytes, recent enough, naming this job.


def manifest_present(evidence: Evidence) -> Outcome:
    manifest = evidence.manifest
    if manifest is None:
        return failed(evidence.manifest_problems or [_manifest_missing()])
    return passed(f"{MANIFEST_NAME} lists {len(manifest.files)} files")


def manifest_matches_bytes(evidence: Evidence) -> Outcome:
    if evidence.manifest is None:
        return skipped(f"there is no readable {MANIFEST_NAME} to compare the files with")
    fix = (
        "; the job changed after hbench sealed it: upload it exactly as sealed, or run the "
        "benchmark again for a new result"
    )
    problems = compare(evidence.manifest, evidence.observed)
    if problems:
        return failed([Problem(p.code, p.message + fix, p.path) for p in problems])
    return passed(f"all {len(evidence.manifest.files)} files match their size and sha256")


def hbench_version(evidence: Evidence) -> Outcome:
    manifest = evidence.manifest
    if manifest is None:
        return skipped(f"there is no readable {MANIFEST_NAME} to read hbench's version from")
    problems = check_hbench_version(manifest, evidence.min_hbench_version)
    if problems:
        fix = "; upgrade hbench (pip install -U hbench) and run the benchmark again with it"
        return failed([Problem(p.code, p.message + fix, p.path) for p in problems])
    return passed(f"sealed by hbench {manifest.hbench_version}")


def manifest_identity(evidence: Evidence) -> Outcome:
    manifest, identity = evidence.manifest, evidence.identity
    if manifest is None:
        return skipped(f"there is no readable {MANIFEST_NAME}")
    if identity is None:
        return skipped("result.json or lock.json can't be read (see the job-readable check)")
    problems = identity_problems(manifest, identity.harbor_version, identity.job_id)
    if problems:
        fix = (
            f"; {MANIFEST_NAME} was taken from another job or edited: upload the job as "
            "hbench sealed it, or run the benchmark again for a new result"
        )
        return failed([Problem(p.code, p.message + fix, p.path) for p in problems])
    return passed(f"names job {identity.job_id} and Harbor {identity.harbor_version}")


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
        return failed(
            [
                Problem(
                    "job-several-datasets",
                    f"the job ran {len(sources)} sets of tasks ({', '.join(sources)}); a job "
                    "counts for one dataset. Run each dataset as a job of its own "
                    "(`-d name@version`) and upload each",
                    "config.json",
                )
            ]
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
        return failed(
            [
                Problem(
                    "job-several-agents",
                    f"the job ran {len(job.config.agents)} agent entries ({named}); a job "
                    "counts for one agent. Run each agent as a job of its own (one `-a`) "
                    "and upload each",
                    "config.json",
                )
            ]
        )
    return passed(f"one agent, {labels[0]}")


def one_model(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return skipped("the job can't be read")
    models = job.model_names
    if len(models) > 1:
        return failed(
            [
                Problem(
                    "job-several-models",
                    f"the job ran {len(models)} models ({', '.join(models)}); a job counts "
                    "for one model. Run each model as a job of its own (one `-m`) and "
                    "upload each",
                    "config.json",
                )
            ]
        )
    return passed(f"one model, {models[0]}" if models else "no model")


def attempts_in_range(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return skipped("the job can't be read")
    n = job.n_attempts
    if not 1 <= n <= MAX_ATTEMPTS:
        return failed(
            [
                Problem(
                    "job-attempts-out-of-range",
                    f"the job ran {n} attempts per task; uploads take 1 to {MAX_ATTEMPTS}. "
                    f"Run the benchmark again with `-k {MAX_ATTEMPTS}` or fewer",
                    "config.json",
                )
            ]
        )
    return passed(f"{n} attempt{'s' if n > 1 else ''} per task")


# How it ran: retries of crashes only; an issued run's prompt only as issued.


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


def prompt_matches_spec(evidence: Evidence) -> Outcome:
    """An issued run used a prompt only if its spec has one: a store check, since the run's
    config must be its spec."""
    if evidence.issued is None:
        return skipped("not an issued run: its prompt decides the boards it fits")
    return prompt_outcome(evidence)


# An issued run: its config is its spec, and the manifest names that spec.


def spec_matches(evidence: Evidence) -> Outcome:
    job, issued = evidence.job, evidence.issued
    if issued is None:
        return skipped("not an issued run: uploaded with an API token")
    if job is None:
        return skipped("the job can't be read")
    differences = spec_differences(issued.spec, job.config, digest=issued.spec_digest)
    if not differences:
        return passed("config.json equals the issued spec, jobs_dir and max_retries aside")
    fix = (
        "hbench run takes only --jobs-dir and --max-retries besides the spec; run the "
        "run's spec.json again as it was issued, unedited"
    )
    return failed(
        [
            Problem(
                "local-spec-mismatch",
                f"config.json differs from the spec run {issued.run_id} was issued with: "
                f"{d.describe()}. {fix}",
                f"config.json:{d.field}",
            )
            for d in differences
        ]
    )


def spec_digest_matches(evidence: Evidence) -> Outcome:
    manifest, issued = evidence.manifest, evidence.issued
    if issued is None:
        return skipped("not an issued run: uploaded with an API token")
    if manifest is None:
        return skipped(f"there is no readable {MANIFEST_NAME}")
    if manifest.spec_digest == issued.spec_digest:
        return passed(f"{MANIFEST_NAME} names the issued spec, {issued.spec_digest[:12]}…")
    recorded = f"{manifest.spec_digest[:12]}…" if manifest.spec_digest else "no spec"
    return failed(
        [
            Problem(
                "run-spec-digest-mismatch",
                f"{MANIFEST_NAME} records {recorded}, but run {issued.run_id} was issued "
                f"with spec {issued.spec_digest[:12]}…: the job ran from another spec.json. "
                "Run this run's own spec.json (`hbench run --config spec.json`), or upload "
                "the job with the run token of the run whose spec it ran",
                MANIFEST_NAME,
            )
        ]
    )


STORE_CHECKS: tuple[Check, ...] = (
    Check(
        "manifest-present", "The job has a readable manifest.json", manifest_present,
        named("manifest-missing", "manifest-invalid", "job-file-unreadable", "job-json-invalid"),
    ),
    Check(
        "manifest-matches-bytes", "Every file matches the manifest", manifest_matches_bytes,
        named("manifest-file-missing", "manifest-file-extra", "manifest-file-changed"),
    ),
    Check(
        "hbench-version", "A recent enough hbench sealed it", hbench_version,
        named("hbench-version-too-old", "manifest-invalid"),
    ),
    Check(
        "manifest-identity", "The manifest names this job", manifest_identity,
        named("manifest-invalid"),
    ),
    Check(
        "job-readable", "Harbor wrote the job", job_readable,
        named(
            "job-not-harbor", "job-not-found", "job-json-invalid", "job-result-missing",
            "trial-result-missing", "job-file-unreadable", "job-unsafe-file",
        ),
    ),
    Check(
        "job-complete", "The job finished, every trial with a result", job_complete,
        named(
            "job-unfinished", "job-incomplete", "job-trials-extra", "trial-cancelled",
            "trial-job-mismatch", "trial-result-missing", "job-no-trials",
        ),
    ),
    Check("one-dataset", "It ran one dataset", one_dataset, named("job-several-datasets")),
    Check("one-agent", "It ran one agent", one_agent, named("job-several-agents")),
    Check("one-model", "It ran one model", one_model, named("job-several-models")),
    Check(
        "attempts-in-range", "1 to 5 attempts per task", attempts_in_range,
        named("job-attempts-out-of-range"),
    ),
    Check(
        "job-consistent", "Its files agree with each other", job_consistent,
        named(
            "trial-reward-mismatch", "job-result-mismatch", "trial-time-outside-job",
            "job-plan-mismatch", "task-digest-inconsistent",
        ),
    ),
    Check(
        "retries-only-crashes", "Retries reran only crashes", retries_only_crashes,
        named("job-retries-not-crashes"),
    ),
    Check(
        "prompt-as-issued", "An issued run used a prompt only if issued with one",
        prompt_matches_spec, named(PROMPT_NOT_ISSUED),
    ),
    Check(
        "spec-matches", "An issued run's config is its spec", spec_matches,
        named("local-spec-mismatch"),
    ),
    Check(
        "spec-digest-matches", "The manifest names the issued spec", spec_digest_matches,
        named("run-spec-digest-mismatch"),
    ),
)  # fmt: skip
"""Whether the job may be stored, in the order failures are listed: integrity first, then
what ran, whether the job's files agree with each other, then how it ran, and an issued
run's spec. (Agreement comes after what ran: a config edited to name two agents also
disagrees with its lock, and the agents say more.)"""

CHECKS: tuple[Check, ...] = STORE_CHECKS + BOARD_CHECKS


@dataclass(frozen=True)
class Checked:
    """Both tables' reports: what decides storing, and what decides the boards."""

    store: Report
    boards: Report

    @property
    def results(self) -> tuple[CheckResult, ...]:
        """Every check's result, the store checks' first: what the stored job shows."""
        return self.store.results + self.boards.results

    @property
    def problems(self) -> list[Problem]:
        """Why the job can't be stored: the store checks' failures alone."""
        return self.store.problems

    @property
    def accepted(self) -> bool:
        return self.store.accepted

    @property
    def board_notes(self) -> tuple[Problem, ...]:
        """Why the job fits no board: the board checks' failures."""
        return tuple(self.boards.problems)


def check_job(evidence: Evidence) -> Checked:
    """Run both tables on an upload's evidence; each report holds every failure."""
    return Checked(run_table(STORE_CHECKS, evidence), run_table(BOARD_CHECKS, evidence))


def _manifest_missing() -> Problem:
    return Problem(
        "manifest-missing",
        f"the job has no {MANIFEST_NAME}, so nothing shows it is unchanged since it ran. Run "
        "benchmarks with `hbench run --config spec.json`, which seals the job",
        MANIFEST_NAME,
    )


def _not_a_job() -> Problem:
    return Problem("job-not-harbor", "the upload holds no Harbor job folder")
