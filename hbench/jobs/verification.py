"""Verify a job against its manifest: every missing, extra and changed file, not only the first.

Verifying hashes every file again. `compare` is its pure core, so the service can check an
archive whose files it hashes while streaming it, without a folder on disk.

The manifest's `spec_digest` must agree with the spec `hbench run` recorded in the job
folder, if any (`hbench.jobs.spec_record`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from packaging.version import Version

from hbench.errors import HbenchError, Problem
from hbench.jobs.identity import folder_identity_problems
from hbench.jobs.manifest import MANIFEST_NAME, UNSEALED, Manifest, ManifestFile, load_manifest
from hbench.jobs.sealing import Progress, hash_files, not_found, unsafe_problem
from hbench.jobs.spec_record import read_recorded_spec, recorded_spec_problems
from hbench.jobs.tree import scan

MIN_HBENCH_VERSION = "0.3.0"
"""The oldest hbench whose jobs the service accepts by default: the first to write manifests."""


def verify(
    job_dir: Path,
    *,
    progress: Progress | None = None,
    min_hbench_version: str = MIN_HBENCH_VERSION,
) -> list[Problem]:
    """Check a job folder against its manifest by hashing every file; return every problem.

    An empty list means the folder holds exactly the files the manifest lists, byte for
    byte, and a version of hbench at least `min_hbench_version` sealed it.
    """
    if not job_dir.is_dir():
        return [not_found(job_dir)]
    try:
        manifest = load_manifest(job_dir)
    except HbenchError as error:
        return list(error.problems)
    tree = scan(job_dir)
    files = [(e.path, e.size) for e in tree.files if e.path not in UNSEALED]
    observed = hash_files(job_dir, files, progress)
    return [
        *(unsafe_problem(u.path, u.what) for u in tree.unsafe),
        *compare(manifest, observed),
        *check_hbench_version(manifest, min_hbench_version),
        *folder_identity_problems(job_dir, manifest),
        *_recorded_spec_problems(job_dir, manifest),
    ]


def compare(manifest: Manifest, observed: Mapping[str, tuple[int, str]]) -> list[Problem]:
    """Every difference between a manifest and the files seen, as (size, sha256) by path.

    `observed` may include `manifest.json` itself and its signature; they are ignored.
    Problems come sorted by path: each missing, extra and changed file, with the path in
    the message.
    """
    listed = {f.path: f for f in manifest.files}
    problems: list[Problem] = []
    for path in sorted((listed.keys() | observed.keys()) - UNSEALED):
        sealed, seen = listed.get(path), observed.get(path)
        if seen is None:
            problems.append(
                Problem(
                    "manifest-file-missing",
                    f"{path} is listed in {MANIFEST_NAME} but is not in the job folder",
                    path,
                )
            )
        elif sealed is None:
            problems.append(
                Problem(
                    "manifest-file-extra",
                    f"{path} is in the job folder but not listed in {MANIFEST_NAME}",
                    path,
                )
            )
        elif (sealed.size, sealed.sha256) != seen:
            problems.append(Problem("manifest-file-changed", _changed(path, sealed, seen), path))
    return problems


def check_hbench_version(manifest: Manifest, minimum: str = MIN_HBENCH_VERSION) -> list[Problem]:
    """`hbench-version-too-old` when an hbench older than `minimum` sealed the job."""
    if Version(manifest.hbench_version) >= Version(minimum):
        return []
    return [
        Problem(
            "hbench-version-too-old",
            f"hbench {manifest.hbench_version} sealed this job; hbench {minimum} or later "
            "is needed",
            MANIFEST_NAME,
        )
    ]


def _recorded_spec_problems(job_dir: Path, manifest: Manifest) -> list[Problem]:
    return recorded_spec_problems(manifest.spec_digest, read_recorded_spec(job_dir))


def _changed(path: str, sealed: ManifestFile, seen: tuple[int, str]) -> str:
    size, sha256 = seen
    if size != sealed.size:
        how = f"it is {size} bytes, sealed as {sealed.size}"
    else:
        how = f"its sha256 is {sha256[:12]}…, sealed as {sealed.sha256[:12]}…"
    return f"{path} changed since the job was sealed: {how}"
