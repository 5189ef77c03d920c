"""The regrade worker: a process of its own that claims queued regrades one at a time, runs
`harbor job regrade` on the stored job in a sandbox, and records what it found.

Nothing here runs in a request. A claim is one conditional update, so two workers never
take the same job; a regrade whose worker died is taken again once it has run longer than
the timeout. Each attempt works in a private scratch folder, removed afterwards; a run that
can't finish (a sandbox error, the timeout) is tried again up to `regrade_max_attempts`
times, then recorded as failed.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from app.blobs import BlobNotFoundError, BlobStore
from app.db.models import Job, JobStatus, Regrade, RegradeStatus, utcnow
from app.db.session import Database
from app.db.summary import JobSummary
from app.regrade.compare import Recorded, Regraded, differences
from app.regrade.tasks import dataset_folder, task_folders
from app.settings import Settings
from app.uploads.archive import extract
from app.uploads.models import ArchiveLimits
from hbench.demo import ensure_image, names_image
from hbench.errors import HbenchError
from hbench.jobs.files import TrialResultFile
from hbench.jobs.reader import read_job
from hbench.jobs.task_digest import task_digest
from hbench.runner import harbor_binary, harbor_env
from hbench.sandbox import IMPORT_PATH

log = logging.getLogger(__name__)

CHUNK = 1 << 20
OUTPUT_TAIL = 2000
"""How much of Harbor's output a failed attempt keeps in its note."""
ENVIRONMENTS = {"bubblewrap": IMPORT_PATH, "docker": "docker"}


@dataclass(frozen=True)
class Outcome:
    """What one attempt found: a final status, or a failure to try again."""

    status: RegradeStatus
    note: str | None = None
    differences: tuple[dict[str, Any], ...] = ()
    retry: bool = False


class RegradeWorker:
    """Claims and runs regrades from the database, with the settings' sandbox and limits."""

    def __init__(self, settings: Settings, database: Database, blobs: BlobStore) -> None:
        self.settings = settings
        self.database = database
        self.blobs = blobs

    def run_forever(self, stop: threading.Event) -> None:
        """Work until `stop` is set, waiting the poll interval whenever nothing is queued."""
        interval = self.settings.regrade_poll_interval.total_seconds()
        while not stop.is_set():
            try:
                worked = self.run_once()
            except Exception:  # a database outage, say: log it and try again later
                log.exception("the regrade worker's round failed")
                worked = False
            if not worked:
                stop.wait(interval)

    def run_once(self) -> bool:
        """Claim one regrade and run it; False when none was waiting."""
        job_id = self.claim(utcnow())
        if job_id is None:
            return False
        outcome = self.regrade(job_id)
        self.record(job_id, outcome, utcnow())
        return True

    def drain(self) -> int:
        """Run every queued regrade, one after another; returns how many ran."""
        done = 0
        while self.run_once():
            done += 1
        return done

    # Claiming and recording.

    def claim(self, now: datetime) -> uuid.UUID | None:
        """Take the oldest queued regrade (or one whose worker died) for this worker."""
        stale = now - self.settings.regrade_timeout - timedelta(minutes=1)
        with self.database.session() as session:
            waiting = or_(
                Regrade.status == RegradeStatus.QUEUED,
                (Regrade.status == RegradeStatus.RUNNING) & (Regrade.started_at < stale),
            )
            query = select(Regrade.job_id, Regrade.status).where(waiting)
            candidates = session.execute(query.order_by(Regrade.queued_at).limit(5)).all()
            for job_id, status in candidates:
                claimed = session.execute(
                    update(Regrade)
                    .where(Regrade.job_id == job_id, Regrade.status == status, waiting)
                    .values(
                        status=RegradeStatus.RUNNING,
                        started_at=now,
                        attempts=Regrade.attempts + 1,
                    )
                    .returning(Regrade.job_id)
                ).scalar_one_or_none()
                session.commit()
                if claimed is not None:
                    return claimed
        return None

    def record(self, job_id: uuid.UUID, outcome: Outcome, now: datetime) -> None:
        with self.database.session() as session:
            row = session.get_one(Regrade, job_id)
            if outcome.retry and row.attempts < self.settings.regrade_max_attempts:
                row.status, row.note = RegradeStatus.QUEUED, outcome.note
            else:
                row.status = RegradeStatus.FAILED if outcome.retry else outcome.status
                row.note, row.finished_at = outcome.note, now
                row.differences = list(outcome.differences)
            session.commit()
        log.info("regrade of job %s: %s", job_id, outcome.status.value)

    # One regrade.

    def regrade(self, job_id: uuid.UUID) -> Outcome:
        with self.database.session() as session:
            job = _job(session, job_id)
        if isinstance(job, Outcome):
            return job
        summary, blob_key = job
        dataset = summary.dataset
        folder = dataset_folder(dataset, self.settings.regrade_tasks_dir)
        if folder is None:
            return _not_regradable(f"the service keeps no copy of {dataset}'s tasks")
        with self._scratch() as scratch:
            try:
                root = self._unpack(blob_key, scratch)
            except BlobNotFoundError:
                return _not_regradable("the job's files were deleted before it was regraded")
            digests = summary.task_digests
            tasks = self._tasks(folder, digests, scratch)
            if isinstance(tasks, Outcome):
                return tasks
            return self._run(root, tasks, scratch)

    @contextmanager
    def _scratch(self) -> Iterator[Path]:
        self.settings.regrade_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = Path(tempfile.mkdtemp(prefix="regrade-", dir=self.settings.regrade_dir))
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)

    def _unpack(self, blob_key: str, scratch: Path) -> Path:
        target = scratch / "job"
        target.mkdir()
        cap = self.settings.unpacked_max_bytes
        limits = ArchiveLimits(max_sent_bytes=cap, max_unpacked_bytes=cap, max_stream_bytes=2 * cap)
        with self.blobs.open(blob_key) as stream:
            chunks = iter(lambda: stream.read(CHUNK), b"")
            return extract(chunks, target, limits).root

    def _tasks(self, folder: Path, digests: dict[str, str], scratch: Path) -> Path | Outcome:
        """A folder of exactly the tasks the job ran, each checked against its digest and
        against Harbor's own test of whether it can be regraded."""
        from harbor.trial.regrade import check_task_regradable  # noqa: PLC0415 - Harbor is the worker's

        available = task_folders(folder)
        chosen = scratch / "tasks"
        chosen.mkdir()
        for task, digest in sorted(digests.items()):
            source = available.get(task)
            if source is None:
                return _not_regradable(f"the service's copy of the dataset has no task {task}")
            if task_digest(source) != digest:
                return _not_regradable(
                    f"the service's copy of the task {task} differs from the files the job ran"
                )
            refused = check_task_regradable(source)
            if refused is not None:
                return _not_regradable(f"Harbor can't regrade the task {task}: {refused}")
            shutil.copytree(source, chosen / source.name, symlinks=False)
        if not digests:
            return _not_regradable("the job records no task digests (no lock.json)")
        return chosen

    def _run(self, root: Path, tasks: Path, scratch: Path) -> Outcome:
        out = scratch / "out"
        if self.settings.regrade_environment == "docker" and names_image(tasks):
            try:
                ensure_image()
            except HbenchError as error:
                return Outcome(RegradeStatus.FAILED, error.detail, retry=True)
        argv = [
            harbor_binary(), "job", "regrade", str(root),
            "-p", str(tasks),
            "-e", ENVIRONMENTS[self.settings.regrade_environment],
            "-o", str(out), "--job-name", "regrade",
            "-n", str(self.settings.regrade_concurrency),
        ]  # fmt: skip
        code, output = _harbor(argv, scratch, self.settings.regrade_timeout)
        regraded_dir = out / "regrade"
        if code != 0 or not regraded_dir.is_dir():
            return Outcome(
                RegradeStatus.FAILED,
                f"harbor job regrade stopped ({_exit(code)}): {_tail(output, scratch)}",
                retry=True,
            )
        recorded = _recorded(root)
        regraded = _regraded(regraded_dir)
        found = differences(recorded, regraded)
        if found:
            return Outcome(
                RegradeStatus.DISAGREED,
                f"{len(found)} of {sum(r.rewards is not None for r in recorded)} graded trials "
                "got other rewards when graded again",
                tuple(d.to_json() for d in found),
            )
        graded = sum(r.rewards is not None for r in recorded)
        return Outcome(RegradeStatus.AGREED, f"all {graded} graded trials got the same rewards")


def _job(session: Session, job_id: uuid.UUID) -> tuple[JobSummary, str] | Outcome:
    row = session.get(Job, job_id)
    if row is None or row.status == JobStatus.DELETED or row.blob_key is None:
        return _not_regradable("the job was deleted before it was regraded")
    if row.files_hidden_at is not None:
        return _not_regradable("the job's files were hidden before it was regraded")
    return JobSummary.of(row), row.blob_key


def _not_regradable(why: str) -> Outcome:
    return Outcome(RegradeStatus.NOT_REGRADABLE, why)


def _harbor(argv: list[str], cwd: Path, timeout: timedelta) -> tuple[int | None, str]:
    """Run Harbor in its own process group; kill the whole group at the deadline."""
    log_path = cwd / "harbor.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            argv, cwd=cwd, env=harbor_env(), stdout=log_file, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        try:
            code: int | None = process.wait(timeout=timeout.total_seconds())
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = None
    return code, log_path.read_text(encoding="utf-8", errors="replace")


def _exit(code: int | None) -> str:
    return "it ran past the regrade timeout" if code is None else f"exit status {code}"


def _tail(output: str, scratch: Path) -> str:
    # The scratch folder's path is the service's own business.
    return output[-OUTPUT_TAIL:].replace(str(scratch), "<scratch>").strip() or "(no output)"


def _recorded(root: Path) -> list[Recorded]:
    return [
        Recorded(
            trial_id=trial.trial_id or "",
            trial_name=trial.trial_name,
            task=trial.task_name or "",
            rewards=trial.rewards,
        )
        for trial in read_job(root).results
    ]


def _regraded(job_dir: Path) -> list[Regraded]:
    found = []
    for result_file in sorted(job_dir.glob("*/result.json")):
        try:
            result = TrialResultFile.model_validate_json(result_file.read_bytes())
        except ValueError:
            continue  # a trial of the regrade without a readable result names no source
        source = result.config.source_trial
        if source is None or source.trial_id is None:
            continue
        rewards = result.verifier_result.rewards if result.verifier_result else None
        found.append(
            Regraded(
                source_trial_id=str(source.trial_id),
                rewards=dict(rewards) if rewards is not None else None,
                exception_type=result.exception_info.exception_type
                if result.exception_info
                else None,
            )
        )
    return found
