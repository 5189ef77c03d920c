"""The store checks of an issued run: it used a prompt only as issued, its config is its
spec, and its manifest names that spec. Listed in `app.checks.store_checks`."""

from __future__ import annotations

from app.checks.board_checks import prompt_outcome
from app.checks.evidence import Evidence
from app.checks.spec_match import spec_differences
from app.checks.table import Outcome, failed, failed_one, passed, skipped
from hbench.errors import Problem
from hbench.jobs.manifest import MANIFEST_NAME


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
    return failed_one(
        "run-spec-digest-mismatch",
        f"{MANIFEST_NAME} records {recorded}, but run {issued.run_id} was issued "
        f"with spec {issued.spec_digest[:12]}…: the job ran from another spec.json. "
        "Run this run's own spec.json (`hbench run --config spec.json`), or upload "
        "the job with the run token of the run whose spec it ran",
        MANIFEST_NAME,
    )
