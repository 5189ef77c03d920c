"""What a run proves, as the site shows it: small labels in plain words, each with what its
level proves and doesn't (`registry.evidence.TEXTS`), the legend a board page carries, and
the Evidence section of a run's page.

Written in Python like the run pages (`sitebuild.run_page` says why); what every run of a
board shares (its labels, its task digests) is made once and reused, in `html()` templates
(`sitebuild.html`): every text from a record is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from registry.datarepo.models import PublishedRun
from registry.evidence import LEVELS, TEXTS, Level, RunEvidence
from sitebuild.html import NOTHING, Markup, const, html, join, template

SHORT_DIGEST = 12
"""Hex digits of a task's sha256 a run page shows; the run's JSON has them all. A large
site has 400,000 tasks' rows on its run pages: each is kept to its name and these."""


def tooltip(level: Level) -> str:
    """A level in one line, for a label's `title`: its name, what it proves and doesn't."""
    text = TEXTS[level]
    return f"{text.title}: proves {text.proves}. Does not prove {text.does_not_prove}."


_LABEL = {
    level: html(
        '<span class="badge evidence-{level}" title="{tooltip}">{title}</span>',
        level=level,
        tooltip=tooltip(level),
        title=TEXTS[level].title,
    )
    for level in LEVELS
}


_PLAIN = {
    level: html(
        '<span class="badge evidence-{level}">{title}</span>',
        level=level,
        title=TEXTS[level].title,
    )
    for level in LEVELS
}
"""The labels where the page says what they prove (a run's page, a board's legend and its
table of runs): a `title` on each of 10,000 runs' would add a sixth to a large site."""


@lru_cache(maxsize=64)
def labels(levels: tuple[Level, ...]) -> Markup:
    """The labels of the levels held, in the order pages show them, each with what it
    proves and doesn't in its `title`: a few combinations for every row of a site."""
    held = set(levels)
    return join([_LABEL[level] for level in LEVELS if level in held], " ")


@lru_cache(maxsize=64)
def plain_labels(levels: tuple[Level, ...]) -> Markup:
    """The labels without their `title`, for pages that say what they prove beside them."""
    held = set(levels)
    return join([_PLAIN[level] for level in LEVELS if level in held], " ")


CHOICES = tuple((level, TEXTS[level].title) for level in LEVELS if level != "self-reported")
"""The board's evidence filter: every level but self-reported, which every run holds."""


def data_levels(levels: Iterable[Level]) -> str:
    """The levels as a row's `data-evidence`, which the pages' filter reads."""
    return " ".join(levels)


_HELD = template('<dl class="evidence" id="{id}">\n{items}</dl>\n')
_HELD_ITEM = template("<dt>{label}</dt><dd>Proves {proves}. Does not prove {not_proved}.</dd>\n")


@lru_cache(maxsize=64)
def _held_list(levels: tuple[Level, ...], list_id: str) -> Markup:
    """The levels held, each with what it proves and doesn't, as a definition list."""
    held = set(levels)
    items = join(
        _HELD_ITEM(
            label=_PLAIN[level],
            proves=TEXTS[level].proves,
            not_proved=TEXTS[level].does_not_prove,
        )
        for level in LEVELS
        if level in held
    )
    return _HELD(id=list_id, items=items)


LEGEND = html(
    '<section aria-labelledby="evidence-heading">\n'
    '<h2 id="evidence-heading">What the evidence labels prove</h2>\n'
    "<p>Every run is at least self-reported; the service may also have regraded it, and "
    "issued it before it ran. The levels are independent: each says what it proves and "
    "nothing more. An entry's labels are the ones every one of its public runs holds; each "
    "run's page says what its own job showed.</p>\n"
    "{held}"
    "</section>\n",
    held=_held_list(LEVELS, "evidence-legend"),
)
"""The board page's legend: each level with what it proves and doesn't."""


def tasks_pinned_text(pinned: bool) -> str:
    """Whether the registry pins the digests of a board's task files, in plain words."""
    if pinned:
        return (
            "pinned by the registry: every run on the board ran the task files whose digests "
            "the benchmark's registry record pins"
        )
    return (
        "not pinned by the registry: every run on the board ran the same task files as the "
        "board's first run (the digests in each job's lock.json)"
    )


_SECTION = template(
    '<section aria-labelledby="evidence-heading">\n'
    '<h2 id="evidence-heading">Evidence</h2>\n'
    "{intro}"
    "{held}"
    "{not_held}"
    '<dl class="facts" id="evidence-facts">\n'
    "<dt>Regrade</dt><dd>{regrade}</dd>\n"
    "<dt>Files agree</dt><dd>{consistent}</dd>\n"
    "<dt>Task files</dt><dd>{pinned}</dd>\n"
    "</dl>\n"
    "{digests}"
    "</section>\n\n"
)
_NOT_HELD = template("<p>It does not hold: {missing}.</p>\n")


def run_section(run: PublishedRun, levels: tuple[Level, ...]) -> Markup:
    """A run page's Evidence section: the levels it holds, with what each proves and
    doesn't, what the service found when the job was uploaded, and its task digests."""
    missing = [TEXTS[level].title for level in LEVELS if level not in levels]
    not_held = NOTHING
    if missing:
        not_held = _NOT_HELD(missing=", ".join(missing))
    return _SECTION(
        intro=_intro(run),
        held=_held_list(levels, "run-evidence"),
        not_held=not_held,
        regrade=_regrade(run.evidence),
        consistent=_consistent(run.evidence),
        pinned=_pinned(run.evidence),
        digests=digests_html(tuple(run.task_digests.items())),
    )


_INTRO_BEFORE_EVIDENCE = template(
    "<p>The run was published before the service kept each run's evidence, so it "
    "shows only what its record establishes: {held}.</p>\n"
)


def _intro(run: PublishedRun) -> Markup:
    if run.evidence is None:
        return _INTRO_BEFORE_EVIDENCE(
            held="self-reported and issued" if run.issued else "self-reported",
        )
    return const(
        "<p>What the service established about the run's job when it was uploaded, and "
        "what that does and doesn't prove.</p>\n"
    )


_NOT_REGRADABLE = template("not regradable: {note}")
_REGRADE_FAILED = template("failed: {note}")


def _regrade(evidence: RunEvidence | None) -> Markup:
    if evidence is None:
        return const("none recorded: the run was published before the service regraded jobs")
    note = evidence.regrade_note or "no reason was recorded"
    if evidence.regrade == "agreed":
        return const(
            "agreed: the tasks' own verifiers, run again by the service on the outputs the "
            "job recorded, gave every graded trial the reward the job records"
        )
    if evidence.regrade == "failed":
        return _REGRADE_FAILED(note=note)
    return _NOT_REGRADABLE(note=note)


def _consistent(evidence: RunEvidence | None) -> Markup:
    if evidence is None:
        return const("not recorded")
    if evidence.consistent:
        return const(
            "yes: every reward agreed with what its verifier wrote, the totals with the "
            "trials, the times with the run and the trials with the plan"
        )
    return const("no: the service recorded that the job's files disagreed with each other")


def _pinned(evidence: RunEvidence | None) -> Markup:
    if evidence is None:
        return const("not recorded")
    if evidence.tasks_pinned:
        return const("matched the pins: each task's digest is the one the registry pins for it")
    return const(
        "not matched to pins: the registry pins no digests for these tasks, and the run's "
        "board holds every run to the task files of its first run"
    )


_DIGESTS = template(
    "<details><summary>Task digests ({count} task{plural}, from the job's "
    "lock.json)</summary>\n"
    '<table id="digests-table">\n'
    '<thead><tr><th scope="col">Task</th><th scope="col">sha256, its first '
    "{short} hex digits (the run's JSON has them all)</th></tr></thead>\n"
    "<tbody>\n{rows}</tbody>\n</table>\n</details>\n"
)
_DIGEST_ROW = template('<tr><th scope="row">{task}</th><td><code>{digest}</code></td></tr>\n')


@lru_cache(maxsize=1024)
def digests_html(digests: tuple[tuple[str, str], ...]) -> Markup:
    """The run's task digests, short, folded: the runs of a board share their task files,
    so this is made about once per board."""
    if not digests:
        return const(
            "<p>Task digests: not recorded (the run was published before the service kept "
            "them).</p>\n"
        )
    rows = join(
        _DIGEST_ROW(
            task=task,
            digest=_short(digest),
        )
        for task, digest in sorted(digests)
    )
    return _DIGESTS(
        count=len(digests),
        plural="s" if len(digests) != 1 else "",
        short=SHORT_DIGEST,
        rows=rows,
    )


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:SHORT_DIGEST]
