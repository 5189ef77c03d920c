"""sha256 digests: of files and streams in bounded memory, and of JSON values in canonical form.

The canonical form is what the client, the service and the site all quote for a
spec or a manifest, so it is fixed here once: sorted keys, no spaces, UTF-8.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Buffer
from pathlib import Path
from typing import BinaryIO

CHUNK_SIZE = 1 << 20
"""Bytes per read: large enough that hashlib releases the GIL and syscalls are few."""


def canonical_json(value: object) -> bytes:
    """The canonical bytes of a JSON value: sorted keys, compact separators, UTF-8."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def canonical_digest(value: object) -> str:
    """The sha256 (hex) of a JSON value's canonical bytes."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def spec_digest(spec: object) -> str:
    """The digest of an issued spec, as the manifest records it and the service compares it."""
    return canonical_digest(spec)


def sha256_stream(stream: BinaryIO, buffer: bytearray | None = None) -> tuple[int, str]:
    """Hash a binary stream to its end in CHUNK_SIZE reads; return (bytes read, sha256 hex)."""
    buf = buffer if buffer is not None else bytearray(CHUNK_SIZE)
    view = memoryview(buf)
    digest = hashlib.sha256()
    size = 0
    while n := stream.readinto(view):
        digest.update(view[:n])
        size += n
    return size, digest.hexdigest()


def sha256_file(path: Path, buffer: bytearray | None = None) -> tuple[int, str]:
    """Hash a regular file without following a symbolic link; return (size, sha256 hex).

    The size is what was read, not what `stat` said, so it describes the bytes hashed
    even if the file changes meanwhile. A path that is a link raises OSError (ELOOP),
    and one that is not a regular file raises IsADirectoryError or OSError.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb", buffering=0) as stream:
        mode = os.fstat(stream.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(f"{path} is not a regular file")
        return sha256_stream(stream, buffer)  # type: ignore[arg-type] # FileIO is a raw binary stream


class HashingWriter:
    """A write-only stream that passes bytes on to another and keeps their count and sha256."""

    def __init__(self, sink: BinaryIO) -> None:
        self._sink = sink
        self._digest = hashlib.sha256()
        self.size = 0

    def write(self, data: Buffer, /) -> int:
        view = memoryview(data)
        self._sink.write(view)
        self._digest.update(view)
        self.size += view.nbytes
        return view.nbytes

    def flush(self) -> None:
        self._sink.flush()

    def hexdigest(self) -> str:
        return self._digest.hexdigest()
