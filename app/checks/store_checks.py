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

The store checks themselves are in `app.checks.seal_checks` (the manifest),
`app.checks.job_checks` (the job and what ran) and `app.checks.issued_checks` (an issued
run's prompt and spec); this module holds their table.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.checks.board_checks import BOARD_CHECKS, PROMPT_NOT_ISSUED
from app.checks.evidence import Evidence
from app.checks.issued_checks import prompt_matches_spec, spec_digest_matches, spec_matches
from app.checks.job_checks import (
    attempts_in_range,
    job_complete,
    job_consistent,
    job_readable,
    one_agent,
    one_dataset,
    one_model,
    retries_only_crashes,
)
from app.checks.seal_checks import (
    hbench_version,
    manifest_identity,
    manifest_matches_bytes,
    manifest_present,
)
from app.checks.table import Check, CheckResult, Report, run_table
from hbench.codes import named
from hbench.errors import Problem

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
