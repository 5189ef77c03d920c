"""The records a pull and its oracle run leave in the pulled folder: `hbench-pull.json` (where
the tasks came from, which rows, under which licence) and `hbench-oracle.json` (the newest
oracle run over these tasks). Typed, so the pull, `hbench registry run` and `hbench push`
read the same shape."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import Field, ValidationError

from hbench.errors import HbenchError
from registry.schema import BenchmarkSlug, Grading, Record

PULL_MANIFEST = "hbench-pull.json"
ORACLE_RECORD = "hbench-oracle.json"
NOTICE_FILE = "NOTICE.txt"
MANIFEST_VERSION = 1


class PulledFrom(Record):
    kind: str = Field(description="`file`, `package` or `hub`.")
    location: str
    revision: str | None
    split: str
    sha256: str | None


class PulledRow(Record):
    task: str
    row: int = Field(description="The row's place in the split.")
    id: str | None = None


class PulledLicense(Record):
    spdx: str | None
    name: str
    allows_redistribution: bool


class PullManifest(Record):
    """`hbench-pull.json`: one pull of an `hf_rows` benchmark."""

    version: int = MANIFEST_VERSION
    benchmark: BenchmarkSlug
    metric: str
    source: PulledFrom
    seed: int
    n: int | None = Field(description="The rows asked for; null for the whole split (--all).")
    split_rows: int = Field(description="How many rows the split holds.")
    rows: list[PulledRow]
    grading: Grading
    license: PulledLicense
    solutions: bool = Field(description="Whether the tasks hold `solution/solve.sh`.")
    hbench_version: str
    tasks_digest: str = Field(description="sha256 over every task file, in name order.")


class OracleRecord(Record):
    """`hbench-oracle.json`: the newest oracle run over the pulled tasks."""

    job: str = Field(description="The job folder, as the run wrote it.")
    tasks_digest: str = Field(description="The pull's `tasksDigest` the run ran.")
    score: float
    failing: list[str]


def files_digest(files: Iterable[tuple[str, bytes]]) -> str:
    """sha256 over files given as (path inside the pulled folder, bytes), in path order."""
    digest = hashlib.sha256()
    for path, data in sorted(files):
        digest.update(path.encode() + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def tasks_digest(folder: Path, names: list[str]) -> str:
    """The digest of the named task folders' files as they are on disk now: what an oracle
    run vouches for (`files_digest`)."""
    files = []
    for name in names:
        for where, _, found in os.walk(folder / name):
            for file in found:
                # Plain strings, as in writing them (registry.pull.rows._write_task).
                path = f"{where}/{file}"
                relative = os.path.relpath(path, folder).replace(os.sep, "/")
                with open(path, "rb") as stream:  # noqa: PTH123
                    files.append((relative, stream.read()))
    return files_digest(files)


def read_manifest(folder: Path) -> PullManifest | None:
    """The folder's pull manifest; None when it is no pulled folder."""
    path = folder / PULL_MANIFEST
    if not path.is_file():
        return None
    try:
        return PullManifest.model_validate_json(path.read_bytes())
    except ValidationError as error:
        raise HbenchError(
            "pull-manifest-invalid", f"{path} is not a pull manifest hbench wrote: {error}"
        ) from None


def read_oracle(folder: Path) -> OracleRecord | None:
    path = folder / ORACLE_RECORD
    if not path.is_file():
        return None
    try:
        return OracleRecord.model_validate_json(path.read_bytes())
    except ValidationError:
        return None  # a damaged record vouches for nothing; the oracle runs again


def write_oracle(folder: Path, record: OracleRecord) -> Path:
    """Record an oracle run over the pulled folder's tasks (the newest replaces the older)."""
    path = folder / ORACLE_RECORD
    scratch = path.with_name(f".{ORACLE_RECORD}.tmp")
    scratch.write_text(json.dumps(record.to_json_dict(), indent=2, sort_keys=True) + "\n")
    scratch.replace(path)
    return path
