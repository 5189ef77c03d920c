"""A board's pages: the board with its rows and chart, one page per entry, one per run.

Everything here is read from the board's `rows.json` (scores, intervals, rank groups,
honest run counts) and its run files; nothing is scored twice except each run's own
score, which the rows give only for public runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from registry.datarepo import layout
from registry.datarepo.models import BoardRow, Provenance
from registry.evidence import Level
from registry.schema import Benchmark, MetricScale, Model
from sitebuild import charts, page
from sitebuild.config import SiteConfig
from sitebuild.evidence import (
    CHOICES,
    LEGEND,
    data_levels,
    labels,
    tasks_pinned_text,
)
from sitebuild.format import (
    NONE,
    count,
    interval,
    iso,
    json_time,
    number,
    options,
    scaled,
    score,
    usd,
)
from sitebuild.html import NOTHING, Markup, const, html, join, template
from sitebuild.page import Page
from sitebuild.source import BoardSource, SiteData
from sitebuild.views import EntryContext, RowView, RunContext, RunView


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


@dataclass(frozen=True)
class BoardContext:
    """What `board.html` shows: the board, its rows best first with their table's HTML,
    its runs with theirs, the cost chart, the registry's benchmark and model, whether its
    task files are pinned, and the evidence legend and filter."""

    board: BoardSource
    rows: Sequence[RowView]
    runs: Sequence[RunView]
    chart: Markup | None
    benchmark: Benchmark | None
    model: Model | None
    scale: MetricScale
    run_rows: Markup
    row_html: Markup
    tasks_pinned: str
    evidence_legend: Markup
    evidence_choices: tuple[tuple[Level, str], ...]


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
        context=BoardContext(
            board=source, rows=views, runs=runs, chart=chart, benchmark=benchmark, model=model,
            scale=scale, run_rows=_board_run_rows(runs, scale),
            row_html=_board_rows(source.slug, views, scale),
            tasks_pinned=tasks_pinned_text(tasks_pinned(source)), evidence_legend=LEGEND,
            evidence_choices=CHOICES,
        ),
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
        context=EntryContext(source, name, entry, row, chart, _entry_run_rows(runs, scale)),
        data=data,
    )


def _run_page(
    site: SiteData, source: BoardSource, view: RunView, row: BoardRow | None, config: SiteConfig
) -> Page:
    run = view.run
    record = layout.run_file(source.slug, run.id)
    signed = run.signature.bundle if run.signature is not None else None
    bundle = site.files.get(signed) if signed is not None else None
    return Page(
        path=page.run(source.slug, run.id),
        template="run",  # sitebuild.run_page, not a Jinja template
        title=f"Run {run.id} on {source.title}",
        section="boards",
        context=RunContext(source, view, row, config.service_url, bundle),
        json_text=site.files.raw(record),
        json_source=record,
    )


def _cost_chart(slug: str, rows: Sequence[BoardRow], scale: MetricScale) -> Markup | None:
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
    return join([_board_row(slug, v, scale) for v in views], "\n")


def _board_row(slug: str, view: RowView, scale: MetricScale) -> Markup:
    r, tokens = view.row, view.row.tokens_per_task
    badge = NOTHING
    if view.actions:
        badge = html(
            ' <span class="badge actions" title="{title}">GitHub Actions</span>',
            title=view.actions_title,
        )
    custom = NOTHING
    if r.prompt_template_digest or r.extra_instruction_digests:
        custom = const(' <span class="note">custom prompt</span>')
    band = NOTHING
    if r.ci_low is not None:
        band = html(
            ' <span class="note" title="standard error {stderr}">({interval})</span>',
            stderr=score(r.stderr, scale), interval=interval(r.ci_low, r.ci_high, scale),
        )  # fmt: skip
    issued = f"{r.runs_issued_public} of {r.runs_issued}" if r.runs_issued else "none issued"
    cached = f" ({count(tokens.cached)} cached)" if tokens.cached else ""
    levels = tuple(r.evidence)
    return html(
        '<tr data-evidence="{levels}">\n'
        '<td data-sort="{rank}">{rank}</td>\n'
        '<td><a href="../../{entry_href}">{entry}</a>{badge}</td>\n'
        '<td><a href="https://github.com/{owner}">{owner}</a></td>\n'
        '<td>{agent} <span class="note">{options}</span>{custom}</td>\n'
        '<td data-sort="{score_sort}"><strong>{score}</strong>{band}</td>\n'
        "<td>{labels}</td>\n"
        '<td data-sort="{public}">{public}</td>\n'
        '<td data-sort="{issued_public}">{issued}</td>\n'
        '<td data-sort="{input_sort}">{input} in{cached}, {output} out</td>\n'
        '<td data-sort="{cost_sort}">{cost}</td>\n'
        "</tr>",
        levels=data_levels(levels), rank=r.rank_group, entry_href=page.entry(slug, r.entry),
        entry=r.entry, badge=badge, owner=r.owner, agent=r.agent, options=options(r.options),
        custom=custom, score_sort=r.score, score=score(r.score, scale), band=band,
        labels=labels(levels), public=r.runs_public, issued_public=r.runs_issued_public,
        issued=issued, input_sort=tokens.input or "", input=count(tokens.input),
        cached=cached, output=count(tokens.output),
        cost_sort="" if r.cost_per_task_usd is None else r.cost_per_task_usd,
        cost=usd(r.cost_per_task_usd),
    )  # fmt: skip


_BOARD_RUN_ROW = template(
    '<tr data-evidence="{levels}">'
    '<td><a href="runs/{run}.html">{run}</a></td>'
    '<td><a href="entries/{entry}.html">{entry}</a></td>'
    '<td data-sort="{published_sort}">{published}</td>'
    '<td data-sort="{score_sort}">{score}</td>'
    "<td>{evidence}</td><td>{status}</td></tr>"
)


def _board_run_rows(runs: Sequence[RunView], scale: MetricScale) -> Markup:
    """The board page's table of runs (links relative to `boards/<slug>/index.html`)."""
    return join(
        [
            _BOARD_RUN_ROW(
                levels=data_levels(v.levels),
                run=v.run.id,
                entry=v.run.entry.name,
                published_sort=iso(v.run.published_at),
                published=v.published,
                score_sort=v.score.mean,
                score=score(v.score.mean, scale),
                evidence=v.evidence,
                status=v.status,
            )
            for v in runs
        ],
        "\n",
    )


_OWN_MACHINE = Markup("own machine")
_ENTRY_RUN_ROW = template(
    '<tr data-evidence="{levels}">'
    '<td><a href="../runs/{run}.html">{run}</a></td>'
    '<td data-sort="{published_sort}">{published}</td>'
    "<td>{version}</td>"
    '<td data-sort="{attempts}">{attempts}</td>'
    '<td data-sort="{score_sort}">{score}</td>'
    "<td>{issued}</td><td>{where}</td>"
    "<td>{evidence}</td><td>{status}</td></tr>"
)


def _entry_run_rows(runs: Sequence[RunView], scale: MetricScale) -> Markup:
    """An entry page's table of runs (links relative to `boards/<slug>/entries/`)."""
    lines = []
    for v in runs:
        run, p = v.run, v.run.provenance
        where = _OWN_MACHINE
        if p.kind == "actions":
            where = html(
                '<span class="badge actions" title="{title}">GitHub Actions</span>',
                title=f"Issued from GitHub Actions in {p.repository or 'a repository'}",
            )
        lines.append(
            _ENTRY_RUN_ROW(
                levels=data_levels(v.levels),
                run=run.id,
                published_sort=iso(run.published_at),
                published=v.published,
                version=run.agent_version or NONE,
                attempts=run.n_attempts,
                score_sort=v.score.mean,
                score=score(v.score.mean, scale),
                issued="yes" if run.issued else "no",
                where=where,
                evidence=v.evidence,
                status=v.status,
            )
        )
    return join(lines, "\n")


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
