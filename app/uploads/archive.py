"""Reading an uploaded job safely: a streamed `.tar.gz` in, one folder of regular files out.

The body is read chunk by chunk and never held whole: each chunk is counted
against the sent cap, inflated in bounded pieces, and parsed as tar by hand
(`app.uploads.tar_format`, `app.uploads.tar_reader`), so every cap applies before
the bytes it guards are written. Each regular file is written once, hashed as it is written, and its
(size, sha256) kept for the manifest check (`hbench.jobs.verification.compare`).

The server does not unpack: it spools the body as sent to a file (`spool_async`),
refusing there what the first bytes and the sent cap already show, and an upload
worker unpacks it (`SpooledBody.unpack`), so inflating and parsing never hold the
server's interpreter while other requests wait.

Anything a job folder can't hold is refused with its rule code: links, devices
and other special members, absolute or `..` paths, duplicates, a second job
folder, files beside the job folder, and bodies that are not one complete gzip
stream of one complete tar. Run it inside `scratch_folder()`, which removes
whatever a refused upload left.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import shutil
import tempfile
import threading
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from app.uploads.errors import not_gzip, too_large, trailing_data, truncated
from app.uploads.job_folder import DIR_FLAGS
from app.uploads.models import DEFAULT_LIMITS, ArchiveLimits, ExtractedJob, FileDigest
from app.uploads.tar_reader import TarReader
from hbench.errors import HbenchError
from hbench.limits import MIB

__all__ = [
    "DEFAULT_LIMITS",
    "ArchiveLimits",
    "ExtractedJob",
    "FileDigest",
    "SpooledBody",
    "extract",
    "scratch_folder",
    "spool",
    "spool_async",
]

INFLATE_CHUNK = MIB
"""Most bytes one inflate call may return: decompressed memory stays bounded whatever the ratio."""
SPOOL_CHUNK = MIB
"""Bytes an upload worker reads of a spooled body at a time."""
SPOOLED_NAME = "sent.tar.gz"
UNPACKED_NAME = "unpacked"
"""A spooled upload's file and the folder it is unpacked into, inside its scratch folder."""

_GZIP_START = b"\x1f\x8b\x08"  # gzip's magic, then "deflate", its only method


@contextlib.contextmanager
def scratch_folder(parent: Path | None = None) -> Iterator[Path]:
    """A fresh, private (0700) folder for one upload, removed with all it holds when the block ends.

    It is removed on success too: store or move what you keep inside the block.
    Removal never follows links (`shutil.rmtree` works on file descriptors).
    """
    path = Path(tempfile.mkdtemp(prefix="hbench-upload-", dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def extract(
    chunks: Iterable[bytes], scratch: Path, limits: ArchiveLimits = DEFAULT_LIMITS
) -> ExtractedJob:
    """Unpack a `.tar.gz` body, given as byte chunks, into the empty folder `scratch`.

    Reads no further than the first chunk past a cap. Raises `HbenchError` with the
    refusal's rule code; what was written until then stays in `scratch`, for
    `scratch_folder()` to remove.
    """
    with os.scandir(scratch) as entries:
        if next(entries, None) is not None:
            raise ValueError(f"{scratch} must be an empty folder")
    gunzip = _Gunzip(limits.max_sent_bytes)
    scratch_fd = os.open(scratch, DIR_FLAGS)
    tar = TarReader(scratch, scratch_fd, limits)
    try:
        for chunk in chunks:
            for piece in gunzip.feed(chunk):
                tar.feed(piece)
        gunzip.finish()
        return tar.finish(compressed_bytes=gunzip.sent.count)
    finally:
        tar.close()
        os.close(scratch_fd)


@dataclass(frozen=True)
class SpooledBody:
    """An upload's body as it was sent, in a file of its scratch folder, not yet unpacked:
    what the server hands its upload workers, which unpack it (`unpack`)."""

    body: Path
    """The `.tar.gz` as sent."""
    target: Path
    """Where it is unpacked: a folder not yet made, inside the same scratch folder."""
    limits: ArchiveLimits

    def unpack(self) -> ExtractedJob:
        """`extract` the body into `target`, made here, empty and private."""
        self.target.mkdir(mode=0o700)
        with self.body.open("rb") as stream:
            return extract(iter(partial(stream.read, SPOOL_CHUNK), b""), self.target, self.limits)


def spool(chunks: Iterable[bytes], scratch: Path, limits: ArchiveLimits) -> SpooledBody:
    """Write a body, chunk by chunk, to a new file in the empty folder `scratch`, for an
    upload worker to unpack. What can be told before unpacking is refused here, reading no
    further: a body past the sent cap (`upload-too-large`, no byte past the chunk that
    crossed it written), one that does not start as gzip (`upload-not-gzip`), an empty one.
    """
    body = scratch / SPOOLED_NAME
    sent = _Sent(limits.max_sent_bytes)
    fd = os.open(body, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        for chunk in chunks:
            sent.take(chunk)
            out.write(chunk)
    sent.finish()
    return SpooledBody(body, scratch / UNPACKED_NAME, limits)


async def spool_async(
    chunks: AsyncIterable[bytes], scratch: Path, limits: ArchiveLimits = DEFAULT_LIMITS
) -> SpooledBody:
    """`spool` over an async body (such as Starlette's `request.stream()`).

    The writing runs in a worker thread, pulling one chunk at a time from the event
    loop, so the loop stays free and nothing is read ahead of the writer. If the
    caller is cancelled, the worker stops at its next chunk and is awaited before
    the cancellation goes on, so the scratch folder can be removed safely.
    """
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    pulled = _pull_from_loop(aiter(chunks), loop, stop)
    worker = asyncio.ensure_future(asyncio.to_thread(spool, pulled, scratch, limits))
    try:
        return await asyncio.shield(worker)
    except asyncio.CancelledError:
        stop.set()
        with contextlib.suppress(BaseException):
            await worker
        raise


class _CallerGoneError(Exception):
    """The awaiting side was cancelled: the worker thread stops reading."""


def _pull_from_loop(
    chunks: AsyncIterator[bytes], loop: asyncio.AbstractEventLoop, stop: threading.Event
) -> Iterator[bytes]:
    while True:
        future = asyncio.run_coroutine_threadsafe(_next_or_none(chunks), loop)
        while True:
            # Poll so a worker whose caller was cancelled never waits on a loop
            # that will not answer.
            if stop.is_set():
                future.cancel()
                raise _CallerGoneError
            try:
                chunk = future.result(timeout=0.2)
                break
            except concurrent.futures.TimeoutError:
                continue
        if chunk is None:
            return
        yield chunk


async def _next_or_none(chunks: AsyncIterator[bytes]) -> bytes | None:
    return await anext(chunks, None)


class _Sent:
    """A body's bytes as they arrive: counted against the sent cap (`upload-too-large`),
    and their start held to gzip's (`upload-not-gzip`, also for an empty body)."""

    def __init__(self, max_sent: int) -> None:
        self.count = 0
        self._max_sent = max_sent
        self._head = b""

    def take(self, chunk: bytes) -> None:
        self.count += len(chunk)
        if self.count > self._max_sent:
            raise too_large(self._max_sent)
        if len(self._head) < len(_GZIP_START):
            self._head += chunk[: len(_GZIP_START) - len(self._head)]
            if not _GZIP_START.startswith(self._head):
                raise not_gzip("it does not start with gzip's magic bytes")

    def finish(self) -> None:
        if self.count == 0:
            raise not_gzip("the body is empty")


class _Gunzip:
    """One gzip member, inflated in bounded pieces, with the sent bytes counted and capped."""

    def __init__(self, max_sent: int) -> None:
        self.sent = _Sent(max_sent)
        self._inflate = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        if not chunk:
            return
        self.sent.take(chunk)
        if self._inflate.eof:
            raise trailing_data()
        data = chunk
        while True:
            try:
                out = self._inflate.decompress(data, INFLATE_CHUNK)
            except zlib.error as exc:
                raise HbenchError(
                    "upload-corrupt",
                    f"the gzip stream is damaged ({exc}); pack the job again and re-send it",
                ) from None
            if out:
                yield out
            if self._inflate.eof:
                if self._inflate.unused_data:
                    raise trailing_data()
                return
            data = self._inflate.unconsumed_tail
            # A full piece may leave output inside zlib with no input left: ask again.
            if not data and len(out) < INFLATE_CHUNK:
                return

    def finish(self) -> None:
        self.sent.finish()
        if not self._inflate.eof:
            raise truncated("the gzip stream ends before its end")
