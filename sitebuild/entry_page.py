"""An entry's page, written out in Python like a run's (`sitebuild.run_page` says why):
a site of 10,000 runs has some 7,000 entries, each in `html()` templates (`sitebuild.html`):
every value escaped unless it is HTML the site made."""

from __future__ import annotations

from registry.datarepo.models import BoardRow, RunEntry
from registry.schema import MetricScale
from sitebuild import page as paths
from sitebuild.evidence import labels
from sitebuild.format import CRUMB, interval, options, score
from sitebuild.html import NOTHING, Markup, const, join, template
from sitebuild.page import Page
from sitebuild.views import EntryContext

TEMPLATE = "entry"
"""The `Page.template` of entry pages: not a Jinja template, this module."""

_RUNS_HEAD = Markup(
    '<table class="sortable" id="entry-runs">\n<thead><tr><th scope="col">Run</th>'
    '<th scope="col">Published</th><th scope="col">Agent version</th>'
    '<th scope="col" data-type="number">Attempts</th><th scope="col" data-type="number">Score'
    '</th><th scope="col">Issued</th><th scope="col">Where it ran</th><th scope="col">Evidence'
    '</th><th scope="col">Status</th></tr></thead>\n'
)


_MAIN = template(
    '<p class="crumbs"><a href="{home}">Boards</a>{crumb}'
    '<a href="{board_href}">{board_title}</a></p>\n'
    "<h1>Entry {name}</h1>\n"
    '<dl class="facts">\n'
    '<dt>Owner</dt><dd><a href="https://github.com/{owner}">{owner}</a></dd>\n'
    "<dt>Agent</dt><dd>{agent}</dd>\n"
    "<dt>Options</dt><dd><code>{options}</code></dd>\n"
    "{prompts}"
    "{row}"
    "</dl>\n\n"
    '<section aria-labelledby="over-time-heading">\n'
    '<h2 id="over-time-heading">Runs over time</h2>\n'
    "{figure}{runs_head}<tbody>\n{run_rows}\n</tbody>\n</table>\n"
    "</section>\n"
)
_FIGURE = template(
    '<figure class="chart-figure">\n{chart}\n<figcaption>The score of each public run, '
    "by the day it was published.</figcaption>\n</figure>\n"
)


def render_main(each: Page) -> Markup:
    """The page's `<main>`: the entry's settings and score, and its runs over time."""
    context = each.context
    if not isinstance(context, EntryContext):
        raise TypeError(f"an entry page's context is an EntryContext, not {type(context).__name__}")
    board, entry, root = context.board, context.entry, each.root
    figure = NOTHING
    if context.chart:
        figure = _FIGURE(
            chart=context.chart,
        )
    return _MAIN(
        home=f"{root}{paths.home()}",
        crumb=CRUMB,
        board_href=f"{root}{paths.board(board.slug)}",
        board_title=board.title,
        name=context.name,
        owner=entry.owner,
        agent=entry.settings.agent,
        options=options(entry.settings.options),
        prompts=_prompts(entry),
        row=_row(context.row, board.header.metric, board.header.metric_scale),
        figure=figure,
        runs_head=_RUNS_HEAD,
        run_rows=context.run_rows,
    )


_PROMPT_TEMPLATE = template("<dt>Prompt template</dt><dd><code>{digest}</code></dd>\n")
_EXTRA_INSTRUCTIONS = template("<dt>Extra instructions</dt><dd><code>{digest}</code></dd>\n")


def _prompts(entry: RunEntry) -> Markup:
    settings = entry.settings
    lines = []
    if settings.prompt_template_digest:
        lines.append(
            _PROMPT_TEMPLATE(
                digest=settings.prompt_template_digest,
            )
        )
    lines.extend(_EXTRA_INSTRUCTIONS(digest=d) for d in settings.extra_instruction_digests)
    return join(lines)


_ROW_FACTS = template(
    "<dt>Score</dt><dd><strong>{score}</strong> {metric}{band}, "
    "over {trials} trials of {tasks} tasks</dd>\n"
    "<dt>Rank group</dt><dd>{rank}</dd>\n"
    "<dt>Evidence</dt><dd>{labels}: what every public run of the "
    "entry holds (a label's title says what it proves); each run's page says what its "
    "own job showed</dd>\n"
    "{pass_at}"
    "<dt>Runs</dt><dd>{public} public; {issued}</dd>\n"
    "<dt>Settings digest</dt><dd><code>{digest}</code> "
    "(the same for every owner with these settings)</dd>\n"
)
_PASS_AT = template("<dt>pass@{k}</dt><dd>{score}</dd>\n")


def _row(row: BoardRow | None, metric: str, scale: MetricScale) -> Markup:
    if row is None:
        return const("<dt>Score</dt><dd>No public run: the entry is not on the board.</dd>\n")
    band = ""
    if row.ci_low is not None:
        band = f", 95% interval {interval(row.ci_low, row.ci_high, scale)}"
    pass_at = join(_PASS_AT(k=k, score=score(value, scale)) for k, value in row.pass_at_k.items())
    issued = "none issued"
    if row.runs_issued:
        issued = f"{row.runs_issued_public} of {row.runs_issued} issued runs public"
    return _ROW_FACTS(
        score=score(row.score, scale),
        metric=metric,
        band=band,
        trials=row.n_trials,
        tasks=row.n_tasks,
        rank=row.rank_group,
        labels=labels(tuple(row.evidence)),
        pass_at=pass_at,
        public=row.runs_public,
        issued=issued,
        digest=row.settings_digest,
    )
