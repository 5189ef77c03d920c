"""What the service needs of any blob store, and the key rules every store shares.

A blob is written whole or not at all: readers never see half a file, whatever happens to
the process while it writes. Keys are made by the service and mean the same object in
every store (`validate_key`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO, Protocol

CHUNK_BYTES = 1024 * 1024
MAX_KEY_LENGTH = 512
# A store's temporary state older than this was left by a writer that died mid-blob.
STALE_TEMP_SECONDS = 3600.0

# Keys are paths of plain names: no empty, `.` or `..` segment, no leading dot (which also
# keeps the local store's `.tmp` out of reach), no backslash or control character. S3
# accepts all of these; we don't, so a key means the same object in every store.
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

    def download_url(self, key: str, *, content_disposition: str, content_type: str) -> str | None:
        """A short-lived address a client can fetch the blob from itself, served with these
        headers; None when the store has no such addresses (the service streams the blob).
        Raise `BlobNotFoundError` if there is no blob."""
        ...

    def sweep_temporary(self, older_than: float = STALE_TEMP_SECONDS) -> int:
        """Remove what writers that died mid-blob left behind; return how many."""
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


def read_full(stream: Readable, size: int) -> bytes:
    """Up to `size` bytes, fewer only at the end: a stream may answer a read with less."""
    first = stream.read(size)
    if len(first) == size or not first:
        return first
    pieces = [first]
    left = size - len(first)
    while left > 0 and (piece := stream.read(left)):
        pieces.append(piece)
        left -= len(piece)
    return b"".join(pieces)
