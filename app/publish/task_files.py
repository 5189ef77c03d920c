"""A board never mixes task files: a job goes on a board only if it ran the same task files
(the same digests, from its `lock.json`) as the runs already published there.

Boards of a benchmark whose registry record pins its task digests are held to the pins by
placement (`registry/pins.py`); this check covers the rest, named boards of unpinned
benchmarks and the boards jobs opened, by the first run published on the board. The
digests are in each job's stored summary (`task_digests`), which a deleted job keeps.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Job
from app.db.summary import KeptSummary
from hbench.errors import Problem
from registry.pins import differing_tasks
from registry.pins import mismatch as pin_mismatch


def board_task_files_problem(session: Session, board: str, row: Job) -> Problem | None:
    """`task-digest-mismatch` when the board's first published run ran other task files."""
    mine = KeptSummary.of(row).task_digests
    first = session.scalars(
        select(Job)
        .where(Job.board == board, Job.published_at.is_not(None), Job.id != row.id)
        .order_by(Job.published_at, Job.id)
        .limit(1)
    ).first()
    theirs = KeptSummary.of(first).task_digests if first is not None else {}
    if not theirs:
        return None  # the board's runs predate task digests, or it has none yet
    differing = differing_tasks(theirs, mine, sorted(mine.keys() | theirs.keys()))
    if not differing:
        return None
    return pin_mismatch(f"the runs on {board}", theirs, mine, differing)
