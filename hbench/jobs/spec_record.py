"""The spec `hbench run` records in the job folder, so a job sealed later still names it.

`hbench run` writes the spec's bytes to `hbench-spec.json` before Harbor starts. When
the run is stopped before it is sealed, the resume that finishes it seals the job with
that spec's digest, and an issued run's upload still matches its spec. Harbor leaves
the file alone: it creates the job folder with `mkdir(exist_ok=True)` and treats only
folders as trials (`harbor/job.py`, `Job.__init__` and `Job._maybe_init_existing_job`).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from hbench.atomic import atomic_writer
from hbench.digest import spec_digest
from hbench.errors import Problem

SPEC_NAME = "hbench-spec.json"


def record_spec(job_dir: Path, data: bytes) -> None:
    """Write a spec's bytes into its job's folder, creating the folder as Harbor would."""
    job_dir.mkdir(parents=True, exist_ok=True)
    with atomic_writer(job_dir / SPEC_NAME) as stream:
        stream.write(data)


def read_recorded_spec(job_dir: Path) -> bytes | None:
    """The bytes of the spec recorded in a job folder, or None when there is none.

    Anything there that is not a readable regular file reads as no bytes, which are no
    spec: the caller reports it, it is never followed.
    """
    try:
        fd = os.open(job_dir / SPEC_NAME, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError:
        return b""  # a link, say: no spec, which `recorded_spec_problems` reports
    with os.fdopen(fd, "rb") as stream:
        return stream.read() if stat.S_ISREG(os.fstat(stream.fileno()).st_mode) else b""


def recorded_spec_digest(recorded: bytes) -> str | None:
    """The digest of a recorded spec (`hbench.digest.spec_digest`), or None if it is no spec."""
    try:
        value: Any = json.loads(recorded)
    except ValueError:
        return None
    return spec_digest(value) if isinstance(value, dict) else None


def recorded_spec_problems(digest: str | None, recorded: bytes | None) -> list[Problem]:
    """`manifest-spec-mismatch` when a spec is recorded and `digest` is not its digest."""
    if recorded is None:
        return []
    actual = recorded_spec_digest(recorded)
    if actual == digest:
        return []
    if actual is None:
        why = f"{SPEC_NAME} is not a JSON object, so it is not a spec hbench run recorded"
    else:
        named = f"spec {digest[:12]}…" if digest else "no spec"
        why = f"{SPEC_NAME} holds spec {actual[:12]}…, but the manifest names {named}"
    return [
        Problem(
            "manifest-spec-mismatch",
            f"{why}: one of them was edited or replaced after hbench wrote it. Restore the "
            "job as it was sealed, or run the benchmark again",
            SPEC_NAME,
        )
    ]
