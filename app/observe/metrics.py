"""The service's Prometheus metrics (`prometheus-client`); `app.observe.scrape` serves them.

Counters and histograms live in this process and count from its start: requests (by
method, route template and status, `app.observe.requests`), uploads once unpacked (by
outcome and rule code: the checks' refusals, counted in the server as the upload workers
answer) and their time, and the data-repository writer's batches. What the database
knows (the outbox's backlog, jobs by status) is read as the endpoint is scraped, so every
replica reports the same figures for it.

With several worker processes behind one port (`HBENCH_WORKERS`), `hbench-app serve`
points prometheus-client's multiprocess mode at a folder of the state directory, so any
worker answers a scrape with every worker's figures. Replicas are scraped one by one, not
through a balancer in front of them (docs/deployment.md).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import Counter, Gauge, Histogram

if TYPE_CHECKING:
    from app.settings import Settings

MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
"""prometheus-client's own variable: where each process keeps its figures' files."""

REQUESTS = Counter("hbench_http_requests", "Requests answered.", ["method", "route", "status"])
REQUEST_SECONDS = Histogram(
    "hbench_http_request_seconds", "Time to answer a request.", ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)  # fmt: skip
UPLOADS = Counter(
    "hbench_uploads", "Uploads handled: accepted, or refused with a rule code.",
    ["outcome", "code"],
)  # fmt: skip
UPLOAD_SECONDS = Histogram(
    "hbench_upload_seconds", "Time to check, redact and store an upload once it is unpacked.",
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)  # fmt: skip
WRITER_ROUNDS = Counter(
    "hbench_writer_batches", "Data-repository writer batches, by outcome.", ["outcome"]
)
WRITER_CHANGES = Counter(
    "hbench_writer_changes", "Outbox changes the writer applied or failed.", ["outcome"]
)
WRITER_LAST_COMMIT = Gauge(
    "hbench_writer_last_commit_timestamp_seconds",
    "When this process's writer last pushed a commit (Unix time; 0 before the first).",
    multiprocess_mode="max",
)
# Read from the database as a scrape comes: of several workers', the newest reading.
OUTBOX_PENDING = Gauge(
    "hbench_outbox_pending", "Outbox changes waiting for the writer.",
    multiprocess_mode="mostrecent",
)  # fmt: skip
OUTBOX_GIVEN_UP = Gauge(
    "hbench_outbox_given_up", "Outbox changes the writer gave up on.",
    multiprocess_mode="mostrecent",
)  # fmt: skip
OUTBOX_OLDEST = Gauge(
    "hbench_outbox_oldest_pending_seconds", "Age of the oldest waiting change (0 when none).",
    multiprocess_mode="mostrecent",
)  # fmt: skip
JOBS = Gauge("hbench_jobs", "Stored jobs, by status.", ["status"], multiprocess_mode="mostrecent")


def upload_finished(started: float, code: str | None) -> None:
    """Count an upload that ended: accepted (`code` None) or refused with `code`."""
    UPLOADS.labels("accepted" if code is None else "refused", code or "").inc()
    UPLOAD_SECONDS.observe(time.perf_counter() - started)


def writer_batch(*, committed: bool, applied: int, failed: int) -> None:
    """Count a writer batch and the changes it applied or failed."""
    WRITER_ROUNDS.labels("committed" if committed else "nothing-new").inc()
    WRITER_CHANGES.labels("applied").inc(applied)
    WRITER_CHANGES.labels("failed").inc(failed)
    if committed:
        WRITER_LAST_COMMIT.set(time.time())


def fresh_metrics_dir(settings: Settings) -> Path:
    """The multiprocess mode's folder, emptied: figures count from this start."""
    folder = settings.state_dir / "metrics"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, mode=0o700)
    return folder
