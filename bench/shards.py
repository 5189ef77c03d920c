"""Sharded runs: the demo board's run through the reusable workflow as a 3-shard matrix,
beside the same run unsharded, in this run, with the local Action runner and real Docker
(the runner image, Harbor's docker environment), against the real service.

A first unsharded run, not counted, builds the demo tasks' images. Figures: each
workflow run's wall time (from its first job's start to its last job's end,
as the local runner runs its jobs one after the other); the sharded run's critical path,
its wall time were each shard's job on a runner of its own (the issue job, the longest
shard job and the report job, as GitHub runs them); and the service's merge cost, the
time the last shard's upload spends forming the run's one job (`app.bench.shards`,
`merge_run`), timed again on the stored shards with the merged job taken away in between.

    .venv/bin/python bench/shards.py [--merges N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from report import Row, emit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ and tools/ aren't installed
from app.bench.shards import merge_run
from app.blobs import LocalBlobStore
from app.db.models import IssuedRun, IssuedRunStatus, Job
from tests.action.conftest import IMAGE, ROOT, CallerGitHub, caller_github
from tests.action.runner import ActionRunner
from tests.action.workflow_runner import SKIP_REMOTE, WorkflowRun, place_checkout, run_workflow
from tools import dockerhost, images

NAME = "shards"
WORKFLOW = ROOT / ".github" / "workflows" / "run-benchmark.yml"
SHARDS = 3


def timed_workflow(caller: CallerGitHub, run_id: int, shards: int) -> tuple[float, WorkflowRun]:
    caller.workflow_run(run_id)

    def runner_for(name: str) -> ActionRunner:
        job = caller.runner_job(f"{run_id}-{name}")
        return ActionRunner(job.workspace, job.temp, job.env, skip_remote=SKIP_REMOTE)

    inputs: dict[str, Any] = {
        "service-url": caller.service.url, "board": "hbench-demo", "agent": "oracle",
        "network": "host", "shards": shards,
    }  # fmt: skip
    started = time.perf_counter()
    run = run_workflow(WORKFLOW, inputs, {}, runner_for, matrix_at_once=False)
    seconds = time.perf_counter() - started
    for job in [job for runs in run.jobs.values() for job in runs]:
        if not job.result.succeeded:
            raise SystemExit(f"job {job.name} failed:\n{job.result.log[-4000:]}")
    return seconds, run


def merge_seconds(caller: CallerGitHub, run_id: str, repeats: int) -> list[float]:
    """`merge_run` on the run's stored shards, `repeats` times, its merged job taken away
    (its row and its archive) and the run set waiting again before each."""
    settings = caller.settings
    if settings is None:
        raise SystemExit("the service's settings are unknown")
    database, blobs = caller.service.database, LocalBlobStore(settings.blob_dir)
    times = []
    for _ in range(repeats):
        with database.session() as session:
            run = session.get(IssuedRun, uuid.UUID(run_id))
            assert run is not None
            merged = session.query(Job).filter(Job.issued_run_id == run.id).one()
            if merged.blob_key:
                blobs.delete(merged.blob_key)
            session.delete(merged)
            run.status = IssuedRunStatus.ISSUED
            session.commit()
        completed = merge_run(database, blobs, uuid.UUID(run_id), datetime.now(UTC))
        if completed is None:
            raise SystemExit(f"the run {run_id} was not merged again")
        times.append(completed.seconds)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--merges", type=int, default=5, help="times to time the merge")
    args = parser.parse_args(argv)
    try:
        lease = dockerhost.acquire((images.TASK_BASE, images.PYTHON_BASE))
    except dockerhost.DockerUnavailableError as error:
        print(f"{NAME}: skipped, Docker can't run here: {error}")
        return 0
    try:
        with tempfile.TemporaryDirectory(prefix="hbench-bench-shards-") as folder:
            images.build_runner_image(lease.docker, IMAGE, log=Path(folder) / "build.log")
            with caller_github(Path(folder)) as caller:
                place_checkout(caller.workspace, IMAGE)
                # Not counted: the first run builds the demo tasks' images, which the
                # runs after it find in Docker's cache.
                timed_workflow(caller, 5100, 1)
                sharded, run = timed_workflow(caller, 5102, SHARDS)
                whole, _ = timed_workflow(caller, 5101, 1)
                merges = merge_seconds(caller, run.needs["issue"]["outputs"]["run-id"],
                                       args.merges)  # fmt: skip
    finally:
        lease.release()
    # The critical path: what a matrix on runners of its own waits for.
    issue, report = (run.jobs[name][0].seconds for name in ("issue", "report"))
    longest = max(job.seconds for job in run.jobs["shard"])
    critical = issue + longest + report
    merge = statistics.median(merges)
    base = "the demo run unsharded, one job"
    parallel = f"{SHARDS} shards, critical path on {SHARDS} runners"
    merged = f"service's merge of {SHARDS} shards (median of {len(merges)})"
    rows = [
        Row(NAME, base, whole, "s"),
        Row(NAME, f"{SHARDS} shards, jobs one after the other", sharded, "s", base, whole),
        Row(NAME, parallel, critical, "s", base, whole),
        Row(NAME, merged, merge * 1000, "ms", f"{base} (ms)", whole * 1000),
    ]
    width = max(len(row.figure) for row in rows)
    for row in rows:
        ratio = f"  ({row.ratio:.3g}x)" if row.ratio is not None else ""
        print(f"{row.figure:<{width}}: {row.value:10.3f} {row.unit}{ratio}")
    emit(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
