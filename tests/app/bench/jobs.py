"""A real sealed job to upload, and the edits that turn a copy of it into a refused one.

The job is a real Harbor run of the demo dataset (the session's `harbor_job`, shared
with the reader's tests), sealed by hbench with the digest of the spec it equals, so an
issued run of that spec can take it. Tests copy it before changing anything.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench.demo import demo_spec
from hbench.digest import spec_digest
from hbench.jobs.manifest import MANIFEST_NAME, parse_manifest
from hbench.jobs.pack import pack
from hbench.jobs.sealing import seal
from tests.conftest import HarborJobFactory

# The oracle, two attempts per task, as the reader's tests run it (one run per session).
ORACLE_RUN = ("oracle-k2", "-k", "2")
ORACLE_ONCE = ("oracle-k1",)
"""The oracle, one attempt per task: half the trials, for a test that regrades in Docker."""


@dataclass(frozen=True)
class SealedJob:
    """A sealed real job, and the spec whose digest its manifest records."""

    path: Path
    spec: dict[str, Any]

    @property
    def digest(self) -> str:
        return spec_digest(self.spec)

    def copy_to(self, folder: Path) -> Path:
        """A copy of the job folder under `folder/jobs/`, to change freely."""
        dest = folder / "jobs" / self.path.name
        shutil.copytree(self.path, dest)
        return dest


def sealed_job(
    harbor_job: HarborJobFactory,
    demo_registry: Path,
    folder: Path,
    run: tuple[str, ...] = ORACLE_RUN,
) -> SealedJob:
    """Seal a copy of the session's real oracle job in `folder` (`run`: `ORACLE_RUN` or
    `ORACLE_ONCE`)."""
    source = harbor_job(*run)
    dest = folder / source.name
    shutil.copytree(source, dest)
    # `harbor_job` runs Harbor with -q, which config.json records, so the spec says it too.
    attempts = int(run[run.index("-k") + 1]) if "-k" in run else 1  # Harbor's -k, default 1
    spec = {**demo_spec(demo_registry, source.name, n_attempts=attempts), "quiet": True}
    seal(dest, spec_digest=spec_digest(spec))
    return SealedJob(dest, spec)


def packed(job_dir: Path) -> bytes:
    """The job as `hbench jobs pack` sends it."""
    out = io.BytesIO()
    pack(job_dir, out)
    return out.getvalue()


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Rewrite a JSON file of the job after `change` edits its parsed object in place."""
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=4))


def edit_manifest(job_dir: Path, **fields: Any) -> None:
    """Rewrite fields of the job's manifest as a hand editor would (its files stay sealed)."""
    path = job_dir / MANIFEST_NAME
    manifest = parse_manifest(path.read_bytes())
    path.write_bytes(manifest.model_copy(update=fields).to_json())


def reseal(job_dir: Path, spec_digest: str | None = None) -> None:
    """Seal again after an edit, keeping the recorded spec digest unless one is given."""
    seal(job_dir, spec_digest=spec_digest)


def trial_folders(job_dir: Path) -> list[Path]:
    return sorted(p for p in job_dir.iterdir() if (p / "result.json").is_file())
