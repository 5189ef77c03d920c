"""The tar stream as it is unpacked: a push parser that writes each member below a job folder.

Decompressed bytes go in, in pieces of any size; regular files come out below
`<scratch>/<job>`, each hashed as it is written. Every check applies before the
bytes it guards are written: a member's type, its path (inside one job folder,
plain, not too long or deep, not a duplicate), and the caps on files, folders and
bytes. All file system calls are relative to the job folder's descriptor.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from dataclasses import dataclass, field
from enum import Enum, auto
from pathlib import Path

from app.uploads.errors import (
    duplicate_name,
    empty,
    link,
    path_too_long,
    special_file,
    too_many,
    trailing_data,
    truncated,
    unpacked_too_large,
    unsafe_path,
)
from app.uploads.models import ArchiveLimits, ExtractedJob, FileDigest
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

_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_UNSAFE_CHARS = frozenset(
    [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))]  # C0 and C1 controls, DEL
    + ["\\", "\u2028", "\u2029"]  # backslash; line and paragraph separators
    + [chr(c) for c in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))]
)
"""Characters no job file needs, that make a name misleading where it is shown: a
backslash is a separator on Windows, controls break lines and logs, and direction
marks can make `evil.sh` read as `hs.live` on the site."""


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
        if self._job is None or not self._files:
            raise empty("the archive holds no files")
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
            raise unsafe_path(name, "is an absolute path")
        bad = _UNSAFE_CHARS.intersection(name)
        if bad:
            shown = ", ".join(f"U+{ord(c):04X}" for c in sorted(bad))
            raise unsafe_path(name, f"has a backslash, control or direction character ({shown})")
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise unsafe_path(name, "has a `..` component, which would climb out of the job folder")
        limits = self._limits
        if any(len(p.encode()) > limits.max_name_bytes for p in parts):
            raise path_too_long(f"{name!r} has a name over {limits.max_name_bytes} bytes")
        if len(parts) - 1 > limits.max_depth:
            raise HbenchError(
                "upload-too-deep",
                f"{name!r} is {len(parts) - 1} folders deep, over the cap of "
                f"{limits.max_depth}; a job folder is never this deep",
            )
        rel = "/".join(parts[1:])
        if len(rel.encode()) > limits.max_path_bytes:
            raise path_too_long(
                f"{name!r} is over {limits.max_path_bytes} bytes below the job folder"
            )
        return parts

    def _job_path(self, name: str, parts: list[str]) -> str:
        """The member's path below the job folder; the first member makes the folder."""
        if self._root_fd is None:
            self._job = parts[0]
            os.mkdir(parts[0], 0o700, dir_fd=self._scratch_fd)
            # Every later name is opened relative to this descriptor, with O_NOFOLLOW
            # on the last component; the archive can create no link to follow anyway.
            self._root_fd = os.open(parts[0], DIR_FLAGS, dir_fd=self._scratch_fd)
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
            raise duplicate_name(name, "appears twice in the archive")
        self._explicit_dirs.add(rel)
        self._make_folders(name, rel, include_self=True)

    def _on_file(self, name: str, parts: list[str], size: int) -> None:
        if not parts:
            raise unsafe_path(name, "has no name")
        if len(parts) == 1:
            raise HbenchError(
                "archive-outside-job",
                f"{name} lies at the top of the archive, outside a job folder; pack the "
                "job's own folder: `tar czf job.tgz -C jobs <job-name>`",
            )
        rel = self._job_path(name, parts)
        if rel in self._kinds:
            raise duplicate_name(name, "appears twice in the archive")
        limits = self._limits
        if len(self._files) >= limits.max_files:
            raise too_many(f"more than {limits.max_files} files")
        if self._unpacked + size > limits.max_unpacked_bytes:
            raise unpacked_too_large(limits.max_unpacked_bytes, "in its files")
        self._make_folders(name, rel, include_self=False)
        self._claim(name, rel, Kind.FILE)
        try:
            fd = os.open(rel, _FILE_FLAGS, 0o600, dir_fd=self._root_fd)
        except FileExistsError:
            # Only a case- or normalisation-insensitive file system gets here: it sees
            # two of the archive's distinct names as one.
            raise duplicate_name(name, "names the same file as another member here") from None
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
                raise duplicate_name(name, f"needs {folder!r} to be a folder, but it is a file")
            self._folders += 1
            if self._folders > self._limits.max_folders:
                raise too_many(f"more than {self._limits.max_folders} folders")
            self._claim(name, folder, Kind.DIR)
            try:
                os.mkdir(folder, 0o700, dir_fd=self._root_fd)
            except FileExistsError:
                raise duplicate_name(name, "names the same folder as another member here") from None

    def _claim(self, name: str, rel: str, kind: Kind) -> None:
        # Two spellings of one name in Unicode (é as one code point or as e + accent;
        # the Kelvin sign and K) look the same on every page that shows the job.
        normal = rel if rel.isascii() else unicodedata.normalize("NFC", rel)
        other = self._normal_forms.setdefault(normal, rel)
        if other != rel:
            raise duplicate_name(name, f"is {other!r} in another Unicode spelling")
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
