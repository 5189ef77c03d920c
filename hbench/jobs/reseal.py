"""Before a sealed job is resumed: its seal must still hold, but for what Harbor's resume changes.

Resuming ends with a fresh seal, so a job edited after it was sealed and then resumed
would come out sealed as if Harbor had written the edits. `check_resumable` refuses that
before Harbor starts. It allows only what an earlier resume of the same job, stopped
part way, leaves behind, as Harbor 0.25 does it (the package's `harbor/job.py` and
`harbor/cli/jobs.py`):

- `Job.run()` rewrites the job's `config.json`, `lock.json` and `result.json`; it keeps
  `result.json`'s `id` and `lock.json`'s `harbor` version, so the manifest must still
  name them (`folder_identity_problems`).
- `Job._init_logger` opens `job.log` for appending when it resumes: the file may grow,
  but must begin with the bytes sealed (retries are counted from it).
- `Job._maybe_init_existing_job` deletes every trial folder without a `result.json`: a
  sealed folder may vanish whole when the seal lists no `result.json` in it.
- Trials it runs get folders of new names (`<task>__<shortuuid>`): the files of a
  folder the seal knows nothing of are new trials.

`harbor job resume` (`cli/jobs.py`, `resume`) also deletes, first, the trial folders
whose result records an exception named by `-f` (default `CancelledError`, which hbench
keeps). A sealed job has none: hbench seals only after Harbor exits 0, and a cancelled
trial re-raises (`harbor/trial/trial.py`, `Trial.run`), so the run fails. A sealed
folder that vanished while its `result.json` was sealed is therefore refused.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from hbench.errors import HbenchError, Problem
from hbench.jobs.identity import folder_identity_problems
from hbench.jobs.manifest import MANIFEST_NAME, Manifest, ManifestFile, load_manifest
from hbench.jobs.sealing import Progress, hash_files, unsafe_problem
from hbench.jobs.tree import scan
from hbench.jobs.verification import compare

REWRITTEN: Final = frozenset({"config.json", "lock.json", "result.json"})
"""The job's files Harbor's `Job.run()` writes again on every resume."""
APPENDED: Final = frozenset({"job.log"})
"""The job's files Harbor opens for appending on a resume (`Job._init_logger`)."""
TRIAL_RESULT = "result.json"

CODE = "resume-seal-broken"
FIX = "Run the benchmark again, or upload the job as it was sealed"


def check_resumable(job_dir: Path, *, progress: Progress | None = None) -> None:
    """Raise `resume-seal-broken` unless resuming the job keeps its seal honest.

    A job without `manifest.json` (stopped before it was sealed) may always resume; an
    unreadable manifest is refused as it is (`manifest-invalid`), since nothing then
    says what changed. Hashes every file, as verifying does.
    """
    try:
        manifest = load_manifest(job_dir)
    except HbenchError as error:
        if error.code == "manifest-missing":
            return
        raise
    tree = scan(job_dir)
    files = [(e.path, e.size) for e in tree.files if e.path != MANIFEST_NAME]
    observed = hash_files(job_dir, files, progress)
    heads = {path: _head_sha256(job_dir / path, size) for path, size in _grown(manifest, observed)}
    problems = [
        *(unsafe_problem(u.path, u.what) for u in tree.unsafe),
        *resume_problems(manifest, observed, heads),
        *(_broken(p.message) for p in folder_identity_problems(job_dir, manifest)),
    ]
    if problems:
        summary = Problem(
            CODE,
            f"{job_dir} changed after it was sealed, and resuming would seal the changes as "
            f"Harbor's, so Harbor was not started. {FIX}",
        )
        raise HbenchError.from_problems([summary, *problems])


def resume_problems(
    manifest: Manifest, observed: Mapping[str, tuple[int, str]], heads: Mapping[str, str]
) -> list[Problem]:
    """Every difference between the seal and the files seen that Harbor's resume does not make.

    `observed` maps each file's path to its (size, sha256), as for `compare`; `heads` maps
    each appended file (`APPENDED`) that grew to the sha256 of its first sealed-size bytes.
    """
    sealed = {f.path: f for f in manifest.files}
    known = {_folder(path) for path in sealed} - {None}
    kept = known & {_folder(path) for path in observed}
    finished = {_folder(path) for path in sealed if _is_trial_result(path)}

    def by_harbor(problem: Problem) -> bool:
        path = problem.path or ""
        folder = _folder(path)
        if problem.code == "manifest-file-changed":
            return path in REWRITTEN or heads.get(path) == sealed[path].sha256
        if folder is None:
            return False  # Harbor adds or deletes no file at the job's top level
        if problem.code == "manifest-file-extra":
            return folder not in known  # a trial the resume started
        return folder not in kept | finished  # an unfinished trial's folder, deleted whole

    return [
        Problem(CODE, _how(problem, sealed), problem.path)
        for problem in compare(manifest, observed)
        if not by_harbor(problem)
    ]


def _how(problem: Problem, sealed: Mapping[str, ManifestFile]) -> str:
    """How a file differs from the seal: `compare`'s words, or why an appended file fails."""
    path = problem.path or ""
    if problem.code == "manifest-file-changed" and path in APPENDED:
        return (
            f"{path} no longer begins with the {sealed[path].size} bytes sealed, and Harbor "
            "only appends to it"
        )
    return problem.message


def _is_trial_result(path: str) -> bool:
    folder = _folder(path)
    return folder is not None and path == f"{folder}/{TRIAL_RESULT}"


def _folder(path: str) -> str | None:
    """The top-level folder holding a file (its trial), or None for a file at the top."""
    head, sep, _ = path.partition("/")
    return head if sep else None


def _grown(manifest: Manifest, observed: Mapping[str, tuple[int, str]]) -> list[tuple[str, int]]:
    """Each appended file now longer than sealed, with its sealed size."""
    sealed = {f.path: f.size for f in manifest.files if f.path in APPENDED}
    return [
        (path, size)
        for path, size in sealed.items()
        if path in observed and observed[path][0] > size
    ]


def _head_sha256(path: Path, size: int) -> str:
    """The sha256 of a file's first `size` bytes, not following a link."""
    digest = hashlib.sha256()
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as stream:
        while size > 0 and (chunk := stream.read(min(size, 1 << 20))):
            digest.update(chunk)
            size -= len(chunk)
    return digest.hexdigest()


def _broken(message: str) -> Problem:
    return Problem(CODE, message, MANIFEST_NAME)
