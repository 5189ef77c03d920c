"""The manifest: `manifest.json` at a job's root lists every file with its size and sha256.

hbench writes it ("seals" the job) after every run and resume. Verifying hashes
every file again and reports each missing, extra and changed one, not only the
first. `compare` is the pure core of verifying, so the service can check an
archive whose files it hashes while streaming it, without a folder on disk.

The manifest's `spec_digest` must agree with the spec `hbench run` recorded in the
job folder, if any (`hbench.jobs.spec_record`).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hbench import __version__
from hbench.atomic import atomic_writer
from hbench.digest import canonical_digest, sha256_files
from hbench.errors import HbenchError, Problem
from hbench.jobs.spec_record import (
    read_recorded_spec,
    recorded_spec_digest,
    recorded_spec_problems,
)
from hbench.jobs.tree import scan
from hbench.limits import MANIFEST_MAX_BYTES

MANIFEST_NAME = "manifest.json"
SIGNATURE_NAME = "manifest.sigstore.json"
"""The Sigstore bundle the reusable workflow signs the manifest's digest with
(`hbench.provenance`): beside the manifest, and like it never listed in it."""
UNSEALED = frozenset({MANIFEST_NAME, SIGNATURE_NAME})
FORMAT: Final = 1
"""The manifest's format version; a reader refuses formats newer than it knows."""

MIN_HBENCH_VERSION = "0.3.0"
"""The oldest hbench whose jobs the service accepts by default: the first to write manifests."""

Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]

_PART = r"(?:[^/.\x00][^/\x00]*|\.[^/.\x00][^/\x00]*|\.\.[^/\x00]+)"
PlainPath = Annotated[str, Field(pattern=rf"^{_PART}(?:/{_PART})*$")]
"""A relative POSIX path whose parts are never empty, `.` or `..`: the service joins it to
a folder of its own, and it must stay inside. (A pattern, not a Python validator, so
pydantic checks 20,000 paths in Rust.)"""

_encode_str = json.JSONEncoder(ensure_ascii=False).encode

Progress = Callable[[int], None]
"""Called with the number of bytes hashed since its last call."""


class ManifestFile(BaseModel):
    """One regular file of the job: its POSIX path below the job folder, size and sha256."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    path: PlainPath
    size: int = Field(ge=0)
    sha256: Sha256Hex


class Manifest(BaseModel):
    """What `manifest.json` holds. `digest` is the value the service and the site quote."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    format: Literal[1]
    hbench_version: str
    harbor_version: str = Field(min_length=1)
    job_id: str = Field(min_length=1)
    spec_digest: Sha256Hex | None
    files: list[ManifestFile]

    @field_validator("hbench_version")
    @classmethod
    def _a_version(cls, value: str) -> str:
        try:
            Version(value)
        except InvalidVersion:
            raise ValueError(f"{value!r} is not a version number") from None
        return value

    @model_validator(mode="after")
    def _sorted_unique(self) -> Manifest:
        # hbench writes paths sorted by code point (UTF-8 byte order), each once;
        # anything else was not written by hbench.
        for before, after in zip(self.files, self.files[1:], strict=False):
            if before.path >= after.path:
                raise ValueError(f"files are not sorted and unique at {after.path!r}")
        if any(f.path == MANIFEST_NAME for f in self.files):
            raise ValueError("the manifest lists itself")
        return self

    @property
    def digest(self) -> str:
        """The sha256 of the manifest's canonical JSON, whatever the file's whitespace."""
        return canonical_digest(self.model_dump(mode="json"))

    def to_json(self) -> bytes:
        """The bytes of `manifest.json`: sorted keys, one file per line, UTF-8, final newline."""
        # Laid out by hand: json.dumps with an indent falls back to its slow pure-Python
        # encoder, which costs more than hashing a typical job's files.
        head = self.model_dump(mode="json", exclude={"files"})
        rows = ",\n".join(
            f'    {{"path": {_encode_str(f.path)}, "sha256": "{f.sha256}", "size": {f.size}}}'
            for f in self.files
        )
        fields = {k: json.dumps(v, ensure_ascii=False) for k, v in head.items()}
        fields["files"] = f"[\n{rows}\n  ]" if rows else "[]"
        body = ",\n".join(f"  {_encode_str(k)}: {fields[k]}" for k in sorted(fields))
        return f"{{\n{body}\n}}\n".encode()


def parse_manifest(data: bytes) -> Manifest:
    """Read a manifest from its bytes; raise `manifest-invalid` saying what is wrong."""
    if len(data) > MANIFEST_MAX_BYTES:
        raise _invalid(f"it is {len(data)} bytes, over the {MANIFEST_MAX_BYTES} a manifest may be")
    try:
        raw: Any = json.loads(data)
    except ValueError as error:
        raise _invalid(f"it is not JSON ({error})") from None
    if isinstance(raw, dict) and type(raw.get("format")) is int and raw["format"] > FORMAT:
        raise _invalid(
            f"it has format {raw['format']}, newer than the {FORMAT} this hbench reads; "
            "upgrade hbench (pip install -U hbench)"
        )
    try:
        return Manifest.model_validate(raw)
    except ValidationError as error:
        raise _invalid(_first_errors(error)) from None


def load_manifest(job_dir: Path) -> Manifest:
    """Read a job's `manifest.json`; raise `manifest-missing` or `manifest-invalid`."""
    path = job_dir / MANIFEST_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise HbenchError(
            "manifest-missing",
            f"{job_dir} has no {MANIFEST_NAME}: hbench did not seal this job",
            path=MANIFEST_NAME,
        ) from None
    except OSError:
        raise _invalid("it is a symbolic link or can't be opened") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)  # before `fdopen`, which refuses a folder with IsADirectoryError
        raise _invalid("it is not a regular file")
    with os.fdopen(fd, "rb") as stream:
        # Read one byte past the cap so an oversized manifest is refused, not truncated.
        return parse_manifest(stream.read(MANIFEST_MAX_BYTES + 1))


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
        return [_not_found(job_dir)]
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


def identity_problems(manifest: Manifest, harbor_version: str, job_id: str) -> list[Problem]:
    """`manifest-invalid` when the manifest names another job or Harbor than the job's files."""
    problems = []
    if manifest.job_id != job_id:
        problems.append(
            _invalid_problem(f"it names job {manifest.job_id}, but result.json has id {job_id}")
        )
    if manifest.harbor_version != harbor_version:
        problems.append(
            _invalid_problem(
                f"it names Harbor {manifest.harbor_version}, but lock.json records {harbor_version}"
            )
        )
    return problems


def job_identity(job_dir: Path) -> tuple[str, str]:
    """The Harbor version (`lock.json` → `harbor.version`) and job id (`result.json` → `id`)."""
    if not (job_dir / "config.json").is_file():
        raise HbenchError(
            "job-not-harbor", f"{job_dir} has no config.json, so Harbor did not write it"
        )
    lock = _read_json(job_dir, "lock.json", "job-not-harbor")
    result = _read_json(job_dir, "result.json", "job-result-missing")
    harbor = lock.get("harbor")
    version = harbor.get("version") if isinstance(harbor, dict) else None
    if not isinstance(version, str) or not version:
        raise HbenchError(
            "job-json-invalid", "lock.json has no harbor.version string", path="lock.json"
        )
    job_id = result.get("id")
    if not isinstance(job_id, str) or not job_id:
        raise HbenchError("job-json-invalid", "result.json has no id string", path="result.json")
    return version, job_id


def _read_json(job_dir: Path, name: str, missing_code: str) -> dict[str, Any]:
    try:
        data: Any = json.loads((job_dir / name).read_bytes())
    except FileNotFoundError:
        raise HbenchError(
            missing_code, f"{job_dir} has no {name}; Harbor writes it for every job", path=name
        ) from None
    except ValueError as error:
        raise HbenchError("job-json-invalid", f"{name} is not JSON ({error})", path=name) from None
    except OSError as error:  # a folder of that name, say
        what = f"{name} can't be read as a file ({error.strerror})"
        raise HbenchError("job-json-invalid", what, path=name) from None
    if not isinstance(data, dict):
        raise HbenchError("job-json-invalid", f"{name} is not a JSON object", path=name)
    return data


def folder_identity_problems(job_dir: Path, manifest: Manifest) -> list[Problem]:
    """`identity_problems` against the folder's own `lock.json` and `result.json`."""
    # An unreadable lock.json or result.json is already a changed or missing file, or
    # the job reader's to report; only a readable one can contradict the manifest.
    try:
        harbor_version, job_id = job_identity(job_dir)
    except HbenchError:
        return []
    return identity_problems(manifest, harbor_version, job_id)


def _recorded_spec_problems(job_dir: Path, manifest: Manifest) -> list[Problem]:
    return recorded_spec_problems(manifest.spec_digest, read_recorded_spec(job_dir))


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
        raise HbenchError.from_problems([_not_found(job_dir)])


def _not_found(job_dir: Path) -> Problem:
    return Problem("job-not-found", f"{job_dir} is not a folder")


def unsafe_problem(path: str, what: str) -> Problem:
    """`job-unsafe-file` for something in a job folder that is not a folder or regular file."""
    return Problem(
        "job-unsafe-file",
        f"{path} {what}; a job folder may hold only folders and regular files",
        path,
    )


def _changed(path: str, sealed: ManifestFile, seen: tuple[int, str]) -> str:
    size, sha256 = seen
    if size != sealed.size:
        how = f"it is {size} bytes, sealed as {sealed.size}"
    else:
        how = f"its sha256 is {sha256[:12]}…, sealed as {sealed.sha256[:12]}…"
    return f"{path} changed since the job was sealed: {how}"


def _invalid_problem(reason: str) -> Problem:
    return Problem("manifest-invalid", f"{MANIFEST_NAME} is invalid: {reason}", MANIFEST_NAME)


def _invalid(reason: str) -> HbenchError:
    return HbenchError.from_problems([_invalid_problem(reason)])


def _first_errors(error: ValidationError, limit: int = 3) -> str:
    details = error.errors()
    shown = [
        f"{'.'.join(str(part) for part in d['loc']) or 'the top level'}: {d['msg']}"
        for d in details[:limit]
    ]
    more = f" (and {len(details) - limit} more)" if len(details) > limit else ""
    return "; ".join(shown) + more
