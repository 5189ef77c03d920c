"""How long a job's files are kept, as pure decisions over a job's dates (docs/retention.md).

- An unpublished job's files are hidden once its publish window has passed (30 days
  after its upload by default): not downloadable, and the job can't be published.
- A deleted job's files stay in the blob store for `deleted_files_retention` (7 days by
  default), unreachable, then are purged.
- A published or withdrawn job keeps its files: its score stands, or stood, on a board,
  and its files are the evidence behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from app.db.models import JobStatus
from app.settings import Settings


@dataclass(frozen=True)
class Policy:
    """The retention periods, from the settings."""

    publish_window: timedelta
    deleted_files_retention: timedelta


def policy_of(settings: Settings) -> Policy:
    """The settings' retention periods."""
    return Policy(settings.publish_window, settings.deleted_files_retention)


def publish_deadline(uploaded_at: datetime, policy: Policy) -> datetime:
    """Until when a job can be published, and its files are shown while private."""
    return uploaded_at + policy.publish_window


def files_hidden(
    status: JobStatus,
    uploaded_at: datetime,
    hidden_at: datetime | None,
    now: datetime,
    policy: Policy,
) -> bool:
    """Whether a private job's files are hidden at `now` (marked so, or past its window,
    since the periodic task may not have run yet)."""
    if status is not JobStatus.PRIVATE:
        return False
    return hidden_at is not None or now >= publish_deadline(uploaded_at, policy)


def purge_due(deleted_at: datetime | None, now: datetime, policy: Policy) -> bool:
    """Whether a deleted job's files are due to leave the blob store."""
    return deleted_at is not None and now >= deleted_at + policy.deleted_files_retention


def hide_before(now: datetime, policy: Policy) -> datetime:
    """Private jobs uploaded before this time are past their window."""
    return now - policy.publish_window


def purge_before(now: datetime, policy: Policy) -> datetime:
    """Jobs deleted before this time have their files purged."""
    return now - policy.deleted_files_retention
