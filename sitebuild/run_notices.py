"""The notices at the top of a run's page: withdrawn by its owner, taken down by the
maintainers, its files deleted (`sitebuild.run_page` writes the page)."""

from __future__ import annotations

from registry.datarepo.models import PublishedRun
from sitebuild import page as paths
from sitebuild.html import NOTHING, Markup, join, template
from sitebuild.views import time_html


def notice(run: PublishedRun, root: str) -> Markup:
    """What the page says above its facts: the run's status, when it is off the board,
    and that its files were deleted, when they were."""
    return join([_status_notice(run, root), _files_deleted(run)])


_CHANGED_ON = template(" on {at}")
_WITHDRAWN = template(
    '<p class="notice">Withdrawn by its owner{on}. Its score is off the board for good.</p>\n'
)
_TAKEN_DOWN = template(
    '<p class="notice">Taken down by the maintainers{on}, for the reason '
    '<code>{reason}</code> (the <a href="{audit}">audit log</a> has the '
    "note). Its score is off the board.</p>\n"
)


def _status_notice(run: PublishedRun, root: str) -> Markup:
    on = _CHANGED_ON(at=time_html(run.status_changed_at)) if run.status_changed_at else ""
    if run.status == "withdrawn":
        return _WITHDRAWN(
            on=on,
        )
    if run.status == "taken_down":
        return _TAKEN_DOWN(
            on=on,
            reason=run.take_down_reason or "",
            audit=f"{root}{paths.audit()}",
        )
    return NOTHING


_FILES_DELETED = template(
    '<p class="notice" id="files-deleted">Its owner deleted the job, and its files with '
    "it, on {at}: they can no longer be downloaded. {kept} "
    "page keeps what the run recorded.</p>\n"
)


def _files_deleted(run: PublishedRun) -> Markup:
    if run.files_deleted_at is None:
        return NOTHING
    public = run.status == "public"
    kept = "Its score stays on the board as published; this" if public else "This"
    return _FILES_DELETED(
        at=time_html(run.files_deleted_at),
        kept=kept,
    )
