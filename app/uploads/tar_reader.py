"""The tar stream as it is unpacked: a push parser that writes each member below a job folder.

Decompressed bytes go in, in pieces of any size; regular files come out below
`<scratch>/<job>`, each hashed as it is written. Every check applies before the
bytes it guards are written: a member's type, its path (inside one job folder,
plain, not too long or deep, not a duplicate), and the caps on files, folders and
bytes. All file system calls are relative to the job folder's descriptor.

The member's path checks, its folders and files are `app.uploads.job_folder`'s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum, auto
from pathlib import Path

from app.uploads.errors import (
    empty,
    link,
    path_too_long,
    special_file,
    trailing_data,
    truncated,
    unpacked_too_large,
    unsafe_path,
)
from app.uploads.job_folder import JobFolder, OpenFile
from app.uploads.models import ArchiveLimits, ExtractedJob
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


class _State(Enum):
    HEADER = auto()
    DATA = auto()
    META = auto()
    SKIP = auto()
    END = auto()


@dataclass
class _Pending:
    """What PAX and GNU headers said about the member that follows them."""

    long_name: bytes | None = None
    pax: dict[str, bytes] | None = None

    @property
    def empty(self) -> bool:
        return self.long_name is None and self.pax is None


class TarReader:
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
        self._file: OpenFile | None = None
        self._folder = JobFolder(scratch_fd, limits)
        self._globals = 0
        self._stream_bytes = 0
        self._end_zeros = 0

    def feed(self, data: bytes) -> None:
        self._stream_bytes += len(data)
        if self._stream_bytes > self._limits.max_stream_bytes:
            raise unpacked_too_large(self._limits.max_stream_bytes, "with tar's own headers")
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
                    raise trailing_data()
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
                raise empty("the archive holds nothing")
            raise truncated("the tar archive ends in the middle of a member or header")
        if self._end_zeros < 2 * BLOCK:
            raise truncated("the tar archive lacks its end-of-archive blocks")
        job = self._folder.job
        if job is None or not self._folder.files:
            raise empty("the archive holds no files")
        return ExtractedJob(
            job_name=job,
            root=self._scratch / job,
            files=self._folder.files,
            compressed_bytes=compressed_bytes,
            unpacked_bytes=self._folder.unpacked,
        )

    def close(self) -> None:
        """Close what a refusal left open; partial files stay for the caller to remove."""
        if self._file is not None:
            os.close(self._file.fd)
            self._file = None
        self._folder.close()

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
            raise link(self._display_name(header), kind)
        elif kind in SPECIAL_KINDS:
            raise special_file(self._display_name(header), kind, header.typeflag)
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
                raise path_too_long(f"a GNU long name of {size} bytes")
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
            raise link(_decode_shown(records.get("path", b"")) or "a member", Kind.SYMLINK)
        if any(key.startswith("GNU.sparse.") for key in records):
            raise special_file(_decode_shown(records.get("path", b"")), Kind.SPARSE, b"S")
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
            raise unsafe_path(shown, "is not valid UTF-8") from None
        parts = self._folder.split(name)
        # Old tars wrote folders as regular files whose name ends with a slash; GNU tar
        # and Python read them as folders, and so do we, however the name was given.
        if header.kind is Kind.DIR or name.endswith("/"):
            if size:
                raise malformed(f"the folder {name!r} has {size} bytes of data")
            self._folder.on_folder(name, parts)
        else:
            self._on_file(name, parts, size)

    def _on_file(self, name: str, parts: list[str], size: int) -> None:
        file = self._folder.open_file(name, parts, size)
        if size:
            self._file = file
            self._remaining = size
            self._pad = padding(size)
            self._state = _State.DATA
        else:
            self._close_file(file)

    def _close_file(self, file: OpenFile) -> None:
        self._file = None
        self._folder.close_file(file)

    def _display_name(self, header: Header) -> str:
        pax_path = self._pending.pax.get("path") if self._pending.pax else None
        return _decode_shown(pax_path or self._pending.long_name or header.name)


def _pax_size(value: bytes) -> int:
    if not value.isdigit():
        raise malformed("a PAX size is not a decimal number")
    return int(value)


def _decode_shown(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")[:300]
