"""1,000 publishes through the outbox to a local bare data repository, written in batches
(one commit and push per batch), against one commit and push per publish, in the same run.

Each publish is enqueued in a transaction of its own, as the service does; then the
writer drains the outbox. Both sides use the same writer on the same kind of SQLite
database and bare repository; only the batch size differs.

Run it with `make bench` or `.venv/bin/python bench/publish_outbox.py [--publishes N]`.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from report import Row, emit

from app.datarepo.changes import OpenBoardChange, PublishRunChange
from app.datarepo.checkout import Checkout
from app.datarepo.git import Remote
from app.datarepo.outbox import counts, enqueue
from app.datarepo.repo_init import create_data_repository
from app.datarepo.writer import Writer
from app.db.migrate import upgrade
from app.db.session import Database
from registry.datarepo.models import Provenance, PublishedRun, RunEntry, RunUsage
from registry.placement import EntrySettings, OpenBoard, entry_name

TASKS = [f"task-{i:03d}" for i in range(40)]
OWNERS = [f"owner-{i}" for i in range(12)]
AGENTS = ["terminus-2", "mini-swe-agent", "openhands"]
BOARDS = [
    OpenBoard(
        slug=f"bench-set-1.0-model-{b}-{b:06x}", dataset="bench-set@1.0", benchmark=None,
        tasks=TASKS, model=f"model-{b}", settings={}, opened_by_job=f"job-{b}",
    )
    for b in range(2)
]  # fmt: skip


def publishes(n: int, seed: int = 7) -> list[PublishedRun]:
    rnd = random.Random(seed)  # noqa: S311 - synthetic data, not secrets
    start = datetime(2026, 10, 1, tzinfo=UTC)
    runs = []
    for i in range(n):
        owner = rnd.choice(OWNERS)
        settings = EntrySettings(agent=rnd.choice(AGENTS), options={"temperature": i % 2})
        attempts = rnd.choice([1, 3])
        runs.append(
            PublishedRun(
                id=f"run-{i:05d}",
                board=BOARDS[i % len(BOARDS)].slug,
                entry=RunEntry(owner=owner, name=entry_name(owner, settings), settings=settings),
                job_id=f"job-{i:05d}",
                issued=rnd.random() < 0.5,
                model="provider/model",
                agent_version="1.0.0",
                n_attempts=attempts,
                results={t: [float(rnd.random() < 0.6) for _ in range(attempts)] for t in TASKS},
                usage=RunUsage(input_tokens=rnd.randint(10_000, 900_000), output_tokens=4_000),
                provenance=Provenance(kind="local"),
                published_at=start + timedelta(minutes=i),
            )
        )
    return runs


def measure(root: Path, runs: list[PublishedRun], batch_size: int) -> tuple[float, float, int]:
    """Seconds enqueueing, seconds writing (from the drain's start to the last push), and
    the commits made."""
    remote = root / "data.git"
    create_data_repository(remote, bare=True)
    database = Database(f"sqlite+pysqlite:///{root / 'hbench.sqlite3'}")
    upgrade(database.engine)
    writer = Writer(database, Checkout(root / "data", Remote(str(remote))), batch_size=batch_size)
    writer.checkout.ensure()
    with database.session() as session:  # the boards exist before anyone publishes
        for board in BOARDS:
            enqueue(session, OpenBoardChange(board=board))
        session.commit()
    writer.drain()
    started = time.perf_counter()
    for run in runs:
        with database.session() as session:
            enqueue(session, PublishRunChange(run=run))
            session.commit()
    enqueued = time.perf_counter()
    report = writer.drain()
    written = time.perf_counter()
    with database.session() as session:
        left = counts(session, max_attempts=writer.max_attempts)
    assert report.applied == len(runs) and left.pending == left.given_up == 0
    database.dispose()
    return enqueued - started, written - enqueued, report.commits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--publishes", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=100)
    args = parser.parse_args()
    runs = publishes(args.publishes)
    figures = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, size in [("batched", args.batch_size), ("one per publish", 1)]:
            folder = Path(scratch) / f"batch-{size}"
            folder.mkdir()
            enqueueing, writing, commits = measure(folder, runs, size)
            total = enqueueing + writing
            figures[label] = len(runs) / total
            print(
                f"{label:>16}: {len(runs)} publishes, {commits:4d} commits: "
                f"{figures[label]:7.1f} publishes/s end to end ({total:6.2f} s: enqueue "
                f"{enqueueing:5.2f} s, write {writing:6.2f} s = {len(runs) / writing:7.1f}/s)"
            )
    ratio = figures["batched"] / figures["one per publish"]
    print(f"{'ratio':>16}: batching gives {ratio:.1f}x the publishes per second end to end")
    emit([Row("publish", f"{args.publishes} publishes, batches of {args.batch_size}",
              figures["batched"], "publishes/s", "one commit per publish",
              figures["one per publish"])])  # fmt: skip


if __name__ == "__main__":
    main()
