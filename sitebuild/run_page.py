"""A run's page, written out in Python rather than through a Jinja template.

A site has far more runs than any other page (10,000 of its 17,500 pages), and a Jinja
page spends most of its time in the template machinery: a context per page, a call per
macro, an escape per expression. Here the page is a few f-strings over one run, inside the
frame `base.html` renders once per depth (`render.frame`). Every text from a record is
escaped; the rest is the site's own markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from markupsafe import escape

from registry.datarepo.models import BoardRow, Provenance, PublishedRun
from registry.schema import MetricScale
from sitebuild import page as paths
from sitebuild.boards import RunView, time_html
from sitebuild.evidence import run_section
from sitebuild.format import (
    CRUMB,
    NONE,
    count,
    duration,
    interval,
    options,
    runner,
    score,
    usd,
)
from sitebuild.page import Page
from sitebuild.source import BoardSource

TEMPLATE = "run"
"""The `Page.template` of run pages: not a Jinja template, this module."""

_FILTER = """<div class="filter" data-filter-for="tasks-table" hidden>
<label for="tasks-table-filter">Filter tasks</label>
<input id="tasks-table-filter" type="search" autocomplete="off">
</div>
"""


def render_main(each: Page) -> str:
    """The page's `<main>`: its facts, its evidence, where it ran, and the per-task rewards."""
    board: BoardSource = each.context["board"]  # type: ignore[assignment]
    view: RunView = each.context["view"]  # type: ignore[assignment]
    row: BoardRow | None = each.context["row"]  # type: ignore[assignment]
    service_url: str | None = each.context["service_url"]  # type: ignore[assignment]
    run, root = view.run, each.root
    entry = escape(run.entry.name)
    entry_href = f"{root}{paths.entry(board.slug, run.entry.name)}"
    return (
        f'<p class="crumbs"><a href="{root}{paths.home()}">Boards</a>{CRUMB}'
        f'<a href="{root}{paths.board(board.slug)}">{escape(board.title)}</a>{CRUMB}'
        f'<a href="{entry_href}">{entry}</a></p>\n'
        f"<h1>Run {escape(run.id)}</h1>\n"
        f"{_notice(run, root)}"
        f'<dl class="facts">\n'
        f"<dt>Score</dt><dd>{_score(view, board.header.metric, board.header.metric_scale)}</dd>\n"
        f'<dt>Entry</dt><dd><a href="{entry_href}">{entry}</a> by '
        f'<a href="https://github.com/{escape(run.entry.owner)}">{escape(run.entry.owner)}</a>'
        f"{'' if row is None else f', rank group {row.rank_group}'}</dd>\n"
        f"<dt>Agent</dt><dd>{escape(run.entry.settings.agent)} {escape(run.agent_version or '')}"
        f' <span class="note">{escape(options(run.entry.settings.options))}</span></dd>\n'
        f"<dt>Model</dt><dd>{f'<code>{escape(run.model)}</code>' if run.model else 'none'}</dd>\n"
        f"<dt>Attempts per task</dt><dd>{run.n_attempts}</dd>\n"
        f"<dt>Issued</dt><dd>{_issued(run)}</dd>\n"
        f'<dt>Evidence</dt><dd>{view.evidence} (<a href="#evidence-heading">what it proves</a>)'
        "</dd>\n"
        f"<dt>Published</dt><dd>{view.published}</dd>\n"
        f"<dt>Status</dt><dd>{view.status}</dd>\n"
        f"<dt>Job id</dt><dd><code>{escape(run.job_id)}</code></dd>\n"
        f"<dt>Versions</dt><dd>Harbor {escape(run.harbor_version or 'unknown')}, "
        f"hbench {escape(run.hbench_version or 'unknown')}</dd>\n"
        f"<dt>Tokens</dt><dd>{_tokens(run)}</dd>\n"
        f"<dt>Cost</dt><dd>{_cost(run)}</dd>\n"
        f"<dt>Ran</dt><dd>{_ran(view)}</dd>\n"
        f"<dt>Manifest digest</dt><dd>{_manifest(run)}</dd>\n"
        f"<dt>Redactions</dt><dd>{_redacted(run)}</dd>\n"
        f"<dt>Download</dt><dd>{_download(run, service_url)}</dd>\n"
        f"</dl>\n\n"
        f"{run_section(run, view.levels)}"
        f'<section aria-labelledby="provenance-heading">\n'
        f'<h2 id="provenance-heading">Where it ran</h2>\n'
        f"{provenance_html(run.provenance)}"
        f"</section>\n\n"
        f'<section aria-labelledby="config-heading">\n'
        f'<h2 id="config-heading">Settings that ran</h2>\n'
        f"{_config(run)}"
        f"</section>\n\n"
        f"{_redactions(run)}"
        f'<section aria-labelledby="tasks-heading">\n'
        f'<h2 id="tasks-heading">Per-task rewards</h2>\n'
        f"<p>{len(run.results)} tasks, {view.attempts} attempt{'s' if view.attempts > 1 else ''}"
        f" each at most. An errored trial has no reward and counts 0. A task's time is its"
        f" trials' time together.</p>\n"
        f"{_FILTER}\n"
        f'<table class="sortable" id="tasks-table">\n'
        f"<thead><tr>{_attempt_headers(view.attempts)}</tr></thead>\n"
        f"<tbody>\n{view.task_rows}\n</tbody>\n"
        f"</table>\n"
        f"</section>\n"
    )


def provenance_html(p: Provenance) -> str:
    """Where the run ran: every verified claim of an Actions run, linked to GitHub."""
    if p.kind != "actions":
        return "<p>On its owner's machine.</p>\n"
    repo = escape(p.repository) if p.repository else None
    github = f"https://github.com/{repo}"
    commit = f"<code>{escape(p.commit or NONE)}</code>"
    if repo and p.commit:
        commit = f'<a href="{github}/commit/{escape(p.commit)}">{commit}</a>'
    run = str(p.run_id or NONE)
    if repo and p.run_id:
        run = f'<a href="{github}/actions/runs/{p.run_id}">{p.run_id}</a>'
    job = ""
    if p.job_workflow_ref:
        job = (
            f"<dt>Job's workflow</dt><dd><code>{escape(p.job_workflow_ref)}</code>"
            " (<code>job_workflow_ref</code>)</dd>\n"
        )
    kind = f"{escape(runner(p.runner))}" + (
        f" (<code>{escape(p.runner)}</code>)" if p.runner else ""
    )
    where = f'<a href="{github}">{repo}</a>' if repo else NONE
    return (
        '<p><span class="badge actions" title="Issued from GitHub Actions">GitHub Actions</span>'
        " On GitHub Actions, as the workflow's verified OIDC token says:</p>\n"
        '<dl class="facts">\n'
        f"<dt>Repository</dt><dd>{where}</dd>\n"
        f"<dt>Workflow</dt><dd><code>{escape(p.workflow or NONE)}</code></dd>\n"
        f"{job}"
        f"<dt>Ref</dt><dd><code>{escape(p.ref or NONE)}</code></dd>\n"
        f"<dt>Commit</dt><dd>{commit}</dd>\n"
        f"<dt>Actions run</dt><dd>{run}</dd>\n"
        f"<dt>Runner</dt><dd>{kind}</dd>\n"
        "</dl>\n"
    )


def _notice(run: PublishedRun, root: str) -> str:
    return _status_notice(run, root) + _files_deleted(run)


def _status_notice(run: PublishedRun, root: str) -> str:
    on = f" on {time_html(run.status_changed_at)}" if run.status_changed_at else ""
    if run.status == "withdrawn":
        return (
            f'<p class="notice">Withdrawn by its owner{on}. '
            "Its score is off the board for good.</p>\n"
        )
    if run.status == "taken_down":
        reason = escape(run.take_down_reason or "")
        return (
            f'<p class="notice">Taken down by the maintainers{on}, for the reason '
            f'<code>{reason}</code> (the <a href="{root}{paths.audit()}">audit log</a> has the '
            "note). Its score is off the board.</p>\n"
        )
    return ""


def _files_deleted(run: PublishedRun) -> str:
    if run.files_deleted_at is None:
        return ""
    public = run.status == "public"
    kept = "Its score stays on the board as published; this" if public else "This"
    return (
        f'<p class="notice" id="files-deleted">Its owner deleted the job, and its files with '
        f"it, on {time_html(run.files_deleted_at)}: they can no longer be downloaded. {kept} "
        "page keeps what the run recorded.</p>\n"
    )


def _score(view: RunView, metric: str, scale: MetricScale) -> str:
    s = view.score
    band = ""
    if s.low is not None:
        band = f", 95% interval {interval(s.low, s.high, scale)}"
    return (
        f"<strong>{score(s.mean, scale)}</strong> {escape(metric)}{band}, "
        f"over {s.n_trials} trials of {s.n_tasks} tasks"
    )


def _issued(run: PublishedRun) -> str:
    if run.issued:
        return "yes: the board issued this run before it ran, and counted it"
    return "no: the service did not issue its spec before it ran"


def _tokens(run: PublishedRun) -> str:
    usage = run.usage
    cached = f" ({count(usage.cached_tokens)} cached)" if usage.cached_tokens else ""
    return f"{count(usage.input_tokens)} input{cached}, {count(usage.output_tokens)} output"


def _cost(run: PublishedRun) -> str:
    if run.usage.cost_usd is None:
        return "not reported by the job"
    return f"{usd(run.usage.cost_usd)}, as the job reported it"


def _attempt_headers(attempts: int) -> str:
    cells = "".join(
        f'<th scope="col" data-type="number">Attempt {i + 1}</th>' for i in range(attempts)
    )
    return (
        f'<th scope="col">Task</th>{cells}<th scope="col" data-type="number">Mean</th>'
        '<th scope="col" data-type="number">Time</th>'
    )


def _ran(view: RunView) -> str:
    if view.started is None or view.finished is None:
        return "no trial's times were recorded"
    took = duration((view.finished - view.started).total_seconds())
    return f"from {time_html(view.started)} to {time_html(view.finished)}, {took}"


def _manifest(run: PublishedRun) -> str:
    if run.manifest_digest is None:
        return "not recorded"
    return (
        f"<code>{escape(run.manifest_digest)}</code>, the digest of the sealed manifest: "
        "it names every file of the job and its sha256"
    )


def _redacted(run: PublishedRun) -> str:
    if not run.redactions:
        return "none: no value in the job's files looked like a secret"
    values, files = sum(run.redactions.values()), len(run.redactions)
    return (
        f"{values} value{'s' if values != 1 else ''} replaced with <code>[REDACTED]</code> in "
        f'{files} file{"s" if files != 1 else ""} (<a href="#redactions-heading">which</a>)'
    )


def _redactions(run: PublishedRun) -> str:
    """What the service redacted before storing the job: how many values each rule found,
    when the upload counted them, and how many each file held."""
    if not run.redactions:
        return ""
    return (
        '<section aria-labelledby="redactions-heading">\n'
        '<h2 id="redactions-heading">Redactions</h2>\n'
        "<p>Values that looked like secrets were replaced before the job was stored; the "
        "download holds the redacted files.</p>\n"
        f"{_redaction_rules(run)}"
        '<table class="sortable" id="redactions-table">\n'
        '<thead><tr><th scope="col">File</th>'
        '<th scope="col" data-type="number">Values replaced</th></tr></thead>\n'
        f"<tbody>\n{_count_rows(run.redactions)}</tbody>\n</table>\n</section>\n\n"
    )


def _redaction_rules(run: PublishedRun) -> str:
    if not run.redaction_rules:
        return ""
    return (
        '<table class="sortable" id="redaction-rules-table">\n'
        "<caption>By the rule that found them</caption>\n"
        '<thead><tr><th scope="col">Rule</th>'
        '<th scope="col" data-type="number">Values replaced</th></tr></thead>\n'
        f"<tbody>\n{_count_rows(run.redaction_rules)}</tbody>\n</table>\n"
    )


def _count_rows(counts: Mapping[str, int]) -> str:
    return "".join(
        f'<tr><td><code>{escape(name)}</code></td><td data-sort="{n}">{n}</td></tr>\n'
        for name, n in sorted(counts.items())
    )


def _download(run: PublishedRun, service_url: str | None) -> str:
    if run.files_deleted_at is not None:
        return f"none: its owner deleted the files on {time_html(run.files_deleted_at)}"
    if run.download is None:
        return "not offered for this run"
    if run.status != "public":
        return "no longer offered: the run is off the board"
    if service_url is None:
        return f"<code>{escape(run.download)}</code> on the service that published it"
    href = escape(service_url.rstrip("/") + run.download)
    return f'<a href="{href}">the redacted job</a> (a <code>.tar.gz</code> of its folder)'


def _config(run: PublishedRun) -> str:
    """The job's comparability settings that differ from Harbor's defaults."""
    if not run.config:
        return (
            "<p>Harbor's defaults for every setting its board compares: timeouts, the "
            "agent's, the verifier's and the environment's.</p>\n"
        )
    text = json.dumps(run.config, indent=2, sort_keys=True, ensure_ascii=False)
    return (
        "<p>The settings its board compares (timeouts, the agent's, the verifier's and the "
        "environment's) where the job's config differs from Harbor's defaults:</p>\n"
        f'<pre class="config"><code>{escape(text)}</code></pre>\n'
    )
