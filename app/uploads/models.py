"""The typed values of reading an upload: the caps it is held to, and the job it unpacks to."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from hbench.limits import (
    MAX_DEPTH,
    MAX_FILES,
    MAX_NAME_BYTES,
    MAX_PATH_BYTES,
    UNPACKED_MAX_BYTES,
    UPLOAD_MAX_BYTES,
)


@dataclass(frozen=True)
class ArchiveLimits:
    """The caps an upload is held to. The defaults are the service's, from `hbench.limits`."""

    max_sent_bytes: int = UPLOAD_MAX_BYTES
    max_unpacked_bytes: int = UNPACKED_MAX_BYTES
    """The sum of the regular files' sizes."""
    max_stream_bytes: int = 2 * UNPACKED_MAX_BYTES
    """The whole decompressed tar stream: files plus tar's headers and padding. Twice the
    unpacked cap leaves room for 100,000 members' headers and long names, and bounds the
    work a bomb hidden in padding or metadata can cause."""
    max_files: int = MAX_FILES
    max_folders: int = MAX_FILES
    max_depth: int = MAX_DEPTH
    """Path components below the job folder, the file's own name included."""
    max_path_bytes: int = MAX_PATH_BYTES
    """A path below the job folder, in UTF-8 bytes."""
    max_name_bytes: int = MAX_NAME_BYTES
    max_pax_bytes: int = 64 * 1024
    """One PAX header's records: long names and timestamps need a few hundred bytes;
    extended attributes that macOS's tar adds need a few kilobytes."""
    max_global_headers: int = 16
    """PAX global headers carry no member, so nothing else bounds how many come."""


DEFAULT_LIMITS = ArchiveLimits()


class FileDigest(NamedTuple):
    """A file's size and sha256 (hex), as the manifest lists them."""

    size: int
    sha256: str


@dataclass(frozen=True)
class ExtractedJob:
    """A job folder unpacked from an accepted archive."""

    job_name: str
    """The archive's one top-level folder."""
    root: Path
    """Where the job folder was written: `<scratch>/<job_name>`."""
    files: dict[str, FileDigest]
    """Every regular file by its POSIX path below the job folder, as the manifest names it."""
    compressed_bytes: int
    """Bytes of the body as sent."""
    unpacked_bytes: int
    """The sum of the files' sizes."""
