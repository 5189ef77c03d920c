"""Reading an uploaded job safely: a streamed `.tar.gz` in, one folder of regular files out.

The body is read chunk by chunk and never held whole: each chunk is counted
against the sent cap, inflated in bounded pieces, and parsed as tar by hand
(`app.uploads.tar_format`, `app.uploads.tar_reader`), so every cap applies before
the bytes it guards are written. Each regular file is written once, hashed as it is written, and its
(size, sha256) kept for the manifest check (`hbench.jobs.verification.compare`).

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
from pathlib import Path

from app.uploads.errors import not_gzip, trailing_data, truncated
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
    "extract",
    "extract_async",
    "scratch_folder",
]

INFLATE_CHUNK = MIB
"""Most bytes one inflate call may return: decompressed memory stays bounded whatever the ratio."""

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
        return tar.finish(compressed_bytes=gunzip.sent)
    finally:
        tar.close()
        os.close(scratch_fd)


async def extract_async(
    chunks: AsyncIterable[bytes], scratch: Path, limits: ArchiveLimits = DEFAULT_LIMITS
) -> ExtractedJob:
    """`extract` over an async body (such as Starlette's `request.stream()`).

    The work runs in a worker thread, pulling one chunk at a time from the event
    loop, so the loop stays free and nothing is read ahead of the reader. If the
    caller is cancelled, the worker stops at its next chunk and is awaited before
    the cancellation goes on, so the scratch folder can be removed safely.
    """
    loop = asyncio.get_running_loop()
    stop = threading.Event()
    pulled = _pull_from_loop(aiter(chunks), loop, stop)
    worker = asyncio.ensure_future(asyncio.to_thread(extract, pulled, scratch, limits))
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


class _Gunzip:
    """One gzip member, inflated in bounded pieces, with the sent bytes counted and capped."""

    def __init__(self, max_sent: int) -> None:
        self.sent = 0
        self._max_sent = max_sent
        self._head = b""
        self._inflate = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        if not chunk:
            return
        self.sent += len(chunk)
        if self.sent > self._max_sent:
            raise HbenchError(
                "upload-too-large",
                f"the upload is over the {self._max_sent / MIB:.0f} MiB cap on what is sent; "
                "send a larger job in parts (`hbench jobs upload` does), up to its board's "
                "cap; past that, run fewer tasks per job",
            )
        if self._inflate.eof:
            raise trailing_data()
        if len(self._head) < len(_GZIP_START):
            self._head += chunk[: len(_GZIP_START) - len(self._head)]
            if not _GZIP_START.startswith(self._head):
                raise not_gzip("it does not start with gzip's magic bytes")
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
        if self.sent == 0:
            raise not_gzip("the body is empty")
        if not self._inflate.eof:
            raise truncated("the gzip stream ends before its end")
