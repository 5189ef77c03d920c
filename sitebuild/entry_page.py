"""An entry's page, written out in Python like a run's (`sitebuild.run_page` says why):
a site of 10,000 runs has some 7,000 entries. Every text from a record is escaped."""

from __future__ import annotations

from markupsafe import escape

from registry.datarepo.models import BoardRow, RunEntry
from registry.schema import MetricScale
from sitebuild import page as paths
from sitebuild.evidence import labels
from sitebuild.format import CRUMB, interval, options, score
from sitebuild.page import Page
from sitebuild.source import BoardSource

TEMPLATE = "entry"
"""The `Page.template` of entry pages: not a Jinja template, this module."""

_RUNS_HEAD = (
    '<table class="sortable" id="entry-runs">\n<thead><tr><th scope="col">Run</th>'
    '<th scope="col">Published</th><th scope="col">Agent version</th>'
    '<th scope="col" data-type="number">Attempts</th><th scope="col" data-type="number">Score'
    '</th><th scope="col">Issued</th><th scope="col">Where it ran</th><th scope="col">Evidence'
    '</th><th scope="col">Status</th></tr></thead>\n'
)


def render_main(each: Page) -> str:
    """The page's `<main>`: the entry's settings and score, and its runs over time."""
    board: BoardSource = each.context["board"]  # type: ignore[assignment]
    entry: RunEntry = each.context["entry"]  # type: ignore[assignment]
    row: BoardRow | None = each.context["row"]  # type: ignore[assignment]
    chart: str | None = each.context["chart"]  # type: ignore[assignment]
    root, owner = each.root, escape(entry.owner)
    figure = ""
    if chart:
        figure = (
            f'<figure class="chart-figure">\n{chart}\n<figcaption>The score of each public run, '
            "by the day it was published.</figcaption>\n</figure>\n"
        )
    return (
        f'<p class="crumbs"><a href="{root}{paths.home()}">Boards</a>{CRUMB}'
        f'<a href="{root}{paths.board(board.slug)}">{escape(board.title)}</a></p>\n'
        f"<h1>Entry {escape(each.context['name'])}</h1>\n"
        '<dl class="facts">\n'
        f'<dt>Owner</dt><dd><a href="https://github.com/{owner}">{owner}</a></dd>\n'
        f"<dt>Agent</dt><dd>{escape(entry.settings.agent)}</dd>\n"
        f"<dt>Options</dt><dd><code>{escape(options(entry.settings.options))}</code></dd>\n"
        f"{_prompts(entry)}"
        f"{_row(row, board.header.metric, board.header.metric_scale)}"
        "</dl>\n\n"
        '<section aria-labelledby="over-time-heading">\n'
        '<h2 id="over-time-heading">Runs over time</h2>\n'
        f"{figure}{_RUNS_HEAD}<tbody>\n{each.context['run_rows']}\n</tbody>\n</table>\n"
        "</section>\n"
    )


def _prompts(entry: RunEntry) -> str:
    settings = entry.settings
    lines = []
    if settings.prompt_template_digest:
        digest = escape(settings.prompt_template_digest)
        lines.append(f"<dt>Prompt template</dt><dd><code>{digest}</code></dd>\n")
    lines.extend(
        f"<dt>Extra instructions</dt><dd><code>{escape(d)}</code></dd>\n"
        for d in settings.extra_instruction_digests
    )
    return "".join(lines)


def _row(row: BoardRow | None, metric: str, scale: MetricScale) -> str:
    if row is None:
        return "<dt>Score</dt><dd>No public run: the entry is not on the board.</dd>\n"
    band = ""
    if row.ci_low is not None:
        band = f", 95% interval {interval(row.ci_low, row.ci_high, scale)}"
    pass_at = "".join(
        f"<dt>pass@{k}</dt><dd>{score(value, scale)}</dd>\n" for k, value in row.pass_at_k.items()
    )
    issued = "none issued"
    if row.runs_issued:
        issued = f"{row.runs_issued_public} of {row.runs_issued} issued runs public"
    return (
        f"<dt>Score</dt><dd><strong>{score(row.score, scale)}</strong> {escape(metric)}{band}, "
        f"over {row.n_trials} trials of {row.n_tasks} tasks</dd>\n"
        f"<dt>Rank group</dt><dd>{row.rank_group}</dd>\n"
        f"<dt>Evidence</dt><dd>{labels(tuple(row.evidence))}: what every public run of the "
        "entry holds (a label's title says what it proves); each run's page says what its "
        "own job showed</dd>\n"
        f"{pass_at}"
        f"<dt>Runs</dt><dd>{row.runs_public} public; {issued}</dd>\n"
        f"<dt>Settings digest</dt><dd><code>{escape(row.settings_digest)}</code> "
        "(the same for every owner with these settings)</dd>\n"
    )
