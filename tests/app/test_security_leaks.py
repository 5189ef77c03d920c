"""What the service may say and publish: a job carrying secrets goes through the real
service (upload, publish, a report, a take-down, the writer, the site) and no secret
appears in any line the service logged, in any file or commit of the data repository, or
in the built site; no reporter's login reaches the data repository or the site either.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.service import create_api_token, ensure_account
from app.datarepo.git import clean_environment, git_executable
from app.db.migrate import upgrade
from app.db.models import OutboxEntry
from app.db.session import make_engine
from hbench.jobs.manifest import load_manifest
from hbench.jobs.sealing import seal
from tests.app.bench.conftest import sealed
from tests.app.bench.jobs import SealedJob, packed
from tests.faults.conftest import Service, make_service

__all__ = ["make_service", "sealed"]

GZIP = {"content-type": "application/gzip"}
REPORTER = "rita-reports"
DRAIN_SECONDS = 60.0


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    """SQLite only: what the service logs and publishes doesn't depend on the database."""
    url = f"sqlite+pysqlite:///{tmp_path / 'hbench.sqlite3'}"
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


def secret_job(sealed: SealedJob, folder: Path, secret_values: list[str]) -> bytes:
    """A copy of the sealed job whose first trial's agent log prints the secrets, sealed."""
    dest = folder / "secret-job" / sealed.path.name
    shutil.copytree(sealed.path, dest)
    log = next(dest.glob("*/agent/oracle.txt"))
    with log.open("a") as out:
        out.write(f"export ANTHROPIC_API_KEY={secret_values[0]}\n")
        out.write(f"using token {secret_values[1]} for the clone\n")
        out.write(f"password = {secret_values[2]}\n")
    seal(dest, spec_digest=load_manifest(sealed.path).spec_digest)
    return packed(dest)


def repository_text(bare: Path) -> str:
    """Every file at every commit of the data repository, and every commit message."""
    history = subprocess.run(
        [git_executable(), "--git-dir", str(bare), "log", "--all", "-p", "--format=%an%n%ae%n%B"],
        env=clean_environment(bare), capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert history.strip(), "the data repository has commits"
    return history


def folder_text(folder: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file()
    )


def wait_for_drain(db: Session) -> None:
    deadline = time.monotonic() + DRAIN_SECONDS
    while time.monotonic() < deadline:
        db.rollback()
        rows = list(db.scalars(select(OutboxEntry)))
        if rows and all(row.applied_at is not None for row in rows):
            return
        time.sleep(0.1)
    raise AssertionError("the writer did not drain the outbox")


def test_no_secret_reaches_a_log_line_the_data_repository_or_the_site(
    make_service: type[Service], *, db: Session, sealed: SealedJob, tmp_path: Path
) -> None:
    leaked = [
        "sk-ant-api03-" + secrets.token_urlsafe(40),
        "ghp_" + secrets.token_hex(18),
        "Pw-" + secrets.token_hex(12),
    ]
    archive = secret_job(sealed, tmp_path, leaked)
    _, reporter_token = create_api_token(db, ensure_account(db, REPORTER), "reports")
    db.commit()
    service = make_service()
    service.start()
    url = service.url

    uploaded = httpx.post(f"{url}/api/bench/uploads", content=archive, headers=GZIP, timeout=60)
    assert uploaded.status_code == 201, uploaded.text
    assert uploaded.json()["redactions"]["total"] >= len(leaked)
    job_id = uploaded.json()["id"]
    detail = httpx.get(f"{url}/api/bench/jobs/{job_id}", timeout=60)
    assert detail.status_code == 200, detail.text
    published = httpx.post(f"{url}/api/bench/jobs/{job_id}/publish", timeout=60)
    assert published.status_code == 200, published.text
    reported = httpx.post(
        f"{url}/api/reports",
        json={"run": job_id, "message": f"{REPORTER} here: these scores cannot be right"},
        headers={"authorization": f"Bearer {reporter_token}"},
        timeout=60,
    )
    assert reported.status_code == 201, reported.text
    number = reported.json()["number"]
    taken = httpx.post(
        f"{url}/api/admin/reports/{number}/take-down",
        json={"reason": "score-cannot-be-right", "note": "rewards out of range"},
        timeout=60,
    )
    assert taken.status_code == 200, taken.text
    wait_for_drain(db)
    service.stop()

    log = service.log.read_text()
    assert "POST /api/bench/uploads" in log  # the log did capture the requests
    repository = repository_text(service.state_dir / "data.git")
    assert job_id in repository  # the published run did reach the data repository
    site = folder_text(service.state_dir / "site")
    assert "hbench-demo" in site  # the site was built from it
    outbox = json.dumps([row.payload for row in db.scalars(select(OutboxEntry))])
    for secret in [*leaked, reporter_token]:
        for where, text in [("log", log), ("data repository", repository), ("site", site),
                            ("outbox", outbox), ("answer", detail.text)]:  # fmt: skip
            assert secret not in text, f"a secret reached the {where}"
    for where, text in [("data repository", repository), ("site", site), ("outbox", outbox)]:
        assert REPORTER not in text.lower(), f"the reporter's login reached the {where}"
