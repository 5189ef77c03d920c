"""What a board's pages show of its runs and rows, made once per run or row rather than
once per table cell (`RunView`, `RowView`), and the typed contexts of the pages written in
Python (`RunContext`, `EntryContext`)."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from registry.datarepo.models import BoardRow, Provenance, PublishedRun, RunEntry, TrialTiming
from registry.evidence import Level
from registry.scoring import Estimate, Tally, estimate, tally
from sitebuild.evidence import plain_labels
from sitebuild.format import NONE, duration, iso, reward, when
from sitebuild.html import Markup, html, join
from sitebuild.source import BoardSource


@dataclass(frozen=True)
class RunView:
    """A run with its own score, and the pieces of HTML its pages and its board's and
    entry's tables show: made once per run, not once per table cell in a template."""

    run: PublishedRun
    score: Estimate
    attempts: int  # the widest task's trials: retries may give a task more than n_attempts
    task_rows: Markup
    published: Markup  # the `<time>` of its publication
    status: Markup
    started: datetime | None  # the first trial's start, where the record has timings
    finished: datetime | None  # the last trial's finish
    levels: tuple[Level, ...]  # what the run proves (registry/evidence.py)
    evidence: Markup  # the levels' labels, without titles: the pages say what they prove

    @classmethod
    def of(cls, run: PublishedRun) -> RunView:
        results = run.results
        attempts = max(map(len, results.values()))
        seconds, started, finished = _timings(run.trials)
        # One cached piece per task, its columns split apart in one pass.
        rows, sums, counts, passed, binary, in_unit = zip(
            *[_task(task, tuple(trials), attempts) for task, trials in results.items()],
            strict=True,
        )
        # The registry's estimator, over the per-task tallies the rows were made with.
        tallied = Tally(list(sums), list(counts), list(passed), all(binary), all(in_unit))
        # Each row is its cached start, its time cell (with `</tr>`) and a new line.
        pieces: list[Markup] = []
        for row, task in zip(rows, results, strict=True):
            pieces += (row, _time_cell(seconds.get(task)), _NEWLINE)
        pieces.pop()
        levels = tuple(run.levels())
        return cls(
            run,
            estimate(tallied),
            attempts,
            join(pieces),
            time_html(run.published_at),
            _STATUS[run.status],
            started,
            finished,
            levels,
            plain_labels(levels),
        )


def _timings(
    trials: Sequence[TrialTiming],
) -> tuple[dict[str, int], datetime | None, datetime | None]:
    """Each task's time over its timed trials, in tenths of a second, and the first start
    and last finish of the run's trials."""
    timed = [t for t in trials if t.started_at is not None and t.finished_at is not None]
    began = [at for t in timed if (at := t.started_at) is not None]
    ended = [at for t in timed if (at := t.finished_at) is not None]
    # A site has close to a million trials: the subtractions run in `map`, not a loop.
    took = map(timedelta.total_seconds, map(operator.sub, ended, began))
    spent: dict[str, float] = {}
    get = spent.get
    for trial, seconds in zip(timed, took, strict=True):
        spent[trial.task] = get(trial.task, 0.0) + seconds
    tenths = {task: int(value * 10 + 0.5) for task, value in spent.items()}
    return tenths, min(began, default=None), max(ended, default=None)


_STATUS = {
    "public": Markup("public"),
    "withdrawn": Markup('<span class="badge status-off">withdrawn</span>'),
    "taken_down": Markup('<span class="badge status-off">taken down</span>'),
}
_NEWLINE = Markup("\n")


@lru_cache(maxsize=65536)
def time_html(at: datetime) -> Markup:
    """A time as the pages show it, machine-readable in its `datetime`."""
    return html('<time datetime="{iso}">{when}</time>', iso=iso(at), when=when(at))


@dataclass(frozen=True)
class RowView:
    """A board row and the Actions provenance of its public runs, for the badge."""

    row: BoardRow
    actions: tuple[Provenance, ...]

    @property
    def actions_title(self) -> str:
        where = sorted({p.repository or "a repository" for p in self.actions})
        return "Issued from GitHub Actions in " + ", ".join(where)


@lru_cache(maxsize=1 << 17)
def _task(
    task: str, trials: tuple[float | None, ...], width: int
) -> tuple[Markup, float, int, int, bool, bool]:
    """The start of a task's row in the run page's table (the name escaped, each trial's
    reward, then the task's mean; the rest ours), and its tally for the run's score. The
    task's time and `</tr>` (`_time_cell`) end the row.

    Made once per task and rewards: the runs of a board share their tasks, and most
    rewards are 0 or 1, so 400,000 rows of a large site are a few thousand distinct ones.
    """
    cells = join([_cell(t) for t in trials])
    pad = join([_EMPTY] * (width - len(trials)))
    mean = _cell(math.fsum(filter(None, trials)) / len(trials))
    row = html(
        '<tr><th scope="row">{task}</th>{cells}{pad}{mean}', task=task, cells=cells, pad=pad,
        mean=mean,
    )  # fmt: skip
    t = tally({task: trials})
    return row, t.sums[0], t.counts[0], t.passed[0], t.binary, t.in_unit


@lru_cache(maxsize=1 << 15)
def _time_cell(tenths: int | None) -> Markup:
    """The task's time over its trials, and the end of its row; none where no trial's
    times were recorded."""
    if tenths is None:
        return html('<td data-sort="">{none}</td></tr>', none=NONE)
    return html(
        '<td data-sort="{sort}">{took}</td></tr>', sort=tenths / 10, took=duration(tenths / 10)
    )


def _cell(value: float | None) -> Markup:
    cell = _CELLS.get(value)
    return cell if cell is not None else html("<td>{reward}</td>", reward=reward(value))


_EMPTY = Markup("<td></td>")
_CELLS = {v: html("<td>{reward}</td>", reward=reward(v)) for v in (None, 0.0, 1.0)}
"""Most rewards are 0, 1 or an error: their cells are looked up rather than formatted."""


@dataclass(frozen=True)
class RunContext:
    """What a run's page shows: its board, the run with its score and pieces of HTML, its
    entry's row on the board (None while the entry has no public run), the service's
    address for the download link, and its signature's bundle (None without one)."""

    board: BoardSource
    view: RunView
    row: BoardRow | None
    service_url: str | None
    bundle: str | None = None


@dataclass(frozen=True)
class EntryContext:
    """What an entry's page shows: its board, its name and settings, its row on the board
    (None while it has no public run), its chart of scores over time and its runs' rows."""

    board: BoardSource
    name: str
    entry: RunEntry
    row: BoardRow | None
    chart: Markup | None
    run_rows: Markup
