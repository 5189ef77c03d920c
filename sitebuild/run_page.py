"""A run's page, written out in Python rather than through a Jinja template.

A site has far more runs than any other page (10,000 of its 17,500 pages), and a Jinja
page spends most of its time in the template machinery: a context per page, a call per
macro, an escape per expression. Here the page is a few `html()` templates over one run
(`sitebuild.html`: every value escaped unless it is HTML the site made), inside the frame
`base.html` renders once per depth (`render.frame`).

Its notices are `sitebuild.run_notices`, and the sections below its facts (where it ran,
its redactions, its settings) `sitebuild.run_sections`.
"""

from __future__ import annotations

from functools import lru_cache

from registry.datarepo.models import PublishedRun
from registry.schema import MetricScale
from sitebuild import page as paths
from sitebuild.evidence import run_section
from sitebuild.format import (
    CRUMB,
    count,
    duration,
    interval,
    options,
    score,
    usd,
)
from sitebuild.html import Markup, const, join, template
from sitebuild.page import Page
from sitebuild.run_notices import notice
from sitebuild.run_sections import config, provenance_html, redactions
from sitebuild.run_signature import signature_section
from sitebuild.views import RunContext, RunView, time_html

TEMPLATE = "run"
"""The `Page.template` of run pages: not a Jinja template, this module."""

_FILTER = Markup("""<div class="filter" data-filter-for="tasks-table" hidden>
<label for="tasks-table-filter">Filter tasks</label>
<input id="tasks-table-filter" type="search" autocomplete="off">
</div>
""")


_MAIN = template(
    '<p class="crumbs"><a href="{home}">Boards</a>{crumb}'
    '<a href="{board_href}">{board_title}</a>{crumb}'
    '<a href="{entry_href}">{entry}</a></p>\n'
    "<h1>Run {run_id}</h1>\n"
    "{notice}"
    '<dl class="facts">\n'
    "<dt>Score</dt><dd>{score}</dd>\n"
    '<dt>Entry</dt><dd><a href="{entry_href}">{entry}</a> by '
    '<a href="https://github.com/{owner}">{owner}</a>{rank}</dd>\n'
    "<dt>Agent</dt><dd>{agent}</dd>\n"
    "<dt>Model</dt><dd>{model}</dd>\n"
    "<dt>Attempts per task</dt><dd>{attempts}</dd>\n"
    "<dt>Issued</dt><dd>{issued}</dd>\n"
    '<dt>Evidence</dt><dd>{evidence} (<a href="#evidence-heading">what it proves</a>)'
    "</dd>\n"
    "<dt>Published</dt><dd>{published}</dd>\n"
    "<dt>Status</dt><dd>{status}</dd>\n"
    "<dt>Job id</dt><dd><code>{job_id}</code></dd>\n"
    "<dt>Versions</dt><dd>Harbor {harbor}, hbench {hbench}</dd>\n"
    "<dt>Tokens</dt><dd>{tokens}</dd>\n"
    "<dt>Cost</dt><dd>{cost}</dd>\n"
    "<dt>Ran</dt><dd>{ran}</dd>\n"
    "<dt>Manifest digest</dt><dd>{manifest}</dd>\n"
    "<dt>Redactions</dt><dd>{redacted}</dd>\n"
    "<dt>Download</dt><dd>{download}</dd>\n"
    "</dl>\n\n"
    "{evidence_section}"
    '<section aria-labelledby="provenance-heading">\n'
    '<h2 id="provenance-heading">Where it ran</h2>\n'
    "{provenance}"
    "</section>\n\n"
    "{signature}"
    '<section aria-labelledby="config-heading">\n'
    '<h2 id="config-heading">Settings that ran</h2>\n'
    "{config}"
    "</section>\n\n"
    "{redactions}"
    '<section aria-labelledby="tasks-heading">\n'
    '<h2 id="tasks-heading">Per-task rewards</h2>\n'
    "<p>{tasks} tasks, {attempts_most} attempt{plural} each at most. An errored trial "
    "has no reward and counts 0. A task's time is its trials' time together.</p>\n"
    "{filter}\n"
    '<table class="sortable" id="tasks-table">\n'
    "<thead><tr>{headers}</tr></thead>\n"
    "<tbody>\n{task_rows}\n</tbody>\n"
    "</table>\n"
    "</section>\n"
)
"""A run page's `<main>`; `render_main` fills it."""


_AGENT = template('{agent} {version} <span class="note">{options}</span>')
_MODEL = template("<code>{model}</code>")


def render_main(each: Page) -> Markup:
    """The page's `<main>`: its facts, its evidence, where it ran, and the per-task rewards."""
    context = each.context
    if not isinstance(context, RunContext):
        raise TypeError(f"a run page's context is a RunContext, not {type(context).__name__}")
    board, view, row, root = context.board, context.view, context.row, each.root
    run = view.run
    entry_href = f"{root}{paths.entry(board.slug, run.entry.name)}"
    agent = _AGENT(
        agent=run.entry.settings.agent,
        version=run.agent_version or "",
        options=options(run.entry.settings.options),
    )
    model = _MODEL(model=run.model) if run.model else const("none")
    return _MAIN(
        home=f"{root}{paths.home()}",
        crumb=CRUMB,
        board_href=f"{root}{paths.board(board.slug)}",
        board_title=board.title,
        entry_href=entry_href,
        entry=run.entry.name,
        run_id=run.id,
        notice=notice(run, root),
        score=_score(view, board.header.metric, board.header.metric_scale),
        owner=run.entry.owner,
        rank="" if row is None else f", rank group {row.rank_group}",
        agent=agent,
        model=model,
        attempts=run.n_attempts,
        issued=_issued(run),
        evidence=view.evidence,
        published=view.published,
        status=view.status,
        job_id=run.job_id,
        harbor=run.harbor_version or "unknown",
        hbench=run.hbench_version or "unknown",
        tokens=_tokens(run),
        cost=_cost(run),
        ran=_ran(view),
        manifest=_manifest(run),
        redacted=_redacted(run),
        download=_download(run, context.service_url),
        evidence_section=run_section(run, view.levels),
        provenance=provenance_html(run.provenance),
        signature=signature_section(run, context.bundle),
        config=config(run),
        redactions=redactions(run),
        tasks=len(run.results),
        attempts_most=view.attempts,
        plural="s" if view.attempts > 1 else "",
        filter=_FILTER,
        headers=_attempt_headers(view.attempts),
        task_rows=view.task_rows,
    )


_SCORE_LINE = template(
    "<strong>{mean}</strong> {metric}{band}, over {trials} trials of {tasks} tasks"
)


def _score(view: RunView, metric: str, scale: MetricScale) -> Markup:
    s = view.score
    band = ""
    if s.low is not None:
        band = f", 95% interval {interval(s.low, s.high, scale)}"
    return _SCORE_LINE(
        mean=score(s.mean, scale),
        metric=metric,
        band=band,
        trials=s.n_trials,
        tasks=s.n_tasks,
    )


def _issued(run: PublishedRun) -> Markup:
    if run.issued:
        return const("yes: the board issued this run before it ran, and counted it")
    return const("no: the service did not issue its spec before it ran")


_TOKENS_LINE = template("{input} input{cached}, {output} output")


def _tokens(run: PublishedRun) -> Markup:
    usage = run.usage
    cached = f" ({count(usage.cached_tokens)} cached)" if usage.cached_tokens else ""
    return _TOKENS_LINE(
        input=count(usage.input_tokens),
        cached=cached,
        output=count(usage.output_tokens),
    )


_COST_LINE = template("{cost}, as the job reported it")


def _cost(run: PublishedRun) -> Markup:
    if run.usage.cost_usd is None:
        return const("not reported by the job")
    return _COST_LINE(cost=usd(run.usage.cost_usd))


_ATTEMPT_HEADERS = template(
    '<th scope="col">Task</th>{cells}<th scope="col" data-type="number">Mean</th>'
    '<th scope="col" data-type="number">Time</th>'
)
_ATTEMPT_HEADER = template('<th scope="col" data-type="number">Attempt {n}</th>')


@lru_cache(maxsize=16)
def _attempt_headers(attempts: int) -> Markup:
    cells = join(_ATTEMPT_HEADER(n=i + 1) for i in range(attempts))
    return _ATTEMPT_HEADERS(
        cells=cells,
    )


_RAN_LINE = template("from {started} to {finished}, {took}")


def _ran(view: RunView) -> Markup:
    if view.started is None or view.finished is None:
        return const("no trial's times were recorded")
    took = duration((view.finished - view.started).total_seconds())
    return _RAN_LINE(
        started=time_html(view.started),
        finished=time_html(view.finished),
        took=took,
    )


_MANIFEST_LINE = template(
    "<code>{digest}</code>, the digest of the sealed manifest: "
    "it names every file of the job and its sha256"
)


def _manifest(run: PublishedRun) -> Markup:
    if run.manifest_digest is None:
        return const("not recorded")
    return _MANIFEST_LINE(
        digest=run.manifest_digest,
    )


_REDACTED_COUNT = template(
    "{values} value{values_s} replaced with <code>[REDACTED]</code> in "
    '{files} file{files_s} (<a href="#redactions-heading">which</a>)'
)


def _redacted(run: PublishedRun) -> Markup:
    if not run.redactions:
        return const("none: no value in the job's files looked like a secret")
    values, files = sum(run.redactions.values()), len(run.redactions)
    return _REDACTED_COUNT(
        values=values,
        values_s="s" if values != 1 else "",
        files=files,
        files_s="s" if files != 1 else "",
    )


_DOWNLOAD_LINK = template(
    '<a href="{href}">the redacted job</a> (a <code>.tar.gz</code> of its folder)'
)
_FILES_GONE = template("none: its owner deleted the files on {at}")
_DOWNLOAD_PATH = template("<code>{path}</code> on the service that published it")


def _download(run: PublishedRun, service_url: str | None) -> Markup:
    if run.files_deleted_at is not None:
        return _FILES_GONE(at=time_html(run.files_deleted_at))
    if run.download is None:
        return const("not offered for this run")
    if run.status != "public":
        return const("no longer offered: the run is off the board")
    if service_url is None:
        return _DOWNLOAD_PATH(path=run.download)
    return _DOWNLOAD_LINK(
        href=service_url.rstrip("/") + run.download,
    )
