"""The sections of a run's page below its facts: where it ran, what the service redacted,
and the settings that ran (`sitebuild.run_page` writes the page; its evidence and its
signature are `sitebuild.evidence` and `sitebuild.run_signature`)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from registry.datarepo.models import Provenance, PublishedRun
from sitebuild.format import NONE, runner
from sitebuild.html import NOTHING, Markup, const, join, template

_COMMIT = template("<code>{commit}</code>")
_RUNNER_KIND = template("{kind}")
_ACTIONS_FACTS = template(
    '<p><span class="badge actions" title="Issued from GitHub Actions">GitHub Actions</span>'
    " On GitHub Actions, as the workflow's verified OIDC token says:</p>\n"
    '<dl class="facts">\n'
    "<dt>Repository</dt><dd>{where}</dd>\n"
    "<dt>Workflow</dt><dd><code>{workflow}</code></dd>\n"
    "{job}"
    "<dt>Ref</dt><dd><code>{ref}</code></dd>\n"
    "<dt>Commit</dt><dd>{commit}</dd>\n"
    "<dt>Actions run</dt><dd>{run}</dd>\n"
    "<dt>Runner</dt><dd>{kind}</dd>\n"
    "</dl>\n"
)
_COMMIT_LINK = template('<a href="{github}/commit/{sha}">{commit}</a>')
_ACTIONS_RUN_LINK = template('<a href="{github}/actions/runs/{id}">{id}</a>')
_JOB_WORKFLOW = template(
    "<dt>Job's workflow</dt><dd><code>{ref}</code> (<code>job_workflow_ref</code>)</dd>\n"
)
_RUNNER_NAMED = template("{kind} (<code>{runner}</code>)")
_REPOSITORY_LINK = template('<a href="{github}">{repo}</a>')


def provenance_html(p: Provenance) -> Markup:
    """Where the run ran: every verified claim of an Actions run, linked to GitHub."""
    if p.kind != "actions":
        return const("<p>On its owner's machine.</p>\n")
    github = f"https://github.com/{p.repository}"
    commit = _COMMIT(commit=p.commit or NONE)
    if p.repository and p.commit:
        commit = _COMMIT_LINK(github=github, sha=p.commit, commit=commit)
    run: object = p.run_id or NONE
    if p.repository and p.run_id:
        run = _ACTIONS_RUN_LINK(github=github, id=p.run_id)
    job = NOTHING
    if p.job_workflow_ref:
        job = _JOB_WORKFLOW(
            ref=p.job_workflow_ref,
        )
    kind = _RUNNER_KIND(kind=runner(p.runner))
    if p.runner:
        kind = _RUNNER_NAMED(kind=kind, runner=p.runner)
    where: object = NONE
    if p.repository:
        where = _REPOSITORY_LINK(github=github, repo=p.repository)
    return _ACTIONS_FACTS(
        where=where,
        workflow=p.workflow or NONE,
        job=job,
        ref=p.ref or NONE,
        commit=commit,
        run=run,
        kind=kind,
    )


_REDACTIONS = template(
    '<section aria-labelledby="redactions-heading">\n'
    '<h2 id="redactions-heading">Redactions</h2>\n'
    "<p>Values that looked like secrets were replaced before the job was stored; the "
    "download holds the redacted files.</p>\n"
    "{rules}"
    '<table class="sortable" id="redactions-table">\n'
    '<thead><tr><th scope="col">File</th>'
    '<th scope="col" data-type="number">Values replaced</th></tr></thead>\n'
    "<tbody>\n{rows}</tbody>\n</table>\n</section>\n\n"
)


def redactions(run: PublishedRun) -> Markup:
    """What the service redacted before storing the job: how many values each rule found,
    when the upload counted them, and how many each file held."""
    if not run.redactions:
        return NOTHING
    return _REDACTIONS(
        rules=_redaction_rules(run),
        rows=_count_rows(run.redactions),
    )


_REDACTION_RULES = template(
    '<table class="sortable" id="redaction-rules-table">\n'
    "<caption>By the rule that found them</caption>\n"
    '<thead><tr><th scope="col">Rule</th>'
    '<th scope="col" data-type="number">Values replaced</th></tr></thead>\n'
    "<tbody>\n{rows}</tbody>\n</table>\n"
)


def _redaction_rules(run: PublishedRun) -> Markup:
    if not run.redaction_rules:
        return NOTHING
    return _REDACTION_RULES(
        rows=_count_rows(run.redaction_rules),
    )


_COUNT_ROWS = template('<tr><td><code>{name}</code></td><td data-sort="{n}">{n}</td></tr>\n')


def _count_rows(counts: Mapping[str, int]) -> Markup:
    return join(_COUNT_ROWS(name=name, n=n) for name, n in sorted(counts.items()))


_CONFIG_SHOWN = template(
    "<p>The settings its board compares (timeouts, the agent's, the verifier's and the "
    "environment's) where the job's config differs from Harbor's defaults:</p>\n"
    '<pre class="config"><code>{text}</code></pre>\n'
)


def config(run: PublishedRun) -> Markup:
    """The job's comparability settings that differ from Harbor's defaults."""
    if not run.config:
        return const(
            "<p>Harbor's defaults for every setting its board compares: timeouts, the "
            "agent's, the verifier's and the environment's.</p>\n"
        )
    text = json.dumps(run.config, indent=2, sort_keys=True, ensure_ascii=False)
    return _CONFIG_SHOWN(
        text=text,
    )
