"""Seal a job: hash every file of its folder and write its `manifest.json` atomically.

hbench seals a job after every run and resume; a folder holding links or special files is
refused, as is a spec digest other than the one `hbench run` recorded in the folder.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hbench import __version__
from hbench.atomic import atomic_writer
from hbench.digest import sha256_files
from hbench.errors import HbenchError, Problem
from hbench.jobs.identity import job_identity
from hbench.jobs.manifest import (
    FORMAT,
    MANIFEST_NAME,
    UNSEALED,
    Manifest,
    ManifestFile,
    load_manifest,
)
from hbench.jobs.spec_record import (
    read_recorded_spec,
    recorded_spec_digest,
    recorded_spec_problems,
)
from hbench.jobs.tree import scan

Progress = Callable[[int], None]
"""Called with the number of bytes hashed since its last call."""


def seal(
    job_dir: Path, *, spec_digest: str | None = None, progress: Progress | None = None
) -> Manifest:
    """Hash every file of a Harbor job folder and write its `manifest.json` atomically.

    `spec_digest` is the issued spec's digest (`hbench.digest.spec_digest`). Without one,
    the seal takes the previous manifest's (a reseal after a resume), else the digest of
    the spec `hbench run` recorded in the folder (a run stopped before it was sealed), so
    an issued run stays tied to its spec. Refuses (`job-unsafe-file`) folders holding
    links or special files, and (`manifest-spec-mismatch`) a digest other than the
    recorded spec's.
    """
    _require_folder(job_dir)
    harbor_version, job_id = job_identity(job_dir)
    tree = scan(job_dir)
    unsafe = [unsafe_problem(u.path, u.what) for u in tree.unsafe]
    unsafe += [
        unsafe_problem(e.path, "is a folder")
        for e in tree.entries
        if e.path == MANIFEST_NAME and e.kind == "dir"
    ]
    if unsafe:
        raise HbenchError.from_problems(unsafe)
    recorded = read_recorded_spec(job_dir)
    digest = spec_digest or _previous_spec_digest(job_dir, job_id) or _recorded_digest(recorded)
    mismatch = recorded_spec_problems(digest, recorded)
    if mismatch:
        raise HbenchError.from_problems(mismatch)
    files = sorted((e.path, e.size) for e in tree.files if e.path not in UNSEALED)
    observed = hash_files(job_dir, files, progress)
    manifest = Manifest(
        format=FORMAT,
        hbench_version=__version__,
        harbor_version=harbor_version,
        job_id=job_id,
        spec_digest=digest,
        files=[ManifestFile(path=p, size=s, sha256=h) for p, (s, h) in sorted(observed.items())],
    )
    with atomic_writer(job_dir / MANIFEST_NAME) as stream:
        stream.write(manifest.to_json())
    return manifest


def hash_files(
    job_dir: Path, files: list[tuple[str, int]], progress: Progress | None
) -> dict[str, tuple[int, str]]:
    """Every file's (size, sha256); a file that can't be read is an error with its code."""
    try:
        return sha256_files(job_dir, files, progress=progress)
    except OSError as exc:
        where = Path(exc.filename).relative_to(job_dir) if exc.filename else job_dir
        raise HbenchError(
            "job-file-unreadable",
            f"could not read {where}: {exc.strerror}; give yourself read access to the "
            "job's files (for example chmod -R u+r on the job folder)",
            path=str(where),
        ) from None


def _recorded_digest(recorded: bytes | None) -> str | None:
    return None if recorded is None else recorded_spec_digest(recorded)


def _previous_spec_digest(job_dir: Path, job_id: str) -> str | None:
    try:
        previous = load_manifest(job_dir)
    except HbenchError:
        return None
    return previous.spec_digest if previous.job_id == job_id else None


def _require_folder(job_dir: Path) -> None:
    if not job_dir.is_dir():
        raise HbenchError.from_problems([not_found(job_dir)])


def not_found(job_dir: Path) -> Problem:
    """`job-not-found` for a job path that is no folder."""
    return Problem("job-not-found", f"{job_dir} is not a folder")


def unsafe_problem(path: str, what: str) -> Problem:
    """`job-unsafe-file` for something in a job folder that is not a folder or regular file."""
    return Problem(
        "job-unsafe-file",
        f"{path} {what}; a job folder may hold only folders and regular files",
        path,
    )
