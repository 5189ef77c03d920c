"""What a run proves, as the site shows it: small labels in plain words, each with what its
level proves and doesn't (`registry.evidence.TEXTS`), the legend a board page carries, and
the Evidence section of a run's page.

Written in Python like the run pages (`sitebuild.run_page` says why); what every run of a
board shares (its labels, its task digests) is made once and reused. Every text from a
record is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from markupsafe import Markup, escape

from registry.datarepo.models import PublishedRun
from registry.evidence import LEVELS, TEXTS, Level, RunEvidence

SHORT_DIGEST = 12
"""Hex digits of a task's sha256 a run page shows; the run's JSON has them all. A large
site has 400,000 tasks' rows on its run pages: each is kept to its name and these."""


def tooltip(level: Level) -> str:
    """A level in one line, for a label's `title`: its name, what it proves and doesn't."""
    text = TEXTS[level]
    return f"{text.title}: proves {text.proves}. Does not prove {text.does_not_prove}."


_LABEL = {
    level: (
        f'<span class="badge evidence-{level}" title="{escape(tooltip(level))}">'
        f"{escape(TEXTS[level].title)}</span>"
    )
    for level in LEVELS
}


_PLAIN = {
    level: f'<span class="badge evidence-{level}">{escape(TEXTS[level].title)}</span>'
    for level in LEVELS
}
"""The labels where the page says what they prove (a run's page, a board's legend and its
table of runs): a `title` on each of 10,000 runs' would add a sixth to a large site."""


@lru_cache(maxsize=64)
def labels(levels: tuple[Level, ...]) -> Markup:
    """The labels of the levels held, in the order pages show them, each with what it
    proves and doesn't in its `title`: a few combinations for every row of a site."""
    held = set(levels)
    return Markup(" ".join([_LABEL[level] for level in LEVELS if level in held]))  # noqa: S704 - ours


@lru_cache(maxsize=64)
def plain_labels(levels: tuple[Level, ...]) -> Markup:
    """The labels without their `title`, for pages that say what they prove beside them."""
    held = set(levels)
    return Markup(" ".join([_PLAIN[level] for level in LEVELS if level in held]))  # noqa: S704 - ours


CHOICES = tuple((level, TEXTS[level].title) for level in LEVELS if level != "self-reported")
"""The board's evidence filter: every level but self-reported, which every run holds."""


def data_levels(levels: Iterable[Level]) -> str:
    """The levels as a row's `data-evidence`, which the pages' filter reads."""
    return " ".join(levels)


@lru_cache(maxsize=64)
def _held_list(levels: tuple[Level, ...], list_id: str) -> str:
    """The levels held, each with what it proves and doesn't, as a definition list."""
    held = set(levels)
    items = "".join(
        f"<dt>{_PLAIN[level]}</dt><dd>Proves {escape(TEXTS[level].proves)}. "
        f"Does not prove {escape(TEXTS[level].does_not_prove)}.</dd>\n"
        for level in LEVELS
        if level in held
    )
    return f'<dl class="evidence" id="{list_id}">\n{items}</dl>\n'


LEGEND = Markup(  # noqa: S704 - constant text, escaped where it comes from TEXTS
    '<section aria-labelledby="evidence-heading">\n'
    '<h2 id="evidence-heading">What the evidence labels prove</h2>\n'
    "<p>Every run is at least self-reported; the service may also have regraded it, and "
    "issued it before it ran. The levels are independent: each says what it proves and "
    "nothing more. An entry's labels are the ones every one of its public runs holds; each "
    "run's page says what its own job showed.</p>\n"
    f"{_held_list(LEVELS, 'evidence-legend')}"
    "</section>\n"
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


def run_section(run: PublishedRun, levels: tuple[Level, ...]) -> str:
    """A run page's Evidence section: the levels it holds, with what each proves and
    doesn't, what the service found when the job was uploaded, and its task digests."""
    missing = [TEXTS[level].title for level in LEVELS if level not in levels]
    not_held = f"<p>It does not hold: {', '.join(missing)}.</p>\n" if missing else ""
    return (
        '<section aria-labelledby="evidence-heading">\n'
        '<h2 id="evidence-heading">Evidence</h2>\n'
        f"{_intro(run)}"
        f"{_held_list(levels, 'run-evidence')}"
        f"{not_held}"
        '<dl class="facts" id="evidence-facts">\n'
        f"<dt>Regrade</dt><dd>{_regrade(run.evidence)}</dd>\n"
        f"<dt>Files agree</dt><dd>{_consistent(run.evidence)}</dd>\n"
        f"<dt>Task files</dt><dd>{_pinned(run.evidence)}</dd>\n"
        "</dl>\n"
        f"{digests_html(tuple(run.task_digests.items()))}"
        "</section>\n\n"
    )


def _intro(run: PublishedRun) -> str:
    if run.evidence is None:
        held = "self-reported and issued" if run.issued else "self-reported"
        return (
            "<p>The run was published before the service kept each run's evidence, so it "
            f"shows only what its record establishes: {held}.</p>\n"
        )
    return (
        "<p>What the service established about the run's job when it was uploaded, and "
        "what that does and doesn't prove.</p>\n"
    )


def _regrade(evidence: RunEvidence | None) -> str:
    if evidence is None:
        return "none recorded: the run was published before the service regraded jobs"
    note = escape(evidence.regrade_note or "no reason was recorded")
    if evidence.regrade == "agreed":
        return (
            "agreed: the tasks' own verifiers, run again by the service on the outputs the "
            "job recorded, gave every graded trial the reward the job records"
        )
    if evidence.regrade == "failed":
        return f"failed: {note}"
    return f"not regradable: {note}"


def _consistent(evidence: RunEvidence | None) -> str:
    if evidence is None:
        return "not recorded"
    if evidence.consistent:
        return (
            "yes: every reward agreed with what its verifier wrote, the totals with the "
            "trials, the times with the run and the trials with the plan"
        )
    return "no: the service recorded that the job's files disagreed with each other"


def _pinned(evidence: RunEvidence | None) -> str:
    if evidence is None:
        return "not recorded"
    if evidence.tasks_pinned:
        return "matched the pins: each task's digest is the one the registry pins for it"
    return (
        "not matched to pins: the registry pins no digests for these tasks, and the run's "
        "board holds every run to the task files of its first run"
    )


@lru_cache(maxsize=1024)
def digests_html(digests: tuple[tuple[str, str], ...]) -> str:
    """The run's task digests, short, folded: the runs of a board share their task files,
    so this is made about once per board."""
    if not digests:
        return (
            "<p>Task digests: not recorded (the run was published before the service kept "
            "them).</p>\n"
        )
    rows = "".join(
        f'<tr><th scope="row">{escape(task)}</th>'
        f"<td><code>{escape(_short(digest))}</code></td></tr>\n"
        for task, digest in sorted(digests)
    )
    return (
        f"<details><summary>Task digests ({len(digests)} task"
        f"{'s' if len(digests) != 1 else ''}, from the job's lock.json)</summary>\n"
        '<table id="digests-table">\n'
        '<thead><tr><th scope="col">Task</th><th scope="col">sha256, its first '
        f"{SHORT_DIGEST} hex digits (the run's JSON has them all)</th></tr></thead>\n"
        f"<tbody>\n{rows}</tbody>\n</table>\n</details>\n"
    )


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:SHORT_DIGEST]
