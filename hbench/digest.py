"""sha256 digests: of files and streams in bounded memory, and of JSON values in canonical form.

The canonical form is what the client, the service and the site all quote for a
spec or a manifest, so it is fixed here once: sorted keys, no spaces, UTF-8.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
from collections.abc import Buffer, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
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


def sha256_stream(
    stream: io.RawIOBase | io.BufferedIOBase, buffer: bytearray | None = None
) -> tuple[int, str]:
    """Hash a binary stream to its end in CHUNK_SIZE reads; return (bytes read, sha256 hex)."""
    buf = buffer if buffer is not None else bytearray(CHUNK_SIZE)
    view = memoryview(buf)
    digest = hashlib.sha256()
    size = 0
    while n := stream.readinto(view):
        digest.update(view[:n])
        size += n
    return size, digest.hexdigest()


def sha256_file(path: str | Path, buffer: bytearray | None = None) -> tuple[int, str]:
    """Hash a regular file without following a symbolic link; return (size, sha256 hex).

    Reads the size `fstat` gives when the file is opened, so a small file costs one
    read; the size returned is what was read, should the file shrink meanwhile. A
    link raises OSError (ELOOP); anything but a regular file raises OSError.
    """
    view = memoryview(buffer if buffer is not None else bytearray(CHUNK_SIZE))
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        digest = hashlib.sha256()
        size, left = 0, st.st_size
        while left > 0:
            n = os.readv(fd, [view[: min(left, len(view))]])
            if n == 0:
                break
            digest.update(view[:n])
            size, left = size + n, left - n
        return size, digest.hexdigest()
    finally:
        os.close(fd)


BATCH_FILES = 64
BATCH_BYTES = 16 * CHUNK_SIZE
"""A batch of files hashed by one thread: small files are grouped so the pool's
per-task overhead stays small next to the hashing, big ones go alone."""


def sha256_files(
    root: Path,
    files: Sequence[tuple[str, int]],
    *,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
) -> dict[str, tuple[int, str]]:
    """Hash many files below `root` on a pool of threads; map each path to (size, sha256 hex).

    `files` holds (relative path, expected size) pairs; the size only shapes the batches.
    hashlib and file reads release the GIL on large buffers, so threads hash on every
    core while memory stays at one buffer per thread, whatever the files' sizes.
    `progress`, if given, is called in the calling thread with the bytes hashed since
    its last call.
    """
    threads = workers or min(8, os.cpu_count() or 1)
    observed: dict[str, tuple[int, str]] = {}
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sha256") as pool:
        for batch in pool.map(partial(_hash_batch, os.fspath(root)), _batches(files)):
            for path, size, hexdigest in batch:
                observed[path] = (size, hexdigest)
            if progress is not None:
                progress(sum(size for _, size, _ in batch))
    return observed


def _batches(files: Sequence[tuple[str, int]]) -> Iterator[list[str]]:
    batch: list[str] = []
    batch_bytes = 0
    for path, size in files:
        if batch and (len(batch) >= BATCH_FILES or batch_bytes + size > BATCH_BYTES):
            yield batch
            batch, batch_bytes = [], 0
        batch.append(path)
        batch_bytes += size
    if batch:
        yield batch


def _hash_batch(root: str, paths: list[str]) -> list[tuple[str, int, str]]:
    buffer = bytearray(CHUNK_SIZE)
    # Plain string joins: building a Path per file costs more than hashing a small one.
    return [(path, *sha256_file(f"{root}/{path}", buffer)) for path in paths]


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
