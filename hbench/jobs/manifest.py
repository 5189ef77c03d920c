"""The manifest: `manifest.json` at a job's root lists every file with its size and sha256.

This module holds its model and reads it; `hbench.jobs.sealing` writes it ("seals" the
job) and `hbench.jobs.verification` checks a folder or an archive against it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hbench.digest import canonical_digest
from hbench.errors import HbenchError, Problem
from hbench.limits import MANIFEST_MAX_BYTES

MANIFEST_NAME = "manifest.json"
SIGNATURE_NAME = "manifest.sigstore.json"
"""The Sigstore bundle the reusable workflow signs the manifest's digest with
(`hbench.provenance`): beside the manifest, and like it never listed in it."""
UNSEALED = frozenset({MANIFEST_NAME, SIGNATURE_NAME})
FORMAT: Final = 1
"""The manifest's format version; a reader refuses formats newer than it knows."""

Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]

_PART = r"(?:[^/.\x00][^/\x00]*|\.[^/.\x00][^/\x00]*|\.\.[^/\x00]+)"
PlainPath = Annotated[str, Field(pattern=rf"^{_PART}(?:/{_PART})*$")]
"""A relative POSIX path whose parts are never empty, `.` or `..`: the service joins it to
a folder of its own, and it must stay inside. (A pattern, not a Python validator, so
pydantic checks 20,000 paths in Rust.)"""

_encode_str = json.JSONEncoder(ensure_ascii=False).encode


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


def invalid_problem(reason: str) -> Problem:
    """`manifest-invalid`, saying why."""
    return Problem("manifest-invalid", f"{MANIFEST_NAME} is invalid: {reason}", MANIFEST_NAME)


def _invalid(reason: str) -> HbenchError:
    return HbenchError.from_problems([invalid_problem(reason)])


def _first_errors(error: ValidationError, limit: int = 3) -> str:
    details = error.errors()
    shown = [
        f"{'.'.join(str(part) for part in d['loc']) or 'the top level'}: {d['msg']}"
        for d in details[:limit]
    ]
    more = f" (and {len(details) - limit} more)" if len(details) > limit else ""
    return "; ".join(shown) + more
