"""The crash test: a writer process killed with SIGKILL at random points across 200
publishes, restarted until the outbox is empty; then the data repository and the database
must agree, every change applied exactly once, nothing lost and nothing doubled."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.datarepo.changes import (
    PublicChange,
    PublishRunChange,
    TakeDownRunChange,
    WithdrawRunChange,
)
from app.datarepo.outbox import enqueue, entry_change_id
from app.db.models import OutboxEntry
from app.db.session import Database
from registry.datarepo import layout
from registry.datarepo.models import PublishedRun
from registry.datarepo.state import recompute_all

from .conftest import make_run, open_change, opened_board, outbox_rows, remote_state, trailers

pytestmark = pytest.mark.postgres  # the database's semantics: both backends

PUBLISHES = 200
KILLS = 6  # at most; the writer may finish its work before the last ones
MIN_KILLS = 3
MAX_RUNS = 20


def scenario() -> list[PublicChange]:
    """A job opens a board; 200 runs are published on it and on the demo board; a few
    are withdrawn or taken down afterwards, which only works if their publish landed."""
    boards = ["hbench-demo", opened_board().slug]
    changes: list[PublicChange] = [open_change()]
    changes += [PublishRunChange(run=make_run(n, boards[n % 2])) for n in range(PUBLISHES)]
    changes += [WithdrawRunChange(board=boards[n % 2], run_id=f"run-{n:04d}")
                for n in range(0, PUBLISHES, 25)]  # fmt: skip
    changes += [TakeDownRunChange(board=boards[n % 2], run_id=f"run-{n:04d}",
                                  reason="score-cannot-be-right", note="rewards out of range")
                for n in range(7, PUBLISHES, 40)]  # fmt: skip
    return changes


def applied_count(database: Database) -> int:
    with database.session() as session:
        query = select(func.count()).where(OutboxEntry.applied_at.is_not(None))
        return session.scalar(query) or 0


def test_a_writer_killed_at_random_points_loses_and_doubles_nothing(
    database: Database, database_url: str, tmp_path: Path
) -> None:
    # A new seed each run, printed on failure so a failing run can be replayed.
    seed = random.randrange(2**32)  # noqa: S311 - kill timings, not secrets
    rng = random.Random(seed)  # noqa: S311
    changes = scenario()
    with database.session() as session:
        ids = [entry_change_id(enqueue(session, change)) for change in changes]
        session.commit()

    state_dir = tmp_path / "state"
    env = {
        **os.environ,
        "HBENCH_STATE_DIR": str(state_dir),
        "HBENCH_DATABASE_URL": database_url,
        "HBENCH_WRITER_BATCH_SIZE": "5",  # many commits: many points to be killed between
    }
    log = tmp_path / "writer.log"
    kills: list[int] = []  # how many entries were applied at each kill
    drained = False
    for _ in range(MAX_RUNS):
        with log.open("a") as out:
            # A session of its own, so the kill takes the writer's git processes too, as
            # a crash of its machine or container would.
            writer = subprocess.Popen(
                [sys.executable, "-m", "app.datarepo", "write", "--once"],
                env=env, stdout=out, stderr=out, start_new_session=True,
            )  # fmt: skip
        if len(kills) < KILLS and _killed(writer, database, rng):
            kills.append(applied_count(database))
            continue
        code = writer.wait(120)
        if code == 0 and applied_count(database) == len(ids):
            drained = True
            break
    locks = sorted(str(p) for p in state_dir.rglob("*.lock"))
    context = (
        f"seed {seed}, kills after {kills} applied, locks {locks}, log:\n{log.read_text()[-3000:]}"
    )
    assert drained and len(kills) >= MIN_KILLS, context

    rows = outbox_rows(database)
    assert all(row.applied_at is not None and row.last_error is None for row in rows), context
    remote = state_dir / "data.git"
    assert trailers(remote) == dict.fromkeys(ids, 1), context  # each change in one commit
    state = remote_state(remote)
    audit = Counter(
        json.loads(line)["change"]
        for path in state.under("audit")
        for line in state.files[path].splitlines()
    )
    assert audit == dict.fromkeys(ids, 1), context  # each change logged once
    runs_on_boards = [p for p in state.files if "/runs/" in p]
    assert len(runs_on_boards) == PUBLISHES, context
    for change in changes:
        if change.kind == "publish_run":
            path = layout.run_file(change.run.board, change.run.id)
            landed = PublishedRun.model_validate_json(state.files[path])
            assert landed.model_copy(update={"status": "public", "status_changed_at": None,
                                             "take_down_reason": None}) == change.run  # fmt: skip
    statuses = Counter(PublishedRun.model_validate_json(state.files[p]).status
                       for p in runs_on_boards)  # fmt: skip
    assert statuses == {"public": PUBLISHES - 8 - 5, "withdrawn": 8, "taken_down": 5}
    assert recompute_all(state) == state, context  # rows.json matches a fresh recompute


def _killed(writer: subprocess.Popen[bytes], database: Database, rng: random.Random) -> bool:
    """Kill the writer at a random point; False when it finished first.

    Half the kills come at a random time from the start (start-up and recovery, the first
    batch); the others a random moment after the writer's first batch reached the
    database, so they fall among batches: while applying, committing, pushing, marking.
    """
    start = applied_count(database)
    if rng.random() < 0.5:
        deadline = time.monotonic() + rng.uniform(0.2, 1.2)
        while time.monotonic() < deadline and writer.poll() is None:
            time.sleep(0.01)
    else:
        while writer.poll() is None and applied_count(database) == start:
            time.sleep(0.02)
        time.sleep(rng.uniform(0, 0.15))
    if writer.poll() is not None:
        return False
    os.killpg(writer.pid, signal.SIGKILL)
    writer.wait()
    return True
