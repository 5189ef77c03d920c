"""The local blob store: blobs as files under a folder, for one machine (or a shared file
system). Each is written to a temporary file and renamed into place.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from app.blobs.protocol import (
    CHUNK_BYTES,
    KEY_PATTERN,
    STALE_TEMP_SECONDS,
    BlobNotFoundError,
    Readable,
    validate_key,
    validate_prefix,
)

TEMP_DIR = ".tmp"


class LocalBlobStore:
    """Blobs as files under a folder: `<root>/<key>`, written through `<root>/.tmp/`.

    The temporary file lives on the same file system as its destination, so `os.replace`
    moves it into place in one atomic step; it is flushed to disk first, so a power cut
    can't leave a blob that exists but is empty.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.temp = root / TEMP_DIR
        self.temp.mkdir(parents=True, exist_ok=True)
        self.sweep_temporary()

    def path(self, key: str) -> Path:
        return self.root / validate_key(key)

    def put(self, key: str, stream: Readable) -> int:
        destination = self.path(key)
        descriptor, name = tempfile.mkstemp(dir=self.temp, prefix="blob-")
        temporary = Path(name)
        try:
            with os.fdopen(descriptor, "wb") as file:
                size = copy_stream(stream, file)
                file.flush()
                os.fsync(file.fileno())
            destination.parent.mkdir(parents=True, exist_ok=True)
            temporary.replace(destination)  # os.replace: atomic on one file system
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        fsync_directory(destination.parent)
        return size

    def open(self, key: str) -> BinaryIO:
        try:
            return self.path(key).open("rb")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise BlobNotFoundError(key) from None

    def delete(self, key: str) -> bool:
        try:
            self.path(key).unlink()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return False
        return True

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def list(self, prefix: str = "") -> Iterator[str]:
        validate_prefix(prefix)
        # Walk only the folder the prefix names, not the whole store.
        folder, _, _ = prefix.rpartition("/")
        start = self.root / folder if folder else self.root
        keys = []
        for directory, subdirectories, files in start.walk():
            subdirectories[:] = [name for name in subdirectories if not name.startswith(".")]
            for name in files:
                key = (directory / name).relative_to(self.root).as_posix()
                if key.startswith(prefix) and KEY_PATTERN.fullmatch(key):
                    keys.append(key)
        yield from sorted(keys)

    def download_url(self, key: str, *, content_disposition: str, content_type: str) -> str | None:
        """A folder has no addresses of its own: the service streams its blobs."""
        if not self.path(key).is_file():
            raise BlobNotFoundError(key)
        return None

    def sweep_temporary(self, older_than: float = STALE_TEMP_SECONDS) -> int:
        """Remove temporary files left by writers that died; return how many."""
        cutoff = time.time() - older_than
        removed = 0
        for leftover in self.temp.iterdir():
            with contextlib.suppress(FileNotFoundError):
                if leftover.stat().st_mtime < cutoff:
                    leftover.unlink()
                    removed += 1
        return removed


def copy_stream(source: Readable, target: BinaryIO) -> int:
    """Copy in fixed chunks, so a blob of any size needs one chunk of memory."""
    size = 0
    while chunk := source.read(CHUNK_BYTES):
        target.write(chunk)
        size += len(chunk)
    return size


def fsync_directory(directory: Path) -> None:
    """Make a rename in this folder durable: the new name is only on disk once it is synced."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
