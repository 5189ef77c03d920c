"""The evidence of a real sealed job, as the service gathers it, for the pure checks' tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.bench.service import gather
from app.checks.boards import Boards
from app.checks.evidence import Evidence
from app.uploads.archive import ExtractedJob, FileDigest
from hbench.digest import sha256_files
from hbench.jobs.models import Job
from hbench.jobs.tree import scan
from registry.loader import Registry, load_registry
from tests.app.bench.jobs import SealedJob, sealed_job
from tests.conftest import HarborJobFactory

MIN_VERSION = "0.3.0"


@pytest.fixture(scope="session")
def sealed(
    harbor_job: HarborJobFactory, demo_registry: Path, tmp_path_factory: pytest.TempPathFactory
) -> SealedJob:
    """The session's real oracle job, sealed; copy it before changing it."""
    return sealed_job(harbor_job, demo_registry, tmp_path_factory.mktemp("sealed"))


@pytest.fixture(scope="session")
def registry() -> Registry:
    return load_registry()


def unpacked(job_dir: Path) -> ExtractedJob:
    """A job folder as the archive reader hands it over: every file with its size and hash."""
    files = [(entry.path, entry.size) for entry in scan(job_dir).files]
    observed = sha256_files(job_dir, files)
    return ExtractedJob(
        job_name=job_dir.name,
        root=job_dir,
        files={path: FileDigest(*digest) for path, digest in observed.items()},
        compressed_bytes=0,
        unpacked_bytes=sum(size for size, _ in observed.values()),
    )


@pytest.fixture(scope="session")
def gathered(sealed: SealedJob, registry: Registry) -> tuple[Evidence, Boards]:
    evidence, boards = gather(unpacked(sealed.path), MIN_VERSION, registry, None)
    assert boards is not None
    return evidence, boards


@pytest.fixture(scope="session")
def evidence(gathered: tuple[Evidence, Boards]) -> Evidence:
    """What the rules read about the real job, uploaded with an API token."""
    return gathered[0]


@pytest.fixture(scope="session")
def job(evidence: Evidence) -> Job:
    assert evidence.job is not None
    return evidence.job
