"""A promise of "Upload a job" (../shared/spec/hbench-upload-a-job.txt) that no other test
drove through the API: pack the job's own folder, not the whole jobs/ folder."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.settings import Settings
from tests.app.bench.conftest import assert_nothing_stored, upload
from tests.app.bench.jobs import SealedJob
from tests.app.conftest import TokenFactory, bearer


def tar_gz(folder: Path, name: str) -> bytes:
    """`tar czf - -C <parent> <name>`: the folder under its own name."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        archive.add(folder, arcname=name)
    return out.getvalue()


def test_an_archive_of_the_whole_jobs_folder_is_refused(
    remote: TestClient, *, db: Session, settings: Settings, sealed: SealedJob,
    make_token: TokenFactory, tmp_path: Path,
) -> None:  # fmt: skip
    token = bearer(make_token("alice"))
    job = sealed.copy_to(tmp_path)
    jobs = job.parent
    (jobs / "another-job").mkdir()
    (jobs / "another-job" / "result.json").write_text("{}")

    # The whole jobs/ folder: refused, its message naming the job folder to send instead.
    whole = upload(remote, tar_gz(jobs, "jobs"), **token)
    assert whole.status_code == 422, whole.text
    refusal = whole.json()
    assert refusal["detail"].endswith(f"({refusal['code']})")
    assert f"holds job folders ({job.name}), not a job itself" in whole.text
    assert_nothing_stored(db, settings)

    # The job's own folder, packed as the guide's tar line packs it, is taken.
    own = upload(remote, tar_gz(job, job.name), **token)
    assert own.status_code == 201, own.text
    assert own.json()["status"] == "private"
