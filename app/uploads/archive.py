"""Reading an uploaded job safely: a streamed `.tar.gz` in, one folder of regular files out.

The body is read chunk by chunk and never held whole: each chunk is counted
against the sent cap, inflated in bounded pieces, and parsed as tar by hand
(`app.uploads.tar_format`), so every cap applies before the bytes it guards are
written. Each regular file is written once, hashed as it is written, and its
(size, sha256) kept for the manifest check (`hbench.jobs.manifest.compare`).

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
import hashlib
import os
import shutil
import tempfile
import threading
import unicodedata
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum, auto
from pathlib import Path
from typing import NamedTuple

from app.uploads.tar_format import (
    BLOCK,
    LINK_KINDS,
    META_KINDS,
    SPECIAL_KINDS,
    ZERO_BLOCK,
    Header,
    Kind,
    malformed,
    padding,
    parse_header,
    parse_pax,
)
from hbench.errors import HbenchError
from hbench.limits import (
    MAX_DEPTH,
    MAX_FILES,
    MAX_NAME_BYTES,
    MAX_PATH_BYTES,
    MIB,
    UNPACKED_MAX_BYTES,
    UPLOAD_MAX_BYTES,
)

INFLATE_CHUNK = MIB
"""Most bytes one inflate call may return: decompressed memory stays bounded whatever the ratio."""

_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_GZIP_START = b"\x1f\x8b\x08"  # gzip's magic, then "deflate", its only method
_UNSAFE_CHARS = frozenset(chr(c) for c in range(0x20)) | {"\x7f", "\\"}


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
    scratch_fd = os.open(scratch, _DIR_FLAGS)
    tar = _TarReader(scratch, scratch_fd, limits)
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
                "a job this large can't be uploaded yet: run fewer tasks per job",
            )
        if self._inflate.eof:
            raise _trailing()
        if len(self._head) < len(_GZIP_START):
            self._head += chunk[: len(_GZIP_START) - len(self._head)]
            if not _GZIP_START.startswith(self._head):
                raise _not_gzip("it does not start with gzip's magic bytes")
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
                    raise _trailing()
                return
            data = self._inflate.unconsumed_tail
            # A full piece may leave output inside zlib with no input left: ask again.
            if not data and len(out) < INFLATE_CHUNK:
                return

    def finish(self) -> None:
        if self.sent == 0:
            raise _not_gzip("the body is empty")
        if not self._inflate.eof:
            raise _truncated("the gzip stream ends before its end")


def _not_gzip(why: str) -> HbenchError:
    return HbenchError(
        "upload-not-gzip",
        f"the upload is not a gzip-compressed tar archive: {why}; send a .tar.gz made with "
        "`hbench jobs pack` or `tar czf job.tgz -C jobs <job-name>`",
    )


def _truncated(why: str) -> HbenchError:
    return HbenchError(
        "upload-truncated",
        f"the upload is cut short: {why}; the transfer was interrupted or the archive "
        "was not completely written; pack the job again and re-send it",
    )


def _trailing() -> HbenchError:
    return HbenchError(
        "upload-trailing-data",
        "the upload has data after the end of its archive (a second gzip stream or other "
        "bytes); send one .tar.gz made with `hbench jobs pack`",
    )


class _State(Enum):
    HEADER = auto()
    DATA = auto()
    META = auto()
    SKIP = auto()
    END = auto()


@dataclass
class _OpenFile:
    fd: int
    path: str
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)
    size: int = 0

    def write(self, data: memoryview) -> None:
        self.digest.update(data)
        self.size += len(data)
        while data:
            data = data[os.write(self.fd, data) :]


@dataclass
class _Pending:
    """What PAX and GNU headers said about the member that follows them."""

    long_name: bytes | None = None
    pax: dict[str, bytes] | None = None

    @property
    def empty(self) -> bool:
        return self.long_name is None and self.pax is None


class _TarReader:
    """A push parser: decompressed bytes in, files written below `<scratch>/<job>`."""

    def __init__(self, scratch: Path, scratch_fd: int, limits: ArchiveLimits) -> None:
        self._scratch = scratch
        self._scratch_fd = scratch_fd
        self._limits = limits
        self._state = _State.HEADER
        self._block = bytearray()
        self._remaining = 0
        self._pad = 0
        self._meta_kind = Kind.PAX
        self._meta = bytearray()
        self._pending = _Pending()
        self._file: _OpenFile | None = None
        self._job: str | None = None
        self._root_fd: int | None = None
        self._files: dict[str, FileDigest] = {}
        self._kinds: dict[str, Kind] = {"": Kind.DIR}  # every name made, by its kind
        self._explicit_dirs: set[str] = set()
        self._normal_forms: dict[str, str] = {}
        self._folders = 0
        self._globals = 0
        self._stream_bytes = 0
        self._unpacked = 0
        self._end_zeros = 0

    def feed(self, data: bytes) -> None:
        self._stream_bytes += len(data)
        if self._stream_bytes > self._limits.max_stream_bytes:
            raise _unpacked_too_large(self._limits.max_stream_bytes, "with tar's own headers")
        view = memoryview(data)
        pos, end = 0, len(data)
        while pos < end:
            state = self._state
            if state is _State.DATA:
                pos = self._feed_data(view, pos, end)
            elif state is _State.HEADER:
                pos = self._feed_header(data, view, pos, end)
            elif state is _State.SKIP:
                n = min(self._remaining, end - pos)
                pos += n
                self._skip(self._remaining - n)
            elif state is _State.META:
                pos = self._feed_meta(view, pos, end)
            else:
                # After the end-of-archive blocks, tar pads its last record with zeros.
                if data.count(0, pos, end) != end - pos:
                    raise _trailing()
                self._end_zeros += end - pos
                pos = end

    def _feed_data(self, view: memoryview, pos: int, end: int) -> int:
        n = min(self._remaining, end - pos)
        file = self._file
        assert file is not None  # noqa: S101 - DATA is entered only with a file open
        file.write(view[pos : pos + n])
        self._remaining -= n
        if not self._remaining:
            self._close_file(file)
            self._skip(self._pad)
        return pos + n

    def _feed_header(self, data: bytes, view: memoryview, pos: int, end: int) -> int:
        if not self._block and end - pos >= BLOCK:
            self._on_block(data[pos : pos + BLOCK])
            return pos + BLOCK
        n = min(BLOCK - len(self._block), end - pos)
        self._block += view[pos : pos + n]
        if len(self._block) == BLOCK:
            block = bytes(self._block)
            self._block.clear()
            self._on_block(block)
        return pos + n

    def _feed_meta(self, view: memoryview, pos: int, end: int) -> int:
        n = min(self._remaining, end - pos)
        self._meta += view[pos : pos + n]
        self._remaining -= n
        if not self._remaining:
            self._on_meta(bytes(self._meta))
            self._meta.clear()
            self._skip(self._pad)
        return pos + n

    def finish(self, compressed_bytes: int) -> ExtractedJob:
        if self._state is not _State.END:
            if self._stream_bytes == 0:
                raise _empty("the archive holds nothing")
            raise _truncated("the tar archive ends in the middle of a member or header")
        if self._end_zeros < 2 * BLOCK:
            raise _truncated("the tar archive lacks its end-of-archive blocks")
        if self._job is None or not self._files:
            raise _empty("the archive holds no files")
        return ExtractedJob(
            job_name=self._job,
            root=self._scratch / self._job,
            files=self._files,
            compressed_bytes=compressed_bytes,
            unpacked_bytes=self._unpacked,
        )

    def close(self) -> None:
        """Close what a refusal left open; partial files stay for the caller to remove."""
        if self._file is not None:
            os.close(self._file.fd)
            self._file = None
        if self._root_fd is not None:
            os.close(self._root_fd)
            self._root_fd = None

    def _skip(self, count: int) -> None:
        self._remaining = count
        self._state = _State.SKIP if count else _State.HEADER

    def _on_block(self, block: bytes) -> None:
        if block == ZERO_BLOCK:
            if not self._pending.empty:
                raise malformed("a PAX or GNU long-name header is followed by no member")
            self._state = _State.END
            self._end_zeros = BLOCK
            return
        header = parse_header(block)
        kind = header.kind
        if kind in META_KINDS:
            self._start_meta(header)
        elif kind in LINK_KINDS:
            raise _link(self._display_name(header), kind)
        elif kind in SPECIAL_KINDS:
            raise _special(self._display_name(header), kind, header.typeflag)
        else:
            self._on_member(header)

    def _start_meta(self, header: Header) -> None:
        kind, size = header.kind, header.size
        if kind is Kind.LONG_NAME:
            if self._pending.long_name is not None:
                raise malformed("two GNU long names for one member")
            # The name, a slash, the path below it and a closing NUL.
            cap = self._limits.max_name_bytes + self._limits.max_path_bytes + 2
            if size > cap:
                raise _too_long(f"a GNU long name of {size} bytes")
        elif size > self._limits.max_pax_bytes:
            raise malformed(f"a PAX header of {size} bytes, over {self._limits.max_pax_bytes}")
        elif kind is Kind.PAX and self._pending.pax is not None:
            raise malformed("two PAX headers for one member")
        elif kind is Kind.GLOBAL_PAX:
            self._globals += 1
            if self._globals > self._limits.max_global_headers:
                raise malformed(f"more than {self._limits.max_global_headers} PAX global headers")
        self._meta_kind = kind
        self._remaining = size
        self._pad = padding(size)
        if size:
            self._state = _State.META
        else:
            self._on_meta(b"")
            self._skip(self._pad)

    def _on_meta(self, data: bytes) -> None:
        kind = self._meta_kind
        if kind is Kind.LONG_NAME:
            self._pending.long_name = data.split(b"\x00", 1)[0]
            return
        records = parse_pax(data)
        if "linkpath" in records:
            raise _link(_decode_shown(records.get("path", b"")) or "a member", Kind.SYMLINK)
        if any(key.startswith("GNU.sparse.") for key in records):
            raise _special(_decode_shown(records.get("path", b"")), Kind.SPARSE, b"S")
        if kind is Kind.GLOBAL_PAX:
            if "path" in records or "size" in records:
                raise malformed("a PAX global header sets a path or size for every member")
            return
        self._pending.pax = records

    def _on_member(self, header: Header) -> None:
        pending, self._pending = self._pending, _Pending()
        raw = header.name
        size = header.size
        if pending.long_name is not None:
            raw = pending.long_name
        if pending.pax is not None:
            if "path" in pending.pax:
                if pending.long_name is not None:
                    raise malformed("a member has both a GNU long name and a PAX path")
                raw = pending.pax["path"]
            if "size" in pending.pax:
                size = _pax_size(pending.pax["size"])
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            shown = raw.decode("utf-8", "backslashreplace")
            raise _unsafe(shown, "is not valid UTF-8") from None
        parts = self._split(name)
        # Old tars wrote folders as regular files whose name ends with a slash; GNU tar
        # and Python read them as folders, and so do we, however the name was given.
        if header.kind is Kind.DIR or name.endswith("/"):
            if size:
                raise malformed(f"the folder {name!r} has {size} bytes of data")
            self._on_folder(name, parts)
        else:
            self._on_file(name, parts, size)

    def _split(self, name: str) -> list[str]:
        """The member's path components, checked; `.` and empty components dropped."""
        if name.startswith("/"):
            raise _unsafe(name, "is an absolute path")
        bad = _UNSAFE_CHARS.intersection(name)
        if bad:
            raise _unsafe(name, "has a backslash or a control character in its name")
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise _unsafe(name, "has a `..` component, which would climb out of the job folder")
        limits = self._limits
        if any(len(p.encode()) > limits.max_name_bytes for p in parts):
            raise _too_long(f"{name!r} has a name over {limits.max_name_bytes} bytes")
        if len(parts) - 1 > limits.max_depth:
            raise HbenchError(
                "upload-too-deep",
                f"{name!r} is {len(parts) - 1} folders deep, over the cap of "
                f"{limits.max_depth}; a job folder is never this deep",
            )
        rel = "/".join(parts[1:])
        if len(rel.encode()) > limits.max_path_bytes:
            raise _too_long(f"{name!r} is over {limits.max_path_bytes} bytes below the job folder")
        return parts

    def _job_path(self, name: str, parts: list[str]) -> str:
        """The member's path below the job folder; the first member makes the folder."""
        if self._root_fd is None:
            self._job = parts[0]
            os.mkdir(parts[0], 0o700, dir_fd=self._scratch_fd)
            # Every later name is opened relative to this descriptor, with O_NOFOLLOW
            # on the last component; the archive can create no link to follow anyway.
            self._root_fd = os.open(parts[0], _DIR_FLAGS, dir_fd=self._scratch_fd)
        elif parts[0] != self._job:
            raise HbenchError(
                "archive-several-jobs",
                f"the archive holds {parts[0]!r} beside the job folder {self._job!r}; "
                "upload one job per archive: `tar czf job.tgz -C jobs <job-name>`",
            )
        return "/".join(parts[1:])

    def _on_folder(self, name: str, parts: list[str]) -> None:
        if not parts:  # "./": the folder the archive was made from
            return
        rel = self._job_path(name, parts)
        if rel in self._explicit_dirs or self._kinds.get(rel) is Kind.FILE:
            raise _duplicate(name, "appears twice in the archive")
        self._explicit_dirs.add(rel)
        self._make_folders(name, rel, include_self=True)

    def _on_file(self, name: str, parts: list[str], size: int) -> None:
        if not parts:
            raise _unsafe(name, "has no name")
        if len(parts) == 1:
            raise HbenchError(
                "archive-outside-job",
                f"{name} lies at the top of the archive, outside a job folder; pack the "
                "job's own folder: `tar czf job.tgz -C jobs <job-name>`",
            )
        rel = self._job_path(name, parts)
        if rel in self._kinds:
            raise _duplicate(name, "appears twice in the archive")
        limits = self._limits
        if len(self._files) >= limits.max_files:
            raise _too_many(f"more than {limits.max_files} files")
        if self._unpacked + size > limits.max_unpacked_bytes:
            raise _unpacked_too_large(limits.max_unpacked_bytes, "in its files")
        self._make_folders(name, rel, include_self=False)
        self._claim(name, rel, Kind.FILE)
        try:
            fd = os.open(rel, _FILE_FLAGS, 0o600, dir_fd=self._root_fd)
        except FileExistsError:
            # Only a case- or normalisation-insensitive file system gets here: it sees
            # two of the archive's distinct names as one.
            raise _duplicate(name, "names the same file as another member here") from None
        self._unpacked += size
        file = _OpenFile(fd=fd, path=rel)
        if size:
            self._file = file
            self._remaining = size
            self._pad = padding(size)
            self._state = _State.DATA
        else:
            self._close_file(file)

    def _make_folders(self, name: str, rel: str, *, include_self: bool) -> None:
        parts = rel.split("/")
        stop = len(parts) if include_self else len(parts) - 1
        for i in range(1, stop + 1):
            folder = "/".join(parts[:i])
            kind = self._kinds.get(folder)
            if kind is Kind.DIR:
                continue
            if kind is Kind.FILE:
                raise _duplicate(name, f"needs {folder!r} to be a folder, but it is a file")
            self._folders += 1
            if self._folders > self._limits.max_folders:
                raise _too_many(f"more than {self._limits.max_folders} folders")
            self._claim(name, folder, Kind.DIR)
            try:
                os.mkdir(folder, 0o700, dir_fd=self._root_fd)
            except FileExistsError:
                raise _duplicate(name, "names the same folder as another member here") from None

    def _claim(self, name: str, rel: str, kind: Kind) -> None:
        # Two spellings of one name in Unicode (é as one code point or as e + accent)
        # look the same on every page that shows the job: refuse the second.
        if not rel.isascii():
            normal = unicodedata.normalize("NFC", rel)
            other = self._normal_forms.setdefault(normal, rel)
            if other != rel:
                raise _duplicate(name, f"is {other!r} in another Unicode normalisation")
        self._kinds[rel] = kind

    def _close_file(self, file: _OpenFile) -> None:
        self._file = None
        os.close(file.fd)
        self._files[file.path] = FileDigest(file.size, file.digest.hexdigest())

    def _display_name(self, header: Header) -> str:
        pax_path = self._pending.pax.get("path") if self._pending.pax else None
        return _decode_shown(pax_path or self._pending.long_name or header.name)


def _pax_size(value: bytes) -> int:
    if not value.isdigit():
        raise malformed("a PAX size is not a decimal number")
    return int(value)


def _decode_shown(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")[:300]


def _unsafe(name: str, why: str) -> HbenchError:
    return HbenchError(
        "archive-unsafe-path",
        f"{name!r} {why}; a job archive holds only plain relative paths inside its job folder",
        path=name,
    )


def _too_long(what: str) -> HbenchError:
    return HbenchError(
        "archive-path-too-long", f"{what}; shorten the names of the job's files and folders"
    )


def _link(name: str, kind: Kind) -> HbenchError:
    return HbenchError(
        "archive-link",
        f"{name} is {kind.value}; a job archive holds only folders and regular files: "
        "replace the link with a copy of the file, then seal and pack the job again",
        path=name,
    )


def _special(name: str, kind: Kind, typeflag: bytes) -> HbenchError:
    what = kind.value if kind is not Kind.OTHER else f"{kind.value} (type {typeflag!r})"
    return HbenchError(
        "archive-special-file",
        f"{name} is {what}; a job archive holds only folders and regular files: "
        "pack the job with `hbench jobs pack`",
        path=name,
    )


def _duplicate(name: str, why: str) -> HbenchError:
    return HbenchError(
        "archive-duplicate-name",
        f"{name!r} {why}; each name may appear once: pack the job with `hbench jobs pack`",
        path=name,
    )


def _too_many(what: str) -> HbenchError:
    return HbenchError(
        "upload-too-many-files",
        f"the archive holds {what}, over the cap for one job; run fewer tasks per job",
    )


def _unpacked_too_large(cap: int, where: str) -> HbenchError:
    return HbenchError(
        "upload-unpacked-too-large",
        f"the archive unpacks to more than {cap / MIB:.0f} MiB {where}, over the cap; "
        "a job this large can't be uploaded yet: run fewer tasks per job",
    )


def _empty(why: str) -> HbenchError:
    return HbenchError(
        "archive-empty",
        f"{why}; pack the job's own folder: `tar czf job.tgz -C jobs <job-name>`",
    )
