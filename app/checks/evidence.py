"""What the checks read about one upload: the files as they arrived, the manifest, the job.

The service builds an `Evidence` from the extracted archive (`app/bench/service.py`);
the checks (`app.checks.store_checks`) only read it. A part that could not be read is None, with
the problems that say why beside it, so each check can tell "failed" from "can't tell".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hbench.errors import Problem
from hbench.jobs.manifest import Manifest
from hbench.jobs.models import Job
from registry.placement import Placement


@dataclass(frozen=True)
class IssuedSpec:
    """What the service issued for a run, which an upload with its run token must match."""

    run_id: str
    spec: Mapping[str, Any]
    """The Harbor job config the run was issued with, as stored."""
    spec_digest: str
    board: str
    entry: str


@dataclass(frozen=True)
class Identity:
    """Who the job's own files say it is: `lock.json`'s Harbor version, `result.json`'s id."""

    harbor_version: str
    job_id: str


@dataclass(frozen=True)
class Evidence:
    """Everything the check table reads about one uploaded job."""

    observed: Mapping[str, tuple[int, str]]
    """Every file as it arrived, (size, sha256) by path below the job folder, hashed before
    anything (redaction included) touched it."""
    min_hbench_version: str
    manifest: Manifest | None = None
    manifest_problems: tuple[Problem, ...] = ()
    """Why `manifest` is None: `manifest-missing` or `manifest-invalid`."""
    identity: Identity | None = None
    job: Job | None = None
    job_problems: tuple[Problem, ...] = ()
    """Why `job` is None: the job reader's refusals."""
    placement: Placement | None = None
    """Where a self-reported job may go; None for an issued run, whose board is fixed, and
    for a job that can't be placed at all."""
    board_notes: tuple[Problem, ...] = ()
    """Why the boards found no board for the job (`app.checks.boards.Boards.notes`):
    placement's problems, why the job can't be described to it, or an issued run's other
    task files."""
    issued: IssuedSpec | None = None
    """The run the upload's run token belongs to; None for an upload with an API token."""
