"""The service killed with SIGKILL while uploads stream in and while they are stored.

Clients upload the real sealed job over and over, some with run tokens of issued runs and
some as the local user, while the service is killed at random moments; each upload whose
connection died is sent again after the restart. Afterwards:

- every upload answered 2xx is stored exactly once, with its complete archive;
- every other answer is an error envelope with a rule code, and a connection error
  happened only to uploads in flight when the process died;
- a run token whose first upload was stored before the kill is refused on the retry as
  a duplicate (`run-token-used` or `bench-published-before`), never stored twice;
- no job row names a missing archive, and the only archives without rows are the ones
  the orphan sweep removes; no temporary blob or half-written file is visible as a blob.
"""

from __future__ import annotations

import random
import tarfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.bench.storage import sweep_orphan_blobs
from app.blobs import LocalBlobStore
from app.db.models import IssuedRun, IssuedRunStatus, Job
from app.db.session import Database
from tests.app.bench.conftest import issue_run
from tests.app.bench.jobs import SealedJob
from tests.app.publish.conftest import variant

from .conftest import Service

pytestmark = pytest.mark.postgres  # the database's semantics: both backends

KILLS = 2
CLIENTS = 2
RUN_TOKENS = 4
PLAIN_UPLOADS = 4
GZIP = {"content-type": "application/gzip"}
DUPLICATE = {"run-token-used", "bench-published-before"}


@dataclass
class Upload:
    """One upload to make: a job with its issued run's token, or as the local user."""

    archive: bytes
    token: str | None
    answers: list[tuple[int | None, dict[str, object]]]
    """Each try's status (None: the connection failed) and body."""
    slow: bool = False
    """Sent in small pieces, slowly: still streaming when the kill comes."""


def send(url: str, upload: Upload) -> bool:
    """One try; False when the connection failed (the service died)."""
    headers = {**GZIP, **({"hpg-run-token": upload.token} if upload.token else {})}
    try:
        body = slowly(upload.archive) if upload.slow else upload.archive
        answer = httpx.post(f"{url}/api/bench/uploads", content=body, headers=headers, timeout=30)
    except httpx.TransportError:
        upload.answers.append((None, {}))
        return False
    upload.answers.append((answer.status_code, answer.json()))
    return True


def slowly(archive: bytes) -> Iterator[bytes]:
    for start in range(0, len(archive), 256):
        yield archive[start : start + 256]
        time.sleep(0.05)


def upload_until_killed(
    url: str, queue: list[Upload], retries: list[Upload], lock: threading.Lock
) -> None:
    while True:
        with lock:
            if not queue:
                return
            upload = queue.pop()
        if not send(url, upload):
            with lock:
                upload.slow = False
                retries.append(upload)  # sent again after the restart
            return


def run_round(service: Service, todo: list[Upload], kill_after: float | None) -> None:
    """Upload from several clients until `todo` is done or the service is killed.

    A slow upload in `todo` gets a client of its own, and the kill waits for it to reach
    its scratch folder, so the kill comes while it is still streaming in."""
    lock = threading.Lock()
    slow = [upload for upload in todo if upload.slow]
    todo[:] = [upload for upload in todo if not upload.slow]
    queues = [slow] * bool(slow) + [todo] * CLIENTS
    threads = [
        threading.Thread(target=upload_until_killed, args=(service.url, queue, todo, lock))
        for queue in queues
    ]
    for thread in threads:
        thread.start()
    if kill_after is not None:
        scratch = service.state_dir / "uploads"
        deadline = time.monotonic() + 10
        while slow and not any(scratch.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(kill_after)
        service.kill()
    for thread in threads:
        thread.join(120)


def stored_keys(blob_dir: Path) -> list[str]:
    store = LocalBlobStore(blob_dir)  # its start sweeps temporary files, as the service's does
    return list(store.list("jobs/"))


def test_uploads_killed_at_random_moments_are_stored_once_or_not_at_all(
    make_service: type[Service], *, db: Session, database_url: str, sealed: SealedJob,
    sealed_archive: bytes, tmp_path: Path,
) -> None:  # fmt: skip
    seed = random.randrange(2**32)  # noqa: S311 - kill timings, not secrets
    rng = random.Random(seed)  # noqa: S311
    now = datetime.now(UTC)
    # An issued run counts one job, so each run gets a job of its own (its own trials).
    uploads = [
        Upload(variant(sealed, tmp_path, shift=timedelta(hours=n + 1)),
               issue_run(db, sealed.spec, issued_at=now - timedelta(hours=1)).token, [])
        for n in range(RUN_TOKENS)
    ] + [Upload(sealed_archive, None, []) for _ in range(PLAIN_UPLOADS)]  # fmt: skip
    streaming = Upload(sealed_archive, None, [], slow=True)
    todo = [*uploads]
    rng.shuffle(todo)
    uploads.append(streaming)
    service = make_service(writer_enabled="false")
    service.start()
    for kill in range(KILLS):
        # The first kill comes while one upload streams in; the others at random.
        todo += [streaming] * (kill == 0)
        run_round(
            service, todo, kill_after=rng.uniform(0, 0.3) if kill == 0 else rng.uniform(0.2, 1.5)
        )
        service.start()
    run_round(service, todo, kill_after=None)  # the retries, and the rest
    service.kill()
    context = f"seed {seed}; log:\n{service.log.read_text()[-3000:]}"

    assert todo == [], context
    assert streaming.answers[0][0] is None, context  # killed while it streamed
    accepted: list[str] = []
    for upload in uploads:
        *tries, (status, body) = upload.answers
        # Only the last try may have an answer; the ones before it died with the process.
        assert all(s is None for s, _ in tries), context
        if status == 201:
            accepted.append(str(body["id"]))
            continue
        # A retry of a job whose first try was stored with its run token, and nothing
        # else: its token is used, and its trials counted already.
        assert status == 409 and body["code"] in DUPLICATE, (body, context)
        assert upload.token is not None and tries, context

    db.rollback()
    rows = list(db.scalars(select(Job)))
    ids = [str(row.id) for row in rows]
    assert len(ids) == len(set(ids)) and set(accepted) <= set(ids), context
    died = sum(1 for u in uploads for s, _ in u.answers if s is None)
    assert len(rows) <= len(accepted) + died, context
    # One job per issued run at most, and every run marked uploaded has its job.
    runs = {run.id: run for run in db.scalars(select(IssuedRun))}
    by_run = [row.issued_run_id for row in rows if row.issued_run_id is not None]
    assert len(by_run) == len(set(by_run)) == RUN_TOKENS, context
    assert all(run.status is IssuedRunStatus.UPLOADED for run in runs.values()), context

    blob_dir = service.state_dir / "blobs"
    keys = set(stored_keys(blob_dir))
    named = {row.blob_key for row in rows}
    assert named <= keys, context  # no row without its archive
    for key in named:
        with tarfile.open(blob_dir / str(key), "r:gz") as archive:  # complete, readable
            assert any(member.isfile() for member in archive.getmembers())
    # Archives stored just before a kill, whose rows never committed, are orphans: the
    # sweep removes them once no upload could still be committing them, and only them.
    database = Database(database_url)
    try:
        swept = sweep_orphan_blobs(
            database, LocalBlobStore(blob_dir), now=datetime.now(UTC) + timedelta(hours=2)
        )
    finally:
        database.dispose()
    assert set(swept) == keys - named, context
    assert set(stored_keys(blob_dir)) == named, context
    # A write cut short leaves a temporary file, never listed as a blob; the start-up sweep
    # takes only stale ones (a live upload may own a fresh one), so with the service
    # stopped, sweep them all.
    LocalBlobStore(blob_dir).sweep_temporary(older_than=0)
    assert list((blob_dir / ".tmp").iterdir()) == [], context
