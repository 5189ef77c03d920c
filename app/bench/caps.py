"""The caps one job is held to: its board's, when the upload is an issued run's, else the
service's defaults; never more than the service's ceilings.

A board's `uploadMaxBytes` and `unpackedMaxBytes` (docs/registry.md) apply only where the
board is known before a byte is read, which is an issued run's upload: any other job's
board is found from its files, after the caps had to guard their unpacking.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.bench.uploader import Uploader
from app.settings import Settings
from app.uploads.models import ArchiveLimits
from registry.loader import Registry


@dataclass(frozen=True)
class JobCaps:
    """The most a job may be as sent (whole, across its parts) and once unpacked."""

    sent: int
    unpacked: int
    board: str | None = None
    """The board whose policy set them; None for the service's defaults."""

    def limits(self, *, request_max: int | None = None) -> ArchiveLimits:
        """The archive reader's caps, with what one request may send when it is one."""
        sent = self.sent if request_max is None else min(self.sent, request_max)
        return ArchiveLimits(
            max_sent_bytes=sent,
            max_unpacked_bytes=self.unpacked,
            max_stream_bytes=2 * self.unpacked,
        )


def job_caps(settings: Settings, registry: Registry, uploader: Uploader) -> JobCaps:
    """The caps for the uploader's job."""
    issued = uploader.issued
    board = registry.boards.get(issued.board) if issued is not None else None
    sent, unpacked = settings.upload_max_bytes, settings.unpacked_max_bytes
    if board is not None and board.upload_max_bytes is not None:
        sent = board.upload_max_bytes
    if board is not None and board.unpacked_max_bytes is not None:
        unpacked = board.unpacked_max_bytes
    return JobCaps(
        sent=min(sent, settings.job_max_bytes),
        unpacked=min(unpacked, settings.job_unpacked_max_bytes),
        board=board.slug if board is not None else None,
    )
