"""The store checks of a job's seal: its manifest present, matching the bytes, written by a
recent enough hbench, and naming this job. Listed in `app.checks.store_checks`."""

from __future__ import annotations

from app.checks.evidence import Evidence
from app.checks.table import Outcome, failed, passed, skipped
from hbench.errors import Problem
from hbench.jobs.identity import identity_problems
from hbench.jobs.manifest import MANIFEST_NAME
from hbench.jobs.verification import check_hbench_version, compare

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


def _manifest_missing() -> Problem:
    return Problem(
        "manifest-missing",
        f"the job has no {MANIFEST_NAME}, so nothing shows it is unchanged since it ran. Run "
        "benchmarks with `hbench run --config spec.json`, which seals the job",
        MANIFEST_NAME,
    )
