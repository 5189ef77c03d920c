"""The service killed with SIGKILL while jobs are published and its writer pushes them.

Jobs are uploaded, then published by several clients at once while the service is killed
at random moments; a publish whose connection died is sent again after the restart.
Afterwards every publish is in the outbox exactly once, and once the restarted service's
writer has drained it, the data repository holds each published job exactly once.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Job, JobStatus, OutboxEntry
from registry.datarepo import layout
from registry.datarepo.state import recompute_all
from tests.app.bench.jobs import SealedJob
from tests.app.datarepo.conftest import remote_state, trailers
from tests.app.publish.conftest import variant

from .conftest import Service

pytestmark = pytest.mark.postgres  # the database's semantics: both backends

JOBS = 3
KILLS = 2
CLIENTS = 3
DRAIN_SECONDS = 60.0
GZIP = {"content-type": "application/gzip"}


def publish_until_killed(url: str, todo: list[str], answers: dict[str, list[int | None]],
                         lock: threading.Lock) -> None:  # fmt: skip
    while True:
        with lock:
            if not todo:
                return
            job_id = todo.pop()
        try:
            status: int | None = httpx.post(
                f"{url}/api/bench/jobs/{job_id}/publish", timeout=60
            ).status_code
        except httpx.TransportError:
            status = None
        with lock:
            answers[job_id].append(status)
            if status is None:
                todo.append(job_id)  # sent again after the restart
                return


def publish_round(
    service: Service,
    todo: list[str],
    answers: dict[str, list[int | None]],
    kill_after: float | None,
    first_commit: Session | None = None,
) -> None:
    """Publish from several clients until `todo` is done or the service is killed:
    `kill_after` seconds after the start, or after the first publish reached the outbox
    when `first_commit` is a session to watch it with."""
    lock = threading.Lock()
    threads = [
        threading.Thread(target=publish_until_killed, args=(service.url, todo, answers, lock))
        for _ in range(CLIENTS)
    ]
    for thread in threads:
        thread.start()
    if kill_after is not None:
        deadline = time.monotonic() + 30
        while first_commit is not None and time.monotonic() < deadline:
            first_commit.rollback()
            if first_commit.scalar(select(OutboxEntry.id).limit(1)) is not None:
                break
            time.sleep(0.005)
        time.sleep(kill_after)
        service.kill()
    for thread in threads:
        thread.join(120)


def wait_for_drain(db: Session, count: int) -> list[OutboxEntry]:
    deadline = time.monotonic() + DRAIN_SECONDS
    while True:
        db.rollback()
        rows = list(db.scalars(select(OutboxEntry)))
        if len(rows) >= count and all(row.applied_at is not None for row in rows):
            return rows
        if time.monotonic() > deadline:
            raise AssertionError(f"the writer did not drain the outbox: {rows}")
        time.sleep(0.1)


def test_publishes_killed_at_random_moments_land_once_each(
    make_service: type[Service], *, db: Session, sealed: SealedJob, tmp_path: Path
) -> None:
    seed = random.randrange(2**32)  # noqa: S311 - kill timings, not secrets
    rng = random.Random(seed)  # noqa: S311
    archives = [variant(sealed, tmp_path, shift=-timedelta(minutes=n + 1)) for n in range(JOBS)]
    service = make_service()
    service.start()
    job_ids = []
    for archive in archives:
        answer = httpx.post(f"{service.url}/api/bench/uploads", content=archive, headers=GZIP,
                            timeout=60)  # fmt: skip
        assert answer.status_code == 201, answer.text
        job_ids.append(answer.json()["id"])

    todo = list(job_ids)
    answers: dict[str, list[int | None]] = {job_id: [] for job_id in job_ids}
    for kill in range(KILLS):
        # The first kill comes just after the first publish committed, while the others
        # are in flight; the next at a random moment, publishing or writing.
        if kill == 0:
            publish_round(service, todo, answers, rng.uniform(0, 0.05), first_commit=db)
        else:
            publish_round(service, todo, answers, kill_after=rng.uniform(0.05, 1.0))
        service.start()
    publish_round(service, todo, answers, kill_after=None)
    context = f"seed {seed}, answers {answers}; log:\n{service.log.read_text()[-3000:]}"

    for job_id in job_ids:
        *died, last = answers[job_id]
        assert all(status is None for status in died), context
        # Published now, or found published already by the retry of a publish whose first
        # try committed just before the kill.
        assert last == 200 or (last == 409 and died), context
    db.rollback()
    jobs = {str(row.id): row for row in db.scalars(select(Job))}
    assert all(jobs[job_id].status is JobStatus.PUBLISHED for job_id in job_ids), context

    rows = wait_for_drain(db, JOBS)
    published = Counter(row.payload["run"]["id"] for row in rows if row.kind == "publish_run")
    assert published == dict.fromkeys(job_ids, 1), context  # each publish queued once
    service.kill()

    remote = service.state_dir / "data.git"
    change_ids = trailers(remote)
    assert len(change_ids) == len(rows) and set(change_ids.values()) == {1}, context
    state = remote_state(remote)
    for job_id in job_ids:
        board = jobs[job_id].board
        assert board is not None and layout.run_file(board, job_id) in state.files, context
    assert recompute_all(state) == state, context
