"""The blob store: job archives and their files, behind a narrow interface.

`BlobStore` is what the service needs of any store (a local folder now, S3-compatible
object storage at scale). A blob is written whole or not at all: readers never see half
a file, whatever happens to the process while it writes.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

CHUNK_BYTES = 1024 * 1024
MAX_KEY_LENGTH = 512
TEMP_DIR = ".tmp"
# A temporary file older than this was left by a writer that died mid-blob.
STALE_TEMP_SECONDS = 3600.0

# Keys are paths of plain names: no empty, `.` or `..` segment, no leading dot (which also
# keeps `.tmp` out of reach), no backslash or control character. S3 accepts all of these;
# we don't, so a key means the same object in every store.
_SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9._=+@-]*"
KEY_PATTERN = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT})*")
PREFIX_PATTERN = re.compile(rf"(?:{_SEGMENT}/)*(?:[A-Za-z0-9_][A-Za-z0-9._=+@-]*)?")


class Readable(Protocol):
    """Anything with `read(n)`: an open file, a spooled upload, a decompressing stream."""

    def read(self, size: int = -1, /) -> bytes: ...


class BlobNotFoundError(LookupError):
    """No blob has this key."""


class InvalidBlobKeyError(ValueError):
    """A key that could escape the store or mean different things in different stores.

    Keys are made by the service, never taken from a request, so this is a bug, not a
    refusal, and it carries no rule code.
    """


class BlobStore(Protocol):
    """Where blobs live. Keys are `/`-separated names, as `validate_key` allows."""

    def put(self, key: str, stream: Readable) -> int:
        """Store the stream's bytes under `key`, replacing any blob there; return the size.

        The blob appears whole or not at all: a failure or crash leaves the key as it was.
        """
        ...

    def open(self, key: str) -> BinaryIO:
        """Open a blob for reading; raise `BlobNotFoundError` if there is none."""
        ...

    def delete(self, key: str) -> bool:
        """Remove a blob; return whether there was one."""
        ...

    def exists(self, key: str) -> bool: ...

    def list(self, prefix: str = "") -> Iterator[str]:
        """The keys that start with `prefix`, in sorted order."""
        ...


def validate_key(key: str) -> str:
    """Return the key if it is safe to use, else raise `InvalidBlobKeyError`."""
    if len(key) > MAX_KEY_LENGTH or not KEY_PATTERN.fullmatch(key):
        raise InvalidBlobKeyError(f"invalid blob key {key!r}")
    return key


def validate_prefix(prefix: str) -> str:
    """Return the prefix if it is a key's start made of whole or partial safe names."""
    if len(prefix) > MAX_KEY_LENGTH or not PREFIX_PATTERN.fullmatch(prefix):
        raise InvalidBlobKeyError(f"invalid blob key prefix {prefix!r}")
    return prefix


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
