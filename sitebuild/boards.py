"""A board's pages: the board with its rows and chart, one page per entry, one per run.

Everything here is read from the board's `rows.json` (scores, intervals, rank groups,
honest run counts) and its run files; nothing is scored twice except each run's own
score, which the rows give only for public runs.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from markupsafe import Markup, escape
from pydantic import JsonValue

from registry.datarepo import layout
from registry.datarepo.models import BoardRow, Provenance, PublishedRun, TrialTiming
from registry.evidence import Level
from registry.schema import MetricScale
from registry.scoring import Estimate, Tally, estimate, tally
from sitebuild import charts, page
from sitebuild.config import SiteConfig
from sitebuild.evidence import (
    CHOICES,
    LEGEND,
    data_levels,
    labels,
    plain_labels,
    tasks_pinned_text,
)
from sitebuild.format import (
    NONE,
    count,
    duration,
    interval,
    iso,
    json_time,
    number,
    options,
    reward,
    scaled,
    score,
    usd,
    when,
)
from sitebuild.page import Page
from sitebuild.source import BoardSource, SiteData


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
        times = [_time_cell(seconds.get(task)) for task in results]
        lines = [f"{row}{time}</tr>" for row, time in zip(rows, times, strict=True)]
        levels = tuple(run.levels())
        return cls(
            run,
            estimate(tallied),
            attempts,
            Markup("\n".join(lines)),  # noqa: S704 - every text escaped: see `_task`, `_time_cell`
            time_html(run.published_at),
            Markup(_STATUS[run.status]),  # noqa: S704 - constant HTML
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
    "public": "public",
    "withdrawn": '<span class="badge status-off">withdrawn</span>',
    "taken_down": '<span class="badge status-off">taken down</span>',
}


def time_html(at: datetime) -> Markup:
    """A time as the pages show it, machine-readable in its `datetime`."""
    return Markup(f'<time datetime="{iso(at)}">{when(at)}</time>')  # noqa: S704 - ours


@dataclass(frozen=True)
class RowView:
    """A board row and the Actions provenance of its public runs, for the badge."""

    row: BoardRow
    actions: tuple[Provenance, ...]

    @property
    def actions_title(self) -> str:
        where = sorted({p.repository or "a repository" for p in self.actions})
        return "Issued from GitHub Actions in " + ", ".join(where)


def board_pages(site: SiteData, slug: str, config: SiteConfig) -> Iterator[Page]:
    """The board's page, its entries' pages and its runs' pages."""
    source = site.boards[slug]
    runs = [RunView.of(r) for r in site.runs(slug)]
    by_entry: dict[str, list[RunView]] = {}
    for view in runs:
        by_entry.setdefault(view.run.entry.name, []).append(view)
    rows = {row.entry: row for row in source.rows.rows} if source.rows else {}
    rows_json = {str(row["entry"]): row for row in source.rows_json}
    yield _board_page(site, source, runs)
    for name, entry_runs in by_entry.items():
        yield _entry_page(source, name, entry_runs, rows.get(name), rows_json.get(name))
    for view in runs:
        yield _run_page(site, source, view, rows.get(view.run.entry.name), config)


def board_json(source: BoardSource) -> dict[str, JsonValue]:
    """What the board is, as its JSON and the boards index give it."""
    header = source.header
    rows = source.rows.rows if source.rows else []
    return {
        "slug": source.slug,
        "title": source.title,
        "named": source.named is not None,
        "dataset": header.dataset,
        "benchmark": header.benchmark,
        "taskSet": source.named.task_set if source.named else None,
        "taskCount": header.task_count,
        "model": header.model,
        "metric": header.metric,
        "metricScale": header.metric_scale,
        "settings": header.settings,
        "entries": len(rows),
        "runsPublic": sum(r.runs_public for r in rows),
        "leader": rows[0].entry if rows else None,
        "topScore": rows[0].score if rows else None,
        "tasksPinned": tasks_pinned(source),
    }


def tasks_pinned(source: BoardSource) -> bool:
    """Whether the registry pins the board's task files: as its rows say, once it has any."""
    return source.rows.tasks_pinned if source.rows else source.header.tasks_pinned


def _board_page(site: SiteData, source: BoardSource, runs: Sequence[RunView]) -> Page:
    rows = source.rows.rows if source.rows else []
    views = [RowView(row, _actions(row)) for row in rows]
    scale = source.header.metric_scale
    chart = _cost_chart(source.slug, rows, scale)
    data: dict[str, JsonValue] = {
        "board": board_json(source),
        "rows": list(source.rows_json),
        "runsWithdrawn": source.rows.runs_withdrawn if source.rows else 0,
        "runsTakenDown": source.rows.runs_taken_down if source.rows else 0,
        "runs": [_run_summary(v) for v in runs],
    }
    benchmark = site.registry.benchmarks.get(source.header.benchmark or "")
    model = site.registry.models.get(source.header.model)
    return Page(
        path=page.board(source.slug),
        template="board.html",
        title=source.title,
        section="boards",
        context={"board": source, "rows": views, "runs": runs, "chart": chart,
                 "benchmark": benchmark, "model": model, "scale": scale,
                 "run_rows": _board_run_rows(runs, scale),
                 "row_html": _board_rows(source.slug, views, scale),
                 "tasks_pinned": tasks_pinned_text(tasks_pinned(source)),
                 "evidence_legend": LEGEND, "evidence_choices": CHOICES},
        data=data,
    )  # fmt: skip


def _entry_page(
    source: BoardSource,
    name: str,
    runs: Sequence[RunView],
    row: BoardRow | None,
    row_json: JsonValue,
) -> Page:
    scale = source.header.metric_scale
    public = [v for v in runs if v.run.status == "public"]
    chart = None
    if public:
        chart = charts.score_time_chart(
            [(v.run.published_at, scaled(v.score.mean, scale), v.run.id) for v in public],
            chart_id="over-time",
            title=f"{name}: score of each public run over time",
            y_label=f"Score ({source.header.metric})",
            y_top=scaled(1.0, scale),
            y_format=number,
        )
    entry = runs[0].run.entry
    data: dict[str, JsonValue] = {
        "board": source.slug,
        "entry": name,
        "owner": entry.owner,
        "settings": entry.settings.to_json_dict(),
        "row": row_json,
        "runs": [_run_summary(v) for v in runs],
    }
    return Page(
        path=page.entry(source.slug, name),
        template="entry",  # sitebuild.entry_page, not a Jinja template
        title=f"{name} on {source.title}",
        section="boards",
        context={"board": source, "name": name, "entry": entry, "row": row, "runs": runs,
                 "chart": chart, "scale": scale,
                 "run_rows": _entry_run_rows(runs, scale)},
        data=data,
    )  # fmt: skip


def _run_page(
    site: SiteData, source: BoardSource, view: RunView, row: BoardRow | None, config: SiteConfig
) -> Page:
    run = view.run
    record = layout.run_file(source.slug, run.id)
    return Page(
        path=page.run(source.slug, run.id),
        template="run",  # sitebuild.run_page, not a Jinja template
        title=f"Run {run.id} on {source.title}",
        section="boards",
        context={"board": source, "view": view, "run": run, "row": row,
                 "scale": source.header.metric_scale, "service_url": config.service_url},
        json_text=site.files.raw(record),
        json_source=record,
    )  # fmt: skip


def _cost_chart(slug: str, rows: Sequence[BoardRow], scale: MetricScale) -> str | None:
    """Score against cost per task; against tokens per task when no entry has a cost."""
    costed = [r for r in rows if r.cost_per_task_usd is not None]
    if costed:
        points = [
            charts.Point(r.cost_per_task_usd or 0.0, scaled(r.score, scale), r.entry)
            for r in costed
        ]
        x_label, x_format = "Cost per task (USD)", usd
    else:
        tokens = [(r, _tokens(r)) for r in rows]
        points = [charts.Point(t, scaled(r.score, scale), r.entry) for r, t in tokens if t]
        x_label, x_format = "Tokens per task (input + output)", count
    if not points:
        return None
    return charts.score_cost_chart(
        points,
        chart_id=f"cost-{slug}",
        title=f"Score against {x_label.split(' (')[0].lower()}, with the Pareto frontier",
        x_label=x_label,
        x_format=x_format,
        y_label="Score",
        y_top=scaled(1.0, scale),
        y_format=number,
    )


def _board_rows(slug: str, views: Sequence[RowView], scale: MetricScale) -> Markup:
    """The board page's table of entries, best first."""
    return Markup("\n".join([_board_row(slug, v, scale) for v in views]))  # noqa: S704 - escaped


def _board_row(slug: str, view: RowView, scale: MetricScale) -> str:
    r, tokens, entry = view.row, view.row.tokens_per_task, escape(view.row.entry)
    badge = ""
    if view.actions:
        title = escape(view.actions_title)
        badge = f' <span class="badge actions" title="{title}">GitHub Actions</span>'
    custom = ""
    if r.prompt_template_digest or r.extra_instruction_digests:
        custom = ' <span class="note">custom prompt</span>'
    band = ""
    if r.ci_low is not None:
        band = (
            f' <span class="note" title="standard error {score(r.stderr, scale)}">'
            f"({interval(r.ci_low, r.ci_high, scale)})</span>"
        )
    issued = f"{r.runs_issued_public} of {r.runs_issued}" if r.runs_issued else "none issued"
    cached = f" ({count(tokens.cached)} cached)" if tokens.cached else ""
    owner = escape(r.owner)
    cost = "" if r.cost_per_task_usd is None else r.cost_per_task_usd
    levels = tuple(r.evidence)
    return (
        f'<tr data-evidence="{data_levels(levels)}">\n'
        f'<td data-sort="{r.rank_group}">{r.rank_group}</td>\n'
        f'<td><a href="../../{page.entry(slug, r.entry)}">{entry}</a>{badge}</td>\n'
        f'<td><a href="https://github.com/{owner}">{owner}</a></td>\n'
        f"<td>{escape(r.agent)} "
        f'<span class="note">{escape(options(r.options))}</span>{custom}</td>\n'
        f'<td data-sort="{r.score}"><strong>{score(r.score, scale)}</strong>{band}</td>\n'
        f"<td>{labels(levels)}</td>\n"
        f'<td data-sort="{r.runs_public}">{r.runs_public}</td>\n'
        f'<td data-sort="{r.runs_issued_public}">{issued}</td>\n'
        f'<td data-sort="{tokens.input or ""}">{count(tokens.input)} in{cached}, '
        f"{count(tokens.output)} out</td>\n"
        f'<td data-sort="{cost}">{usd(r.cost_per_task_usd)}</td>\n'
        "</tr>"
    )


def _board_run_rows(runs: Sequence[RunView], scale: MetricScale) -> Markup:
    """The board page's table of runs (links relative to `boards/<slug>/index.html`)."""
    lines = []
    for v in runs:
        run, name = escape(v.run.id), escape(v.run.entry.name)
        lines.append(
            f'<tr data-evidence="{data_levels(v.levels)}">'
            f'<td><a href="runs/{run}.html">{run}</a></td>'
            f'<td><a href="entries/{name}.html">{name}</a></td>'
            f'<td data-sort="{iso(v.run.published_at)}">{v.published}</td>'
            f'<td data-sort="{v.score.mean}">{score(v.score.mean, scale)}</td>'
            f"<td>{v.evidence}</td><td>{v.status}</td></tr>"
        )
    return Markup("\n".join(lines))  # noqa: S704 - every text escaped


def _entry_run_rows(runs: Sequence[RunView], scale: MetricScale) -> Markup:
    """An entry page's table of runs (links relative to `boards/<slug>/entries/`)."""
    lines = []
    for v in runs:
        run, p = v.run, v.run.provenance
        where = "own machine"
        if p.kind == "actions":
            title = escape(f"Issued from GitHub Actions in {p.repository or 'a repository'}")
            where = f'<span class="badge actions" title="{title}">GitHub Actions</span>'
        lines.append(
            f'<tr data-evidence="{data_levels(v.levels)}">'
            f'<td><a href="../runs/{escape(run.id)}.html">{escape(run.id)}</a></td>'
            f'<td data-sort="{iso(run.published_at)}">{v.published}</td>'
            f"<td>{escape(run.agent_version or NONE)}</td>"
            f'<td data-sort="{run.n_attempts}">{run.n_attempts}</td>'
            f'<td data-sort="{v.score.mean}">{score(v.score.mean, scale)}</td>'
            f"<td>{'yes' if run.issued else 'no'}</td><td>{where}</td>"
            f"<td>{v.evidence}</td><td>{v.status}</td></tr>"
        )
    return Markup("\n".join(lines))  # noqa: S704 - every text escaped


@lru_cache(maxsize=1 << 17)
def _task(
    task: str, trials: tuple[float | None, ...], width: int
) -> tuple[str, float, int, int, bool, bool]:
    """The start of a task's row in the run page's table (the name escaped, each trial's
    reward, then the task's mean; the rest ours), and its tally for the run's score. The
    task's time (`_time_cell`) and `</tr>` end the row.

    Made once per task and rewards: the runs of a board share their tasks, and most
    rewards are 0 or 1, so 400,000 rows of a large site are a few thousand distinct ones.
    """
    cells = "".join([_cell(t) for t in trials])
    pad = "<td></td>" * (width - len(trials))
    mean = _cell(math.fsum(filter(None, trials)) / len(trials))
    row = f'<tr><th scope="row">{escape(task)}</th>{cells}{pad}{mean}'
    t = tally({task: trials})
    return row, t.sums[0], t.counts[0], t.passed[0], t.binary, t.in_unit


@lru_cache(maxsize=1 << 15)
def _time_cell(tenths: int | None) -> str:
    """The task's time over its trials; none where no trial's times were recorded."""
    if tenths is None:
        return f'<td data-sort="">{NONE}</td>'
    return f'<td data-sort="{tenths / 10}">{duration(tenths / 10)}</td>'


def _cell(value: float | None) -> str:
    cell = _CELLS.get(value)
    return cell if cell is not None else f"<td>{reward(value)}</td>"


_CELLS: dict[float | None, str] = {v: f"<td>{reward(v)}</td>" for v in (None, 0.0, 1.0)}
"""Most rewards are 0, 1 or an error: their cells are looked up rather than formatted."""


def _tokens(row: BoardRow) -> float | None:
    tokens = row.tokens_per_task
    if tokens.input is None and tokens.output is None:
        return None
    return (tokens.input or 0.0) + (tokens.output or 0.0)


def _actions(row: BoardRow) -> tuple[Provenance, ...]:
    return tuple(ref.provenance for ref in row.runs if ref.provenance.kind == "actions")


def _run_summary(view: RunView) -> dict[str, JsonValue]:
    run = view.run
    return {
        "id": run.id,
        "entry": run.entry.name,
        "owner": run.entry.owner,
        "status": run.status,
        "issued": run.issued,
        "publishedAt": json_time(run.published_at),
        "score": round(view.score.mean, 6),
        "provenance": run.provenance.kind,
        "evidence": list(view.levels),
    }
